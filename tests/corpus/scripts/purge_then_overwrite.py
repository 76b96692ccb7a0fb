"""Pattern: "overwrite" with DynamicFrames: purge_s3_path on the target (retentionPeriod 0)
before write_dynamic_frame, so a rerun replaces the output. Written for lakemark's corpus."""
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
src = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["src"]]}, format="json")
glueContext.purge_s3_path(args["dst"], options={"retentionPeriod": 0})
glueContext.write_dynamic_frame.from_options(frame=src, connection_type="s3",
                                             connection_options={"path": args["dst"]},
                                             format="parquet")
job.commit()
