"""Pattern: AWS's Medicare resolveChoice tutorial, make_cols branch: a crawled CSV table whose
id column is long in most rows and text in a few; make_cols keeps both as two columns and the
result is written as Parquet. Written for lakemark's corpus."""
import sys
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job

args = getResolvedOptions(sys.argv, ["JOB_NAME", "dst"])
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

medicare_dyf = glueContext.create_dynamic_frame.from_catalog(database="payments",
                                                             table_name="medicare")
medicare_dyf.printSchema()
by_cols = medicare_dyf.resolveChoice(specs=[("provider id", "make_cols")])
by_cols.printSchema()
glueContext.write_dynamic_frame.from_options(frame=by_cols, connection_type="s3",
                                             connection_options={"path": args["dst"]},
                                             format="parquet")
job.commit()
