"""Pattern: Glue Studio "Custom Transform" node (a function over a DynamicFrameCollection that
goes through a DataFrame) followed by "Select From Collection". Written for lakemark's corpus."""
import sys
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.dynamicframe import DynamicFrame, DynamicFrameCollection


# Script generated for node Custom Transform
def MyTransform(glueContext, dfc) -> DynamicFrameCollection:
    from pyspark.sql import functions as F

    df = dfc.select(list(dfc.keys())[0]).toDF()
    df = df.withColumn("name", F.upper(F.trim(F.col("name")))).filter(F.col("name") != "")
    return DynamicFrameCollection({"CustomTransform0": DynamicFrame.fromDF(df, glueContext, "ct")},
                                  glueContext)


args = getResolvedOptions(sys.argv, ["JOB_NAME", "src", "dst"])
sc = SparkContext()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

# Script generated for node Amazon S3
AmazonS3_node1 = glueContext.create_dynamic_frame.from_options(
    format_options={"multiline": False},
    connection_type="s3",
    format="json",
    connection_options={"paths": [args["src"]], "recurse": True},
    transformation_ctx="AmazonS3_node1",
)

# Script generated for node Custom Transform
CustomTransform_node2 = MyTransform(
    glueContext,
    DynamicFrameCollection({"AmazonS3_node1": AmazonS3_node1}, glueContext),
)

# Script generated for node Select From Collection
SelectFromCollection_node3 = SelectFromCollection.apply(
    dfc=CustomTransform_node2,
    key=list(CustomTransform_node2.keys())[0],
    transformation_ctx="SelectFromCollection_node3",
)

# Script generated for node Amazon S3
AmazonS3_node4 = glueContext.write_dynamic_frame.from_options(
    frame=SelectFromCollection_node3,
    connection_type="s3",
    format="json",
    connection_options={"path": args["dst"], "partitionKeys": []},
    transformation_ctx="AmazonS3_node4",
)
job.commit()
