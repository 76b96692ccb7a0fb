"""A job that tunes Hadoop's output committer through the SparkContext's JVM handle, as many
production Glue scripts do, before a plain copy to Parquet."""
import sys

from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "source", "out"])
sc = SparkContext()
sc._jsc.hadoopConfiguration().set("mapreduce.fileoutputcommitter.algorithm.version", "2")
glueContext = GlueContext(sc)
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
frame = glueContext.create_dynamic_frame.from_options(
    "s3", {"paths": [args["source"]]}, format="json", transformation_ctx="source")
glueContext.write_dynamic_frame.from_options(
    frame=frame.drop_fields(["items"]), connection_type="s3",
    connection_options={"path": args["out"]}, format="parquet", transformation_ctx="sink")
job.commit()
