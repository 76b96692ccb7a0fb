"""Reader and writer options: CSV with a given schema and header, dropDuplicates, a union by
name, ORC and JSON outputs with compression, an append then a read back."""
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

customers, source, out = sys.argv[1], sys.argv[2], sys.argv[3]
spark = SparkSession.builder.getOrCreate()
schema = StructType([StructField("id", StringType()), StructField("name", StringType()),
                     StructField("tier", StringType())])
people = spark.read.option("header", "true").schema(schema).csv(customers).dropDuplicates(["id"])
buyers = (spark.read.json(source).select(F.col("customer.id").alias("id"),
                                         F.col("customer.name").alias("name"))
          .withColumn("tier", F.lit(None).cast("string")))
everyone = people.unionByName(buyers).groupBy("id").agg(
    F.max("name").alias("name"), F.max("tier").alias("tier"))
everyone.write.mode("append").option("compression", "zlib").orc(out + "/orc")
everyone.write.mode("overwrite").option("compression", "gzip").json(out + "/json")
print("OUT orc", spark.read.orc(out + "/orc").count())
print("OUT ids", sorted(r.id for r in spark.read.json(out + "/json").collect()))
