"""Delta maintenance: cancelled orders zeroed with update(), zero rows deleted with delete(),
both with SQL-string conditions; history and time travel read back."""
import sys

from delta.tables import DeltaTable
from pyspark.sql import SparkSession

source, target = sys.argv[1], sys.argv[2]
spark = SparkSession.builder.getOrCreate()

orders = spark.read.json(source).select("order_id", "amount", "status", "day")
orders.write.format("delta").mode("append").save(target)

table = DeltaTable.forPath(spark, target)
table.update(condition="status = 'cancelled'", set={"amount": "0.0", "status": "'void'"})
table.delete("amount = 0 AND day < '2026-01-02'")

for row in table.toDF().orderBy("order_id", "day").collect():
    print("OUT row", row.order_id, row.amount, row.status, row.day)
ops = [r["operation"] for r in table.history().orderBy("version").collect()]
print("OUT ops", ops)
first = spark.read.format("delta").option("versionAsOf", 0).load(target)
print("OUT v0", first.count())
