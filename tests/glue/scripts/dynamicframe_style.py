"""Hand-written DynamicFrame code: nested JSON, joins, filters, mappings with nested paths."""
import sys

from awsglue.context import GlueContext
from awsglue.dynamicframe import DynamicFrame
from awsglue.job import Job
from awsglue.transforms import ApplyMapping, DropFields, Filter, Join, RenameField, ResolveChoice
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "events", "users", "out"])
glue = GlueContext(SparkContext.getOrCreate())
job = Job(glue)
job.init(args["JOB_NAME"], args)

events = glue.create_dynamic_frame_from_options(
    "s3", {"paths": [args["events"]], "recurse": True}, format="json",
    transformation_ctx="events",
)
users = glue.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["users"]]}, format="csv",
    format_options={"withHeader": True}, transformation_ctx="users",
)
flat = ApplyMapping.apply(
    frame=events,
    mappings=[
        ("id", "long", "event_id", "long"),
        ("user.id", "string", "user_id", "string"),
        ("payload.kind", "string", "kind", "string"),
        ("payload.value", "long", "value", "long"),
    ],
    transformation_ctx="flat",
)
clicks = Filter.apply(frame=flat, f=lambda r: r["kind"] == "click", transformation_ctx="clicks")
users = RenameField.apply(users, "full name", "name")
joined = DropFields.apply(Join.apply(clicks, users, "user_id", "uid"), ["uid"])
typed = ResolveChoice.apply(joined, specs=[("value", "cast:double")])
print("ROWS", typed.count())
glue.write_dynamic_frame.from_options(
    frame=typed.select_fields(["event_id", "user_id", "name", "value"]),
    connection_type="s3", connection_options={"path": args["out"]}, format="parquet",
    transformation_ctx="sink",
)
job.commit()
