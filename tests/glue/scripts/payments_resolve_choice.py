"""Pattern: AWS's "data cleaning" / resolveChoice tutorial (Medicare provider payments).

A crawled CSV table whose id column holds whole numbers in almost every row and a few text ids
near the end. The catalog says the column is a bigint; the DynamicFrame types every value, so
the field is a choice of long and string, and each resolveChoice strategy is written out to its
own folder. Written for lakemark's test corpus; not taken from the tutorial.
"""
import sys

from awsglue.context import GlueContext
from awsglue.dynamicframe import DynamicFrame
from awsglue.job import Job
from awsglue.transforms import ResolveChoice
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "out"])
sc = SparkContext.getOrCreate()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

claims = glueContext.create_dynamic_frame.from_catalog(
    database="payments", table_name="claims", transformation_ctx="claims_src")
claims.printSchema()


def save(frame, name):
    glueContext.write_dynamic_frame.from_options(
        frame=frame, connection_type="s3",
        connection_options={"path": args["out"] + "/" + name}, format="json")


save(claims.resolveChoice(specs=[("provider id", "cast:long")]), "cast")
save(claims.resolveChoice(specs=[("provider id", "project:long")]), "project")
save(claims.resolveChoice(specs=[("provider id", "make_cols")]), "make_cols")
save(ResolveChoice.apply(frame=claims, specs=[("provider id", "make_struct")]), "make_struct")
save(claims.resolveChoice(choice="match_catalog", database="payments", table_name="claims"),
     "match_catalog")

# The tutorial's last step: SQL over the DataFrame, then back to a DynamicFrame.
resolved = claims.resolveChoice(specs=[("provider id", "cast:long")]).toDF()
resolved.createOrReplaceTempView("claims")
busy = spark.sql("SELECT * FROM claims WHERE `total discharges` > 30")
save(DynamicFrame.fromDF(busy, glueContext, "busy"), "busy")
job.commit()
