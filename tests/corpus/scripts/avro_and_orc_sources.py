"""Pattern: a job consolidating exports of other systems: an ORC folder and a Parquet folder
read with from_options, aligned with ApplyMapping and combined with union. Written for
lakemark's corpus."""
import sys
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job

args = getResolvedOptions(sys.argv, ["JOB_NAME", "orc", "parquet", "dst"])
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
a = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["orc"]]}, format="orc")
b = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["parquet"]]}, format="parquet")
b = ApplyMapping.apply(frame=b, mappings=[("user_id", "long", "id", "long"),
                                          ("user_name", "string", "name", "string")])
both = a.union(b)
print("ALL", both.count())
glueContext.write_dynamic_frame.from_options(frame=both, connection_type="s3",
                                             connection_options={"path": args["dst"]},
                                             format="json")
job.commit()
