"""Pattern: a Glue streaming job (Kinesis source, forEachBatch with a window): cannot exist
locally; must fail at the call with one line naming it. Written for lakemark's corpus."""
import sys
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job

args = getResolvedOptions(sys.argv, ["JOB_NAME"])
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)
frame = glueContext.create_data_frame.from_options(
    connection_type="kinesis",
    connection_options={"typeOfData": "kinesis", "streamARN": "arn:aws:kinesis:x:1:stream/s",
                        "classification": "json", "startingPosition": "latest"},
    transformation_ctx="stream")
glueContext.forEachBatch(frame=frame, batch_function=lambda df, batch_id: None,
                         options={"windowSize": "100 seconds", "checkpointLocation": "/tmp/cp"})
job.commit()
