"""Pattern: Map and Filter with Python functions over records (the DynamicFrame examples), where
some records lack a field the function reads: those become error records, counted and kept out
of the output. Written for lakemark's corpus."""
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


def tag(rec):
    rec["label"] = rec["kind"].upper() + "-" + str(rec["id"])
    return rec


mapped = Map.apply(frame=src, f=tag, transformation_ctx="tagged")
kept = Filter.apply(frame=mapped, f=lambda r: r["score"] >= 5, transformation_ctx="kept")
print("MAP_ERRORS", mapped.stageErrorsCount())
print("TOTAL_ERRORS", kept.errorsCount())
glueContext.write_dynamic_frame.from_options(
    frame=kept, connection_type="s3", connection_options={"path": args["dst"]}, format="json")
job.commit()
