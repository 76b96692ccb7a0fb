"""Payments whose amount is sometimes a number, sometimes text: ResolveChoice with a spec
list (make_struct for one column, project for another), then a JSON sink."""
import sys

from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import ResolveChoice
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "payments", "out"])
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

payments = glueContext.create_dynamic_frame.from_options(
    "s3", {"paths": [args["payments"]]}, format="json", transformation_ctx="payments")
resolved = ResolveChoice.apply(
    frame=payments,
    specs=[("amount", "make_struct"), ("ref", "project:string")],
    transformation_ctx="resolved")
print("OUT schema", resolved.toDF().schema.simpleString())
glueContext.write_dynamic_frame.from_options(
    frame=resolved, connection_type="s3", connection_options={"path": args["out"]},
    format="json", transformation_ctx="sink")
job.commit()
