"""A catalog JSON table read with a bookmark, optional job arguments checked in sys.argv,
Spark SQL over a temp view, written through glueContext.getSink."""
import sys

from awsglue.context import GlueContext
from awsglue.dynamicframe import DynamicFrame
from awsglue.job import Job
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

params = ["JOB_NAME", "database", "table", "out"]
if "--min_amount" in sys.argv:
    params.append("min_amount")
args = getResolvedOptions(sys.argv, params)
min_amount = float(args.get("min_amount", "0"))

sc = SparkContext()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

source = glueContext.create_dynamic_frame.from_catalog(
    database=args["database"], table_name=args["table"], transformation_ctx="source")
source.toDF().createOrReplaceTempView("orders")
totals = spark.sql(
    "SELECT customer.address.country AS country, COUNT(*) AS orders, "
    "ROUND(SUM(amount), 2) AS total FROM orders WHERE amount >= %s "
    "GROUP BY customer.address.country" % min_amount)
sink = glueContext.getSink(path=args["out"], connection_type="s3", updateBehavior="LOG",
                           partitionKeys=[], transformation_ctx="sink")
sink.setFormat("json")
sink.writeFrame(DynamicFrame.fromDF(totals, glueContext, "totals"))
print("OUT groups", totals.count())
job.commit()
