"""A plain PySpark report: a Python UDF, a window function, temp views and spark.sql, written
as Parquet partitioned by day with dynamic partition overwrite."""
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType
from pyspark.sql.window import Window

source, out = sys.argv[1], sys.argv[2]
spark = SparkSession.builder.appName("daily-report").getOrCreate()
spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")


@F.udf(returnType=StringType())
def size_class(amount):
    if amount is None:
        return None
    return "L" if amount >= 20 else ("M" if amount >= 10 else "S")


orders = spark.read.json(source)
orders.createOrReplaceTempView("orders")
daily = spark.sql("""
    SELECT day, customer.id AS customer_id, order_id, amount
    FROM orders WHERE status <> 'cancelled'
""")
w = Window.partitionBy("day").orderBy(F.col("amount").desc(), "order_id")
report = (daily.withColumn("size", size_class("amount"))
          .withColumn("position", F.row_number().over(w))
          .withColumn("running", F.sum("amount").over(
              w.rowsBetween(Window.unboundedPreceding, Window.currentRow))))
report.createOrReplaceTempView("report")
spark.sql("SELECT size, COUNT(*) AS n FROM report GROUP BY size ORDER BY size").show()
report.write.mode("overwrite").partitionBy("day").parquet(out)
print("OUT days", sorted(r.day for r in spark.read.parquet(out).select("day").distinct()
                          .collect()))
