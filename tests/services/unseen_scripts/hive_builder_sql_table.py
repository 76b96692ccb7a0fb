"""The usual first lines of a cluster script (a builder with Hive support, the log level set
through the SparkContext), then a CSV join written with saveAsTable-free SQL: a temp view
queried with a CTE and an ORDER BY, written as Parquet."""
import sys

from pyspark.sql import SparkSession

customers, source, out = sys.argv[1], sys.argv[2], sys.argv[3]
spark = (SparkSession.builder.appName("customer-report")
         .config("spark.sql.session.timeZone", "UTC")
         .enableHiveSupport()
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")

spark.read.option("header", True).csv(customers).createOrReplaceTempView("customers")
spark.read.json(source).createOrReplaceTempView("orders")
report = spark.sql("""
    WITH spend AS (
        SELECT customer.id AS id, SUM(amount) AS spent, MAX(day) AS last_day
        FROM orders GROUP BY customer.id)
    SELECT c.id, c.name, c.tier, s.spent, CAST(s.last_day AS DATE) AS last_day
    FROM customers c LEFT JOIN spend s ON c.id = s.id
    ORDER BY c.id
""")
report.write.mode("overwrite").parquet(out)
for row in report.collect():
    print("OUT", row.id, row.name, row.tier, row.spent, row.last_day)
