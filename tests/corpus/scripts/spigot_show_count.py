"""Pattern: debugging calls real jobs leave in: show(), count(), printSchema(), spigot() of a
sample to S3, and the GlueContext logger. Written for lakemark's corpus."""
import sys
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job

args = getResolvedOptions(sys.argv, ["JOB_NAME", "src", "sample"])
glueContext = GlueContext(SparkContext.getOrCreate())
logger = glueContext.get_logger()
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
frame = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["src"]]}, format="json")
logger.info("loaded")
frame.printSchema()
frame.show(2)
print("COUNT", frame.count())
Spigot.apply(frame=frame, path=args["sample"], options={"topk": 2})
job.commit()
