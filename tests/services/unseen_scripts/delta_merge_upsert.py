"""Lakehouse upsert: the day's order changes merged into a partitioned Delta table with
whenMatchedUpdate (newer rows only) and whenNotMatchedInsert; the first run creates it."""
import sys

from delta.tables import DeltaTable
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

source, target = sys.argv[1], sys.argv[2]
spark = (SparkSession.builder.appName("orders-upsert")
         .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
         .config("spark.sql.catalog.spark_catalog",
                 "org.apache.spark.sql.delta.catalog.DeltaCatalog")
         .getOrCreate())

changes = (spark.read.json(source)
           .select("order_id", F.col("customer.id").alias("customer_id"),
                   F.col("customer.address.country").alias("country"), "amount", "status",
                   F.col("version").cast("int").alias("version")))

if DeltaTable.isDeltaTable(spark, target):
    table = DeltaTable.forPath(spark, target)
    (table.alias("t")
     .merge(changes.alias("s"), "t.order_id = s.order_id")
     .whenMatchedUpdate(condition="s.version > t.version",
                        set={"amount": "s.amount", "status": "s.status", "version": "s.version"})
     .whenNotMatchedInsert(values={"order_id": "s.order_id", "customer_id": "s.customer_id",
                                   "country": "s.country", "amount": "s.amount",
                                   "status": "s.status", "version": "s.version"})
     .execute())
else:
    changes.write.format("delta").partitionBy("country").mode("overwrite").save(target)

result = spark.read.format("delta").load(target).orderBy("order_id")
for row in result.collect():
    print("OUT", row["order_id"], row["customer_id"], row["country"], row["amount"],
          row["status"], row["version"])
