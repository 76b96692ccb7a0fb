"""Pattern: newer hand-written jobs that skip DynamicFrames: create_data_frame.from_catalog,
DataFrame transformations, write_data_frame back through the DynamicFrame writer
(DynamicFrame.fromDF). Written for lakemark's corpus."""
import sys
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.dynamicframe import DynamicFrame
from awsglue.job import Job
from pyspark.sql import functions as F

args = getResolvedOptions(sys.argv, ["JOB_NAME", "dst"])
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
df = glueContext.create_data_frame.from_catalog(database="hr", table_name="staff")
summary = df.groupBy("dept").agg(F.avg("salary").alias("avg_salary"), F.count("*").alias("n"))
glueContext.write_dynamic_frame.from_options(
    frame=DynamicFrame.fromDF(summary, glueContext, "summary"), connection_type="s3",
    connection_options={"path": args["dst"]}, format="json")
job.commit()
