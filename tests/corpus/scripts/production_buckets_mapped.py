"""Pattern: a production job whose bucket names are written into the code and the catalog
(hard-coded `s3://<company>-<env>-…` paths, a crawled JSON table on the raw bucket, a staging
prefix purged before each run), run on local folders with `lakemark run --bucket-map`.
Written for lakemark's corpus."""
import sys
from awsglue.transforms import ApplyMapping
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job

RAW_DB = "acme_raw"
CURATED = "s3://acme-prod-curated/events/"
STAGING = "s3://acme-prod-curated/_staging/events/"

args = getResolvedOptions(sys.argv, ["JOB_NAME"])
sc = SparkContext.getOrCreate()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

glueContext.purge_s3_path(STAGING, {"retentionPeriod": 0})
events = glueContext.create_dynamic_frame.from_catalog(
    database=RAW_DB, table_name="events", transformation_ctx="events_src")
shaped = ApplyMapping.apply(frame=events, mappings=[
    ("event_id", "long", "event_id", "long"),
    ("kind", "string", "event_type", "string"),
    ("day", "string", "event_day", "string"),
], transformation_ctx="shaped")
shaped.toDF().write.mode("overwrite").json(STAGING)  # a plain Spark copy for auditors
glueContext.write_dynamic_frame.from_options(
    frame=shaped, connection_type="s3",
    connection_options={"path": CURATED, "partitionKeys": ["event_day"]},
    format="glueparquet", transformation_ctx="curated_sink")
print("STAGED", spark.read.json(STAGING).count())
job.commit()
