"""Pattern: a CSV export with a JSON document in one column, parsed with Unbox and flattened with
ApplyMapping on the unboxed paths. Written for lakemark's corpus."""
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
rows = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["src"]]}, format="csv",
    format_options={"withHeader": True, "separator": "|"})
unboxed = Unbox.apply(frame=rows, path="attrs", format="json")
mapped = ApplyMapping.apply(frame=unboxed, mappings=[
    ("id", "long", "id", "long"), ("attrs.color", "string", "color", "string"),
    ("attrs.size", "long", "size", "int")])
glueContext.write_dynamic_frame.from_options(frame=mapped, connection_type="s3",
                                             connection_options={"path": args["dst"]},
                                             format="json")
job.commit()
