"""Pattern: a DynamoDB export job (connection_type "dynamodb" read options), a connector that
cannot exist locally: it must fail at the call with one line naming it. Written for lakemark's
corpus."""
import sys
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job

args = getResolvedOptions(sys.argv, ["JOB_NAME"])
glue_context = GlueContext(SparkContext.getOrCreate())
job = Job(glue_context)
job.init(args["JOB_NAME"], args)
dyf = glue_context.create_dynamic_frame.from_options(
    connection_type="dynamodb",
    connection_options={"dynamodb.input.tableName": "orders",
                        "dynamodb.throughput.read.percent": "0.5"})
dyf.toDF().write.parquet("s3://nowhere/orders/")
job.commit()
