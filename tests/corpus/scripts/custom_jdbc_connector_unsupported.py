"""Pattern: a Glue Studio job using a Marketplace/custom JDBC connector
(connection_type "custom.jdbc"): cannot exist locally; must fail with one line naming it.
Written for lakemark's corpus."""
import sys
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job

args = getResolvedOptions(sys.argv, ["JOB_NAME"])
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
# Script generated for node Custom connector
Customconnector_node1 = glueContext.create_dynamic_frame.from_options(
    connection_type="custom.jdbc",
    connection_options={"tableName": "accounts", "dbTable": "accounts",
                        "connectionName": "my-saphana"},
    transformation_ctx="Customconnector_node1")
job.commit()
