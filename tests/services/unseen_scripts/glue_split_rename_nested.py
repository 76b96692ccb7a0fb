"""SplitFields into two frames, RenameField on a nested path, ApplyMapping into a nested
output struct, a DynamicFrameCollection, and Parquet sinks for both halves."""
import sys

from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import ApplyMapping, RenameField, SelectFromCollection, SplitFields
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "source", "out"])
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

orders = glueContext.create_dynamic_frame_from_options(
    "s3", {"paths": [args["source"]]}, format="json", transformation_ctx="orders")
renamed = RenameField.apply(frame=orders, old_name="customer.name", new_name="customer.full_name",
                            transformation_ctx="renamed")
parts = SplitFields.apply(frame=renamed, paths=["order_id", "customer"], name1="who",
                          name2="what", transformation_ctx="split")
who = SelectFromCollection.apply(dfc=parts, key="who", transformation_ctx="who")
what = SelectFromCollection.apply(dfc=parts, key="what", transformation_ctx="what")
shaped = ApplyMapping.apply(frame=who, mappings=[
    ("order_id", "long", "order_id", "long"),
    ("customer.full_name", "string", "buyer.name", "string"),
    ("customer.address.city", "string", "buyer.city", "string")], transformation_ctx="shaped")
print("OUT who", shaped.toDF().schema.simpleString())
print("OUT what", sorted(what.toDF().columns))
glueContext.write_dynamic_frame.from_options(
    frame=shaped, connection_type="s3", connection_options={"path": args["out"] + "/who"},
    format="parquet", transformation_ctx="sink_who")
glueContext.write_dynamic_frame.from_options(
    frame=what.drop_fields(["items"]), connection_type="s3",
    connection_options={"path": args["out"] + "/what"}, format="parquet",
    transformation_ctx="sink_what")
job.commit()
