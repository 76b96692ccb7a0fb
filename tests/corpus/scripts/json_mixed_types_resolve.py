"""Pattern: a JSON feed whose producers disagree on types (a quantity sent as a number by one
system and as text by another, a code that is numeric for some vendors), settled with
resolveChoice (cast for the quantity, make_cols for the code) and toDF(ResolveOption) before
DataFrame code, as Glue's choice-type documentation shows. Written for lakemark's corpus."""
import sys
from awsglue.transforms import ResolveChoice
from awsglue.utils import getResolvedOptions
from awsglue.dynamicframe import DynamicFrame, ResolveOption
from pyspark.context import SparkContext
from pyspark.sql.types import DoubleType
from awsglue.context import GlueContext
from awsglue.job import Job

args = getResolvedOptions(sys.argv, ["JOB_NAME", "src", "dst"])
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

feed = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["src"]]}, format="json",
    transformation_ctx="feed")
feed.printSchema()
settled = ResolveChoice.apply(frame=feed, specs=[("qty", "cast:long"),
                                                 ("vendor_code", "make_cols")],
                              transformation_ctx="settled")
df = settled.toDF([ResolveOption("price", "Project", DoubleType())])
out = DynamicFrame.fromDF(df.withColumn("total", df.qty * df.price), glueContext, "out")
glueContext.write_dynamic_frame.from_options(
    frame=out, connection_type="s3", connection_options={"path": args["dst"]}, format="json",
    transformation_ctx="sink")
job.commit()
