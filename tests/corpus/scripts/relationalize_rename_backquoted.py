"""Pattern: after Relationalize, child tables have dotted column names
(``contact_details.val.type``); jobs rename them with back-quoted paths before loading a
database. Written for lakemark's corpus."""
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
people = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["src"]]}, format="json")
tables = people.relationalize("root", args["dst"] + "/tmp")
contacts = tables.select("root_contacts")
contacts = contacts.rename_field("`contacts.val.kind`", "kind") \
    .rename_field("`contacts.val.value`", "value")
glueContext.write_dynamic_frame.from_options(frame=contacts, connection_type="s3",
                                             connection_options={"path": args["dst"] + "/c"},
                                             format="json")
job.commit()
