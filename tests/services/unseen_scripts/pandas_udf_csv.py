"""Vectorised Python: a pandas_udf column and a grouped applyInPandas, written as one CSV
file with a header and as JSON lines."""
import sys

import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

source, out = sys.argv[1], sys.argv[2]
spark = SparkSession.builder.getOrCreate()


@F.pandas_udf("double")
def with_tax(amount: pd.Series) -> pd.Series:
    return (amount * 1.2).round(2)


def top_order(pdf: pd.DataFrame) -> pd.DataFrame:
    best = pdf.sort_values(["amount", "order_id"], ascending=[False, True]).head(1)
    return best[["customer_id", "order_id", "amount"]]


orders = (spark.read.json(source)
          .select("order_id", F.col("customer.id").alias("customer_id"), "amount"))
taxed = orders.withColumn("gross", with_tax("amount"))
taxed.coalesce(1).write.mode("overwrite").option("header", True).csv(out + "/taxed")
best = orders.groupBy("customer_id").applyInPandas(
    top_order, schema="customer_id string, order_id long, amount double")
best.write.mode("overwrite").json(out + "/best")
print("OUT best", sorted((r.customer_id, r.order_id) for r in best.collect()))
