"""Pattern: Glue Studio Join of two S3 JSON sources on a key both call ``serialNumber``, then
Drop Fields of the right side's copy (`.serialNumber`) and of private fields (the sensor/customer
course projects' shape). Written for lakemark's corpus."""
import sys
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job

args = getResolvedOptions(sys.argv, ["JOB_NAME", "readings", "devices", "dst"])
sc = SparkContext()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

# Script generated for node Readings
Readings_node1 = glueContext.create_dynamic_frame.from_options(
    format_options={"multiline": False},
    connection_type="s3",
    format="json",
    connection_options={"paths": [args["readings"]], "recurse": True},
    transformation_ctx="Readings_node1",
)

# Script generated for node Devices
Devices_node2 = glueContext.create_dynamic_frame.from_options(
    format_options={"multiline": False},
    connection_type="s3",
    format="json",
    connection_options={"paths": [args["devices"]], "recurse": True},
    transformation_ctx="Devices_node2",
)

# Script generated for node Join
Join_node3 = Join.apply(
    frame1=Readings_node1,
    frame2=Devices_node2,
    keys1=["serialNumber"],
    keys2=["serialNumber"],
    transformation_ctx="Join_node3",
)

# Script generated for node Drop Fields
DropFields_node4 = DropFields.apply(
    frame=Join_node3,
    paths=["`.serialNumber`", "ownerEmail", "ownerPhone"],
    transformation_ctx="DropFields_node4",
)

# Script generated for node Amazon S3
AmazonS3_node5 = glueContext.write_dynamic_frame.from_options(
    frame=DropFields_node4,
    connection_type="s3",
    format="json",
    connection_options={"path": args["dst"], "partitionKeys": []},
    transformation_ctx="AmazonS3_node5",
)

job.commit()
