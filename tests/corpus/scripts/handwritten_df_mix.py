"""Pattern: hand-written job mixing DynamicFrame and DataFrame code: catalog read, toDF, Spark
functions and a window, fromDF, write_dynamic_frame; then the same DataFrame written with plain
Spark (mode overwrite, partitionBy). Written for lakemark's corpus."""
import sys

from awsglue.context import GlueContext
from awsglue.dynamicframe import DynamicFrame
from awsglue.job import Job
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from pyspark.sql import Window
from pyspark.sql import functions as F

args = getResolvedOptions(sys.argv, ["JOB_NAME", "dst", "dst_plain"])
sc = SparkContext()
glue_context = GlueContext(sc)
spark = glue_context.spark_session
logger = glue_context.get_logger()
job = Job(glue_context)
job.init(args["JOB_NAME"], args)

events = glue_context.create_dynamic_frame.from_catalog(
    database="web", table_name="events", transformation_ctx="events")
logger.info(f"read {events.count()} events")
df = events.toDF()
w = Window.partitionBy("user").orderBy(F.col("ts").desc())
latest = (df.withColumn("rn", F.row_number().over(w)).filter("rn = 1").drop("rn")
          .withColumn("day", F.to_date(F.from_unixtime("ts"))))
out = DynamicFrame.fromDF(latest, glue_context, "latest")
glue_context.write_dynamic_frame.from_options(
    frame=out, connection_type="s3", format="parquet",
    connection_options={"path": args["dst"]}, transformation_ctx="sink")
latest.write.mode("overwrite").partitionBy("day").parquet(args["dst_plain"])
job.commit()
