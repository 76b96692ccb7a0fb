"""A Glue 4/5 job on Iceberg tables of the Data Catalog: new JSON orders are appended to the
Iceberg table ``orders``; the orders the table gained since the last run are totalled per
customer and appended to the Iceberg table ``customer_totals`` through a catalog sink.

Written the way such jobs are deployed (``--datalake-formats iceberg``, Iceberg's Spark
settings for a Glue-backed catalog in a SparkConf); lakemark runs it unmodified, without the
Iceberg runtime jar.
"""

import sys

from awsglue.context import GlueContext
from awsglue.dynamicframe import DynamicFrame
from awsglue.job import Job
from awsglue.transforms import ApplyMapping
from awsglue.utils import getResolvedOptions
from pyspark.conf import SparkConf
from pyspark.context import SparkContext
from pyspark.sql import functions as F

params = getResolvedOptions(sys.argv, ["JOB_NAME", "landing", "db", "lake_warehouse"])

settings = SparkConf()
for key, value in (
        ("spark.sql.extensions",
         "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"),
        ("spark.sql.catalog.spark_catalog", "org.apache.iceberg.spark.SparkSessionCatalog"),
        ("spark.sql.catalog.glue_catalog", "org.apache.iceberg.spark.SparkCatalog"),
        ("spark.sql.catalog.glue_catalog.catalog-impl",
         "org.apache.iceberg.aws.glue.GlueCatalog"),
        ("spark.sql.catalog.glue_catalog.io-impl", "org.apache.iceberg.aws.s3.S3FileIO"),
        ("spark.sql.catalog.glue_catalog.warehouse", params["lake_warehouse"])):
    settings.set(key, value)
context = GlueContext(SparkContext.getOrCreate(conf=settings))
session = context.spark_session
log = context.get_logger()
etl = Job(context)
etl.init(params["JOB_NAME"], params)

landed = context.create_dynamic_frame.from_options(
    connection_type="s3",
    connection_options={"paths": [params["landing"]], "recurse": True},
    format="json",
    transformation_ctx="landed_orders",
)
typed = ApplyMapping.apply(
    frame=landed,
    mappings=[("id", "long", "order_id", "long"),
              ("who", "string", "customer", "string"),
              ("total", "double", "amount", "double")],
    transformation_ctx="typed_orders",
)
context.write_dynamic_frame.from_catalog(
    frame=typed, database=params["db"], table_name="orders",
    transformation_ctx="orders_target",
)

# Only what the Iceberg table gained since the previous run (bookmarked table source).
gained = context.create_data_frame.from_catalog(
    database=params["db"], table_name="orders", transformation_ctx="orders_gained",
)
per_customer = gained.groupBy("customer").agg(
    F.sum("amount").alias("revenue"), F.count(F.lit(1)).alias("orders"))

totals_sink = context.getSink(
    connection_type="s3", path=params["lake_warehouse"] + "/unused",
    enableUpdateCatalog=True, updateBehavior="UPDATE_IN_DATABASE",
    transformation_ctx="totals_target",
)
totals_sink.setCatalogInfo(catalogDatabase=params["db"], catalogTableName="customer_totals")
totals_sink.setFormat("glueparquet", compression="snappy")
totals_sink.writeFrame(DynamicFrame.fromDF(per_customer, context, "per_customer"))

everything = context.create_dynamic_frame.from_catalog(database=params["db"],
                                                       table_name="orders")
log.info(f"iceberg orders now {everything.count()} rows, this run {gained.count()}")
etl.commit()
