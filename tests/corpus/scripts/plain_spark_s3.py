"""Pattern: a hand-written job that skips DynamicFrames for I/O: spark.read.json on s3://,
DataFrame aggregation, df.write.partitionBy(...).mode("overwrite").parquet on s3:// (as in the
legislators tutorial's last step). Written for lakemark's corpus."""
import sys
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job
from pyspark.sql import functions as F

args = getResolvedOptions(sys.argv, ["JOB_NAME", "src", "dst"])
glueContext = GlueContext(SparkContext.getOrCreate())
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
clicks = spark.read.json(args["src"])
daily = clicks.groupBy("day", "page").agg(F.count("*").alias("hits"))
daily.write.partitionBy("day").mode("overwrite").parquet(args["dst"])
print("BACK", spark.read.parquet(args["dst"]).count())
job.commit()
