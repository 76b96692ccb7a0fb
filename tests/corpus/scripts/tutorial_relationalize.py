"""Pattern: AWS's join-and-relationalize tutorial, second half: a nested JSON frame flattened by
Relationalize into a root table and one table per array, each written out by name (the loop the
tutorial uses to load Redshift, here to S3 folders). Written for lakemark's corpus."""
import sys
from awsglue.transforms import *
from awsglue.utils import getResolvedOptions
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job

args = getResolvedOptions(sys.argv, ["JOB_NAME", "dst", "TempDir"])
glueContext = GlueContext(SparkContext.getOrCreate())
job = Job(glueContext)
job.init(args["JOB_NAME"], args)

people = glueContext.create_dynamic_frame.from_catalog(database="legislators",
                                                       table_name="persons_json")
dfc = Relationalize.apply(frame=people, staging_path=args["TempDir"], name="hist_root",
                          transformation_ctx="relationalize")
print("KEYS", sorted(dfc.keys()))
for df_name in dfc.keys():
    m_df = dfc.select(df_name)
    print("Writing", df_name, m_df.count())
    glueContext.write_dynamic_frame.from_options(
        frame=m_df, connection_type="s3",
        connection_options={"path": args["dst"] + "/" + df_name}, format="json")
job.commit()
