"""Pattern: Glue Studio chain: S3 CSV source -> Filter node (generated lambda on a row) ->
Drop Duplicates node (toDF().dropDuplicates()) -> S3 JSON target with partitionKeys.
Written for lakemark's corpus."""
import sys
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.dynamicframe import DynamicFrame

args = getResolvedOptions(sys.argv, ["JOB_NAME", "src", "dst"])
sc = SparkContext()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

# Script generated for node Amazon S3
AmazonS3_node1 = glueContext.create_dynamic_frame.from_options(
    format_options={"quoteChar": '"', "withHeader": True, "separator": ","},
    connection_type="s3",
    format="csv",
    connection_options={"paths": [args["src"]], "recurse": True},
    transformation_ctx="AmazonS3_node1",
)

# Script generated for node Filter
Filter_node2 = Filter.apply(
    frame=AmazonS3_node1,
    f=lambda row: (row["age"] >= 18),
    transformation_ctx="Filter_node2",
)

# Script generated for node Drop Duplicates
DropDuplicates_node3 = DynamicFrame.fromDF(
    Filter_node2.toDF().dropDuplicates(["email"]),
    glueContext,
    "DropDuplicates_node3",
)

# Script generated for node Amazon S3
AmazonS3_node4 = glueContext.write_dynamic_frame.from_options(
    frame=DropDuplicates_node3,
    connection_type="s3",
    format="json",
    connection_options={"path": args["dst"], "partitionKeys": ["country"]},
    transformation_ctx="AmazonS3_node4",
)
job.commit()
