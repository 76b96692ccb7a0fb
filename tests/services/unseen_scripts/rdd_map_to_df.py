"""Old-style PySpark: a DataFrame's rows mapped through its RDD and back to a DataFrame."""
import sys

from pyspark.sql import Row, SparkSession

source, out = sys.argv[1], sys.argv[2]
spark = SparkSession.builder.getOrCreate()
orders = spark.read.json(source)
pairs = orders.rdd.map(lambda r: Row(order_id=r.order_id, cents=int(round(r.amount * 100))))
spark.createDataFrame(pairs).write.mode("overwrite").parquet(out)
print("OUT", spark.read.parquet(out).count())
