"""DataFrame code with spark.sql, the catalog table and target named by job arguments."""
import sys

from awsglue.context import GlueContext
from awsglue.dynamicframe import DynamicFrame
from awsglue.job import Job
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from pyspark.sql import functions as F

args = getResolvedOptions(sys.argv, ["JOB_NAME", "database", "table", "target", "min_value"])
sc = SparkContext()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
logger = glueContext.get_logger()

df = glueContext.create_data_frame.from_catalog(
    database=args["database"], table_name=args["table"], transformation_ctx="src"
)
df.createOrReplaceTempView("src")
out = spark.sql(
    "SELECT col0 AS name, CAST(col1 AS INT) AS number FROM src WHERE CAST(col1 AS INT) >= "
    + str(int(args["min_value"]))
).withColumn("loaded_by", F.lit(args["JOB_NAME"]))
logger.info("writing %d rows" % out.count())
glueContext.write_dynamic_frame.from_options(
    frame=DynamicFrame.fromDF(out, glueContext, "out"),
    connection_type="s3",
    connection_options={"path": args["target"]},
    format="csv",
    format_options={"writeHeader": True},
    transformation_ctx="target",
)
job.commit()
