"""A Glue 4/5 Delta Lake job: JSON orders -> bronze Delta -> silver Delta -> gold Delta
(plus a Delta table of rejected events).

Written as such jobs are deployed on AWS Glue (``--datalake-formats delta`` and the Delta
session settings in a SparkConf); run by lakemark unmodified.
"""

import sys

from awsglue.context import GlueContext
from awsglue.dynamicframe import DynamicFrame
from awsglue.job import Job
from awsglue.utils import getResolvedOptions
from pyspark.conf import SparkConf
from pyspark.context import SparkContext
from pyspark.sql import functions as F

args = getResolvedOptions(
    sys.argv, ["JOB_NAME", "raw_path", "bronze_path", "silver_path", "gold_path", "rejected_path",
              "database"])

conf = SparkConf()
conf.set("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
conf.set("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
sc = SparkContext.getOrCreate(conf=conf)
glueContext = GlueContext(sc)
spark = glueContext.spark_session
logger = glueContext.get_logger()
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

# Raw JSON order events, only the files that arrived since the last run (job bookmark).
raw = glueContext.create_dynamic_frame.from_options(
    connection_type="s3",
    connection_options={"paths": [args["raw_path"]], "recurse": True},
    format="json",
    transformation_ctx="raw_orders",
)

# Bronze: append the new events to a partitioned Delta table.
glueContext.write_dynamic_frame.from_options(
    frame=raw,
    connection_type="s3",
    format="delta",
    connection_options={"path": args["bronze_path"], "partitionKeys": ["order_date"]},
    format_options={"mergeSchema": "true"},
    transformation_ctx="bronze_sink",
)

# Silver: the whole bronze table, cleaned, rewritten in one overwrite.
bronze = glueContext.create_data_frame.from_options(
    connection_type="s3",
    format="delta",
    connection_options={"path": args["bronze_path"]},
)
silver = (
    bronze.where(F.col("amount") > 0)
    .withColumn("customer", F.lower(F.trim(F.col("customer"))))
    .dropDuplicates(["order_id"])
)
silver.write.format("delta").mode("overwrite").save(args["silver_path"])

# Gold: revenue per customer, from the silver table as the Data Catalog knows it.
orders = glueContext.create_dynamic_frame.from_catalog(
    database=args["database"], table_name="silver_orders")
gold = orders.toDF().groupBy("customer").agg(
    F.sum("amount").alias("revenue"), F.count("*").alias("orders"))
gold.write.format("delta").mode("overwrite").save(args["gold_path"])
first = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", format="delta", connection_options={"path": args["silver_path"]},
    format_options={"versionAsOf": "0"})
logger.info(f"silver held {first.count()} orders after its first write")

# Rejected events (no positive amount) of this run, appended through a Glue sink.
rejected = raw.toDF().where(F.col("amount") <= 0)
sink = glueContext.getSink(
    connection_type="s3", path=args["rejected_path"], transformation_ctx="rejected_sink")
sink.setFormat("delta")
sink.writeFrame(DynamicFrame.fromDF(rejected, glueContext, "rejected"))

job.commit()
