"""Glue 4/5 upsert job: changed customers (JSON, read with a bookmark) merged into a Delta table
with Delta Lake's Python API, as jobs run with --datalake-formats delta are written."""
import sys

from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType
from pyspark.sql.window import Window

args = getResolvedOptions(sys.argv, ["JOB_NAME", "changes_path"])
sc = SparkContext.getOrCreate()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
logger = glueContext.get_logger()

changes = glueContext.create_dynamic_frame.from_options(
    connection_type="s3",
    connection_options={"paths": [args["changes_path"]], "recurse": True},
    format="json",
    transformation_ctx="customer_changes",
)
# Several versions of one customer may arrive in one batch: keep the newest.
newest_first = Window.partitionBy("id").orderBy(F.col("updated_at").desc())
updates = (changes.toDF()
           .withColumn("id", F.col("id").cast("long"))
           .withColumn("updated_at", F.col("updated_at").cast("long"))
           .withColumn("_rank", F.row_number().over(newest_first))
           .where("_rank = 1").drop("_rank")
           .select("id", "name", "email", "updated_at"))

from delta.tables import DeltaTable

customers_schema = StructType([
    StructField("id", LongType(), False),
    StructField("name", StringType()),
    StructField("email", StringType()),
    StructField("updated_at", LongType()),
])
(DeltaTable.createIfNotExists(spark)
    .location("s3://lake/customers")
    .addColumns(customers_schema)
    .execute())

from delta.tables import DeltaTable
target = DeltaTable.forPath(spark, "s3://lake/customers")
(target.alias("t").merge(updates.alias("s"), "t.id = s.id")
   .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())

last = target.history(1).select("version", "operation", "operationMetrics").collect()[0]
logger.info("customers at version %d after %s" % (last["version"], last["operation"]))
print("LAST_COMMIT", last["operation"], last["operationMetrics"]["num_target_rows_updated"],
      last["operationMetrics"]["num_target_rows_inserted"])
job.commit()
