"""Pattern: routing records with SplitRows (comparison_dict) into two outputs, then joining the
branches back with DynamicFrame.union. Written for lakemark's corpus."""
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
orders = glueContext.create_dynamic_frame.from_options(
    connection_type="s3", connection_options={"paths": [args["src"]]}, format="json",
    transformation_ctx="orders")
split = SplitRows.apply(frame=orders, comparison_dict={"amount": {">=": 100}},
                        name1="big", name2="small", transformation_ctx="split")
big, small = split.select("big"), split.select("small")
print("BIG", big.count(), "SMALL", small.count())
flagged = big.map(lambda r: dict(r, review=True)).union(small.map(lambda r: dict(r, review=False)))
glueContext.write_dynamic_frame.from_options(frame=flagged, connection_type="s3",
                                             connection_options={"path": args["dst"]},
                                             format="json")
job.commit()
