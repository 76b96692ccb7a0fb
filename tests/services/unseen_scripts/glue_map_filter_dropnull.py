"""Record functions: Map adds computed and nested fields, Filter keeps big orders,
DropNullFields drops the all-null column, SelectFields picks the output; CSV sink."""
import sys

from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import DropNullFields, Filter, Map, SelectFields
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "source", "out"])
glueContext = GlueContext(SparkContext())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)


def enrich(rec):
    rec["quantity"] = sum(item["qty"] for item in rec["items"])
    rec["band"] = "big" if rec["amount"] >= 20 else "small"
    rec["coupon"] = None
    rec["place"] = {"city": rec["customer"]["address"]["city"].upper()}
    del rec["items"]
    return rec


orders = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["source"]]}, format="json",
    transformation_ctx="orders")
enriched = Map.apply(frame=orders, f=enrich, transformation_ctx="enriched")
kept = Filter.apply(frame=enriched, f=lambda r: r["quantity"] > 1 and r["status"] != "cancelled",
                    transformation_ctx="kept")
no_nulls = DropNullFields.apply(frame=kept, transformation_ctx="no_nulls")
print("OUT columns", sorted(no_nulls.toDF().columns))
picked = SelectFields.apply(frame=no_nulls,
                            paths=["order_id", "quantity", "band", "place.city"],
                            transformation_ctx="picked")
flat = picked.unnest()
glueContext.write_dynamic_frame.from_options(
    frame=flat, connection_type="s3", connection_options={"path": args["out"]},
    format="csv", format_options={"writeHeader": True, "separator": ";"},
    transformation_ctx="sink")
job.commit()
