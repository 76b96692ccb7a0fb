"""Pattern: Glue Studio S3 target with "Create a table in the Data Catalog and on subsequent
runs update the schema": getSink(enableUpdateCatalog, partitionKeys) + setCatalogInfo +
setFormat("glueparquet") + writeFrame. Written for lakemark's corpus."""
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
S3bucket_node1 = glueContext.create_dynamic_frame.from_options(
    format_options={"multiline": False}, connection_type="s3", format="json",
    connection_options={"paths": [args["src"]], "recurse": True},
    transformation_ctx="S3bucket_node1")
# Script generated for node S3 bucket
S3bucket_node3 = glueContext.getSink(
    path=args["dst"],
    connection_type="s3",
    updateBehavior="UPDATE_IN_DATABASE",
    partitionKeys=["region"],
    enableUpdateCatalog=True,
    transformation_ctx="S3bucket_node3",
)
S3bucket_node3.setCatalogInfo(catalogDatabase="lake", catalogTableName="visits")
S3bucket_node3.setFormat("glueparquet")
S3bucket_node3.writeFrame(S3bucket_node1)
job.commit()
