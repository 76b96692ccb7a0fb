"""Pattern: hand-written ApplyMapping with Athena/Hive type names (varchar, tinyint,
decimal(10,2)), dotted targets that build a struct and a back-quoted source with a dot in its
name; then DropNullFields and SplitFields. Written for lakemark's corpus."""
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

raw = glueContext.create_dynamic_frame.from_catalog(database="crm", table_name="contacts_raw",
                                                    transformation_ctx="raw")
mapped = ApplyMapping.apply(frame=raw, mappings=[
    ("id", "string", "id", "bigint"),
    ("name", "string", "person.name", "varchar(64)"),
    ("`addr.city`", "string", "person.city", "string"),
    ("age", "string", "age", "tinyint"),
    ("balance", "string", "balance", "decimal(10,2)"),
    ("unused", "string", "unused", "string"),
], transformation_ctx="mapped")
cleaned = DropNullFields.apply(frame=mapped, transformation_ctx="cleaned")
parts = SplitFields.apply(frame=cleaned, paths=["id", "person"], name1="who", name2="money")
for name in sorted(parts.keys()):
    glueContext.write_dynamic_frame.from_options(
        frame=parts.select(name), connection_type="s3",
        connection_options={"path": args["dst"] + "/" + name}, format="json")
job.commit()
