"""Pattern: Glue Studio "SQL Query" node: the generated sparkSqlQuery helper registers each input
as a view and wraps the result back into a DynamicFrame; catalog source, S3 JSON target.
Written for lakemark's corpus."""
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


args = getResolvedOptions(sys.argv, ["JOB_NAME", "dst"])
sc = SparkContext()
glueContext = GlueContext(sc)
spark = glueContext.spark_session
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

# Script generated for node AWS Glue Data Catalog
AWSGlueDataCatalog_node1 = glueContext.create_dynamic_frame.from_catalog(
    database="shop", table_name="orders", transformation_ctx="AWSGlueDataCatalog_node1")

# Script generated for node SQL Query
SqlQuery0 = """
select customer, count(*) as orders, sum(total) as spent
from myDataSource
where status = 'PAID'
group by customer
"""
SQLQuery_node2 = sparkSqlQuery(
    glueContext,
    query=SqlQuery0,
    mapping={"myDataSource": AWSGlueDataCatalog_node1},
    transformation_ctx="SQLQuery_node2",
)

# Script generated for node Amazon S3
AmazonS3_node3 = glueContext.write_dynamic_frame.from_options(
    frame=SQLQuery_node2,
    connection_type="s3",
    format="json",
    connection_options={"path": args["dst"], "partitionKeys": []},
    transformation_ctx="AmazonS3_node3",
)
job.commit()
