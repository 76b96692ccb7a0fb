"""Pattern: record-level parsing in Map.apply with a tolerated number of bad records
(stageThreshold from a job argument): good records go to the curated path, the error records
(errorsAsDynamicFrame) to a quarantine path for a human; more bad records than tolerated fails
the job. Written for lakemark's corpus."""
import sys
from awsglue.transforms import Map
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job

args = getResolvedOptions(sys.argv, ["JOB_NAME", "src", "dst", "quarantine", "max_bad"])
glueContext = GlueContext(SparkContext.getOrCreate())
logger = glueContext.get_logger()
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

raw = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["src"]]}, format="json")


def parse(rec):
    user, _, domain = rec["email"].partition("@")  # a record without email raises
    rec["domain"] = domain.lower()
    rec["amount_cents"] = int(round(float(rec["amount"]) * 100))
    del rec["amount"]
    return rec


parsed = Map.apply(frame=raw, f=parse, stageThreshold=int(args["max_bad"]),
                   transformation_ctx="parsed")
if parsed.errorsCount() > 0:
    logger.warning("%d bad record(s) quarantined" % parsed.errorsCount())
    glueContext.write_dynamic_frame.from_options(
        frame=parsed.errorsAsDynamicFrame(), connection_type="s3",
        connection_options={"path": args["quarantine"]}, format="json")
glueContext.write_dynamic_frame.from_options(
    frame=parsed, connection_type="s3", connection_options={"path": args["dst"]},
    format="json")
job.commit()
