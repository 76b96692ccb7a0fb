"""Pattern: a JDBC extraction job: from_options on PostgreSQL with jobBookmarkKeys, written to
S3 as JSON; each run takes only rows whose key is past the bookmark. Written for lakemark's
corpus."""
import sys
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job

args = getResolvedOptions(sys.argv, ["JOB_NAME", "url", "user", "dst"])
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
accounts = glueContext.create_dynamic_frame.from_options(
    connection_type="postgresql",
    connection_options={"url": args["url"], "user": args["user"], "password": "",
                        "dbtable": "corpus_accounts", "jobBookmarkKeys": ["account_id"],
                        "jobBookmarkKeysSortOrder": "asc"},
    transformation_ctx="accounts")
print("NEW", accounts.count())
glueContext.write_dynamic_frame.from_options(frame=accounts, connection_type="s3",
                                             connection_options={"path": args["dst"]},
                                             format="json", transformation_ctx="sink")
job.commit()
