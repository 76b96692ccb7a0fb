"""Pattern: AWS's "join and relationalize" tutorial (US legislators).

Three crawled JSON tables: people, their memberships and the organisations they belong to.
People and organisations share field names besides the join keys (``image``, ``links``, ``name``
until it is renamed); Glue's join keeps each such field once. The result is written as a
DynamicFrame and with plain Spark, one folder per organisation. Written for lakemark's test
corpus; not taken from the tutorial.
"""
import sys

from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.transforms import Join
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext

args = getResolvedOptions(sys.argv, ["JOB_NAME", "out"])
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

people = glueContext.create_dynamic_frame.from_catalog(database="congress", table_name="people")
roles = glueContext.create_dynamic_frame.from_catalog(database="congress", table_name="roles")
groups = glueContext.create_dynamic_frame.from_catalog(database="congress", table_name="groups")
print("people", people.count(), "roles", roles.count(), "groups", groups.count())

groups = groups.drop_fields(["other_names"]).rename_field("id", "org_id") \
    .rename_field("name", "org_name")

history = Join.apply(groups, Join.apply(people, roles, "id", "person_id"),
                     "org_id", "organization_id").drop_fields(["person_id", "org_id"])
print("history", history.count())
history.printSchema()

glueContext.write_dynamic_frame.from_options(
    frame=history, connection_type="s3",
    connection_options={"path": args["out"] + "/history"}, format="parquet")
history.toDF().write.parquet(args["out"] + "/by_org", partitionBy=["org_name"])
job.commit()
