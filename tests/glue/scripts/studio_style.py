import sys
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue import DynamicFrame


def sparkSqlQuery(glueContext, query, mapping, transformation_ctx) -> DynamicFrame:
    for alias, frame in mapping.items():
        frame.toDF().createOrReplaceTempView(alias)
    result = spark.sql(query)
    return DynamicFrame.fromDF(result, glueContext, transformation_ctx)


args = getResolvedOptions(sys.argv, ["JOB_NAME", "source_path", "target_path"])
sc = SparkContext()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

# Script generated for node Amazon S3
AmazonS3_node1 = glueContext.create_dynamic_frame.from_options(
    format_options={"quoteChar": '"', "withHeader": True, "separator": ",", "optimizePerformance": False},
    connection_type="s3",
    format="csv",
    connection_options={"paths": [args["source_path"]], "recurse": True},
    transformation_ctx="AmazonS3_node1",
)

# Script generated for node Change Schema
ChangeSchema_node2 = ApplyMapping.apply(
    frame=AmazonS3_node1,
    mappings=[("order_id", "string", "order_id", "long"), ("amount", "string", "amount", "double"),
              ("country", "string", "country", "string")],
    transformation_ctx="ChangeSchema_node2",
)

# Script generated for node SQL Query
SqlQuery0 = """
select country, sum(amount) as total, count(*) as orders from myDataSource group by country
"""
SQLQuery_node3 = sparkSqlQuery(
    glueContext,
    query=SqlQuery0,
    mapping={"myDataSource": ChangeSchema_node2},
    transformation_ctx="SQLQuery_node3",
)

# Script generated for node Amazon S3
AmazonS3_node4 = glueContext.getSink(
    path=args["target_path"],
    connection_type="s3",
    updateBehavior="UPDATE_IN_DATABASE",
    partitionKeys=["country"],
    enableUpdateCatalog=True,
    transformation_ctx="AmazonS3_node4",
)
AmazonS3_node4.setCatalogInfo(catalogDatabase="analytics", catalogTableName="order_totals")
AmazonS3_node4.setFormat("glueparquet", compression="snappy")
AmazonS3_node4.writeFrame(SQLQuery_node3)
job.commit()
