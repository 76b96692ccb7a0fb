"""Pattern: Map.apply with a function that builds nested output (a dict inside the record) and
derives fields, the DynamicFrame "lambda" examples' shape. Written for lakemark's corpus."""
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
    connection_type="s3", connection_options={"paths": [args["src"]]}, format="csv",
    format_options={"withHeader": True})


def reshape(rec):
    rec["geo"] = {"lat": float(rec["lat"]), "lon": float(rec["lon"])}
    rec["name"] = rec["name"].title()
    del rec["lat"]
    del rec["lon"]
    return rec


shaped = Map.apply(frame=src, f=reshape, transformation_ctx="shaped")
shaped.printSchema()
glueContext.write_dynamic_frame.from_options(frame=shaped, connection_type="s3",
                                             connection_options={"path": args["dst"]},
                                             format="json")
job.commit()
