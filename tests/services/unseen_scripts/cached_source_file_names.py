"""A scheduled report that caches what it reads (used twice) and records each row's source
file with input_file_name(): per file, its rows and total, as JSON."""
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

source, out = sys.argv[1], sys.argv[2]
spark = SparkSession.builder.getOrCreate()

orders = (spark.read.json(source)
          .withColumn("source_file", F.element_at(F.split(F.input_file_name(), "/"), -1))
          .cache())
print("OUT orders", orders.count())
per_file = orders.groupBy("source_file").agg(F.count("*").alias("rows"),
                                             F.sum("amount").alias("total"))
per_file.write.mode("overwrite").json(out)
print("OUT files", sorted((r.source_file, r.rows) for r in per_file.collect()))
