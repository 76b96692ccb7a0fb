"""Pattern: tidying nested JSON with RenameField on a nested path, SelectFields of nested paths
and Unnest to flat dotted columns. Written for lakemark's corpus."""
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
raw = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["src"]]}, format="json")
renamed = RenameField.apply(frame=raw, old_name="customer.fname", new_name="customer.first_name")
picked = SelectFields.apply(frame=renamed, paths=["order_id", "customer.first_name",
                                                   "customer.address.city"])
flat = UnnestFrame.apply(frame=picked)
flat.printSchema()
glueContext.write_dynamic_frame.from_options(frame=flat, connection_type="s3",
                                             connection_options={"path": args["dst"]},
                                             format="json")
job.commit()
