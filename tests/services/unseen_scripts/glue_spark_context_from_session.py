"""A job that builds its SparkSession first and hands ``spark.sparkContext`` to GlueContext,
goes through a DataFrame with a window function and back with DynamicFrame.fromDF."""
import sys

from awsglue.context import GlueContext
from awsglue.dynamicframe import DynamicFrame
from awsglue.job import Job
from awsglue.utils import getResolvedOptions
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.window import Window

args = getResolvedOptions(sys.argv, ["JOB_NAME", "source", "out"])
spark = SparkSession.builder.appName(args["JOB_NAME"]).getOrCreate()
glueContext = GlueContext(spark.sparkContext)
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

dyf = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["source"]]}, format="json",
    transformation_ctx="source")
df = dyf.toDF()
by_customer = Window.partitionBy("customer_id").orderBy(F.col("amount").desc())
ranked = (df.select(F.col("order_id"), F.col("customer.id").alias("customer_id"),
                    F.col("amount"), F.col("day"))
          .withColumn("rank", F.dense_rank().over(by_customer))
          .withColumn("share", F.round(F.col("amount") / F.sum("amount").over(
              Window.partitionBy("customer_id")), 3)))
out = DynamicFrame.fromDF(ranked, glueContext, "ranked")
glueContext.write_dynamic_frame.from_options(
    frame=out, connection_type="s3",
    connection_options={"path": args["out"], "partitionKeys": ["day"]}, format="parquet",
    transformation_ctx="sink")
job.commit()
