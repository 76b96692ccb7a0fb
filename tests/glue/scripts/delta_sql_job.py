"""A Glue 4/5 job that works on Delta tables with Spark SQL, as Delta's documentation writes it:
path tables (delta.`s3://…`), CREATE OR REPLACE TABLE … AS SELECT, time travel with VERSION AS
OF, and DESCRIBE HISTORY to log what the job did. Run by lakemark unmodified (no Delta jars)."""

import sys

from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.utils import getResolvedOptions
from pyspark.conf import SparkConf
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "raw_path", "bronze_path", "gold_path"])

conf = SparkConf()
conf.set("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
conf.set("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
sc = SparkContext.getOrCreate(conf=conf)
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

bronze, gold = args["bronze_path"], args["gold_path"]
orders = spark.read.json(args["raw_path"])
orders.write.format("delta").mode("append").save(bronze)

spark.sql(f"""
    CREATE OR REPLACE TABLE delta.`{gold}`
    USING DELTA
    AS SELECT customer, round(sum(amount), 2) AS revenue, count(*) AS orders
       FROM delta.`{bronze}`
       GROUP BY customer
""")

first = spark.sql(f"SELECT count(*) AS n FROM delta.`{bronze}` VERSION AS OF 0").first()["n"]
print(f"bronze held {first} orders at version 0")
for row in spark.sql(f"DESCRIBE HISTORY delta.`{gold}`").select("version", "operation") \
        .orderBy("version").collect():
    print(f"gold v{row['version']}: {row['operation']}")

job.commit()
