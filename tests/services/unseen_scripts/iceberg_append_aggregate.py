"""Iceberg lakehouse table: new orders appended with format("iceberg"), the table read back
and aggregated, the aggregate overwritten into a second Iceberg table."""
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

source = sys.argv[1]
spark = SparkSession.builder.getOrCreate()

orders = (spark.read.json(source)
          .select("order_id", F.col("customer.id").alias("customer_id"), "amount", "day"))
orders.write.format("iceberg").mode("append").save("shop.orders")

table = spark.read.format("iceberg").load("shop.orders")
totals = (table.groupBy("customer_id")
          .agg(F.count("*").alias("orders"), F.round(F.sum("amount"), 2).alias("total")))
totals.write.format("iceberg").mode("overwrite").save("shop.customer_totals")
for row in spark.read.format("iceberg").load("shop.customer_totals").orderBy(
        "customer_id").collect():
    print("OUT", row.customer_id, row.orders, row.total)
