"""Glue Studio-style job: bookmarked JSON orders, nested fields flattened and typed by
ApplyMapping, written as partitioned glueparquet."""
import sys
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job

args = getResolvedOptions(sys.argv, ["JOB_NAME", "source_path", "target_path"])
sc = SparkContext()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

# Script generated for node Orders
Orders_node1 = glueContext.create_dynamic_frame.from_options(
    format_options={"multiline": False},
    connection_type="s3",
    format="json",
    connection_options={"paths": [args["source_path"]], "recurse": True},
    transformation_ctx="Orders_node1",
)

# Script generated for node Change Schema
ChangeSchema_node2 = ApplyMapping.apply(
    frame=Orders_node1,
    mappings=[
        ("order_id", "long", "order_id", "long"),
        ("customer.id", "string", "customer_id", "string"),
        ("customer.address.city", "string", "city", "string"),
        ("customer.address.country", "string", "country", "string"),
        ("amount", "double", "amount", "decimal(10,2)"),
        ("day", "string", "order_date", "date"),
    ],
    transformation_ctx="ChangeSchema_node2",
)

# Script generated for node Target
Target_node3 = glueContext.write_dynamic_frame.from_options(
    frame=ChangeSchema_node2,
    connection_type="s3",
    format="glueparquet",
    connection_options={"path": args["target_path"], "partitionKeys": ["country"]},
    format_options={"compression": "snappy"},
    transformation_ctx="Target_node3",
)
job.commit()
