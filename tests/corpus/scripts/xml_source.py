"""Pattern: reading XML exports with format="xml" and rowTag, then ApplyMapping of nested
fields and attributes. Written for lakemark's corpus."""
import sys
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job

args = getResolvedOptions(sys.argv, ["JOB_NAME", "src", "dst"])
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
books = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["src"]]}, format="xml",
    format_options={"rowTag": "book"}, transformation_ctx="books")
books.printSchema()
out = ApplyMapping.apply(frame=books, mappings=[
    ("_id", "string", "book_id", "string"), ("title", "string", "title", "string"),
    ("price", "double", "price", "double")])
glueContext.write_dynamic_frame.from_options(frame=out, connection_type="s3",
                                             connection_options={"path": args["dst"]},
                                             format="json")
job.commit()
