"""Pattern: the incremental S3 job Glue's bookmark docs describe: JSON under a prefix, read
with a transformation_ctx and job bookmarks enabled, appended to a Parquet folder; each run
takes only new files. Written for lakemark's corpus."""
import sys
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job

args = getResolvedOptions(sys.argv, ["JOB_NAME", "src", "dst"])
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
datasource0 = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["src"]], "recurse": True},
    format="json", transformation_ctx="datasource0")
print("NEW", datasource0.count())
glueContext.write_dynamic_frame.from_options(
    frame=datasource0, connection_type="s3", connection_options={"path": args["dst"]},
    format="parquet", transformation_ctx="datasink1")
job.commit()
