"""Pattern: a job with optional arguments (the '--name' in sys.argv idiom before
getResolvedOptions), defaults, and a flag that switches the output format. Written for
lakemark's corpus."""
import sys
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job

wanted = ["JOB_NAME", "src", "dst"]
if "--out_format" in sys.argv:
    wanted.append("out_format")
args = getResolvedOptions(sys.argv, wanted)
out_format = args.get("out_format", "parquet")
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
frame = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["src"]]}, format="json")
glueContext.write_dynamic_frame.from_options(frame=frame, connection_type="s3",
                                             connection_options={"path": args["dst"]},
                                             format=out_format)
print("FORMAT", out_format)
job.commit()
