"""Orders with arrays of line items flattened by Relationalize; every table of the
collection is written to its own CSV folder."""
import sys

from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import Relationalize
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "source", "out", "TempDir"])
sc = SparkContext.getOrCreate()
glue_context = GlueContext(sc)
job = Job(glue_context)
job.init(args["JOB_NAME"], args)

orders = glue_context.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["source"]]}, format="json",
    transformation_ctx="orders")
flat = orders.select_fields(["order_id", "items", "customer"])
tables = Relationalize.apply(frame=flat, staging_path=args["TempDir"], name="orders_root",
                             transformation_ctx="relationalize")
for name in sorted(tables.keys()):
    table = tables.select(name)
    print("OUT table", name, table.count(), sorted(table.toDF().columns))
    glue_context.write_dynamic_frame.from_options(
        frame=table, connection_type="s3",
        connection_options={"path": args["out"] + "/" + name.replace(".", "_")},
        format="csv", transformation_ctx="write_" + name.replace(".", "_"))
job.commit()
