"""Orders joined to a CSV customer list with Join.apply, the join keys dropped with
DropFields, a Spigot sample for inspection, JSON written partitioned by tier."""
import sys

from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import ApplyMapping, DropFields, Join, Spigot
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "orders", "customers", "out", "sample"])
sc = SparkContext.getOrCreate()
print("OUT master set", sc.getConf().contains("spark.master"))
glueContext = GlueContext(sc)
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

orders = glueContext.create_dynamic_frame.from_options(
    "s3", {"paths": [args["orders"]]}, format="json", transformation_ctx="orders")
customers = glueContext.create_dynamic_frame.from_options(
    "s3", {"paths": [args["customers"]]}, format="csv",
    format_options={"withHeader": True}, transformation_ctx="customers")
slim = ApplyMapping.apply(frame=orders, mappings=[
    ("order_id", "long", "order_id", "long"),
    ("customer.id", "string", "cust", "string"),
    ("amount", "double", "amount", "double")], transformation_ctx="slim")
joined = Join.apply(frame1=slim, frame2=customers, keys1=["cust"], keys2=["id"],
                    transformation_ctx="joined")
clean = DropFields.apply(frame=joined, paths=["cust", "id"], transformation_ctx="clean")
Spigot.apply(frame=clean, path=args["sample"], options={"topk": 2}, transformation_ctx="spigot")
print("OUT joined", clean.count(), sorted(clean.toDF().columns))
glueContext.write_dynamic_frame.from_options(
    frame=clean, connection_type="s3",
    connection_options={"path": args["out"], "partitionKeys": ["tier"]},
    format="json", transformation_ctx="sink")
job.commit()
