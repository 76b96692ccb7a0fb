"""Pattern: reading only some partitions of a partitioned catalog table with
push_down_predicate, then writing to another catalog table with write_dynamic_frame.from_catalog.
Written for lakemark's corpus."""
import sys
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job

args = getResolvedOptions(sys.argv, ["JOB_NAME"])
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
logs = glueContext.create_dynamic_frame.from_catalog(
    database="ops", table_name="logs", push_down_predicate="year == '2024' and month == '02'",
    transformation_ctx="logs")
print("ROWS", logs.count())
glueContext.write_dynamic_frame.from_catalog(frame=logs, database="ops",
                                             table_name="logs_feb", transformation_ctx="sink")
job.commit()
