"""``connect_compat.mark_batch``: over Spark Connect a frame whose plan reads only batch sources
gets ``isStreaming`` False in the client (so ``observe`` and the writers ask the server no plan
analysis); any other frame is left to the server. Each answer given in the client is checked
against the real server's answer for the same plan.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import ConnectServer, need_connect_client

SRC = Path(__file__).resolve().parents[2] / "src"

CODE = '''
import json, sys
from pyspark.sql import SparkSession, functions as F
from lakemark.connect_compat import mark_batch
from lakemark.sources._errors import guard

url, folder = sys.argv[1], sys.argv[2]
spark = SparkSession.builder.remote(url).getOrCreate()
json_read = spark.read.json(folder)
stream = spark.readStream.schema("order_id long, amount double").json(folder)
spark.range(3).createOrReplaceTempView("numbers")
frames = {
    "json": lambda: json_read,
    "json_derived": lambda: json_read.where("amount > 0").select("order_id")
        .union(spark.range(2).withColumnRenamed("id", "order_id")),
    "json_joined_itself": lambda: json_read.alias("a").join(json_read.alias("b"), "order_id"),
    "json_guarded": lambda: guard(spark.read.json(folder), "json"),
    "json_subquery": lambda: json_read.where(
        F.col("order_id") < spark.range(5).select(F.max("id")).scalar()),
    "local_rows": lambda: spark.createDataFrame([(1, "a")], "n long, s string"),
    "stream": lambda: stream,
    "stream_joined": lambda: stream.join(json_read, "order_id"),
    "sql": lambda: spark.sql("select 1 as n"),
    "view": lambda: spark.table("numbers"),
}
out = {}
for name, make in frames.items():
    marked = mark_batch(make())
    out[name] = {"client": vars(marked).get("isStreaming"), "server": make().isStreaming}
    if out[name]["client"] is False:  # the marked frame is still observed and written
        rows = mark_batch(make()).observe("n", F.count(F.lit(1)).alias("c")).count()
        out[name]["rows"] = rows
print(json.dumps(out))
'''


def test_batch_frames_are_marked_and_others_left_to_the_server(connect_server: ConnectServer,
                                                               tmp_path: Path) -> None:
    need_connect_client()
    folder = tmp_path / "landing"
    folder.mkdir()
    (folder / "a.json").write_text("".join(f'{{"order_id": {i}, "amount": {i}.5}}\n'
                                           for i in range(4)))
    done = subprocess.run([sys.executable, "-c", CODE, connect_server.endpoint, str(folder)],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(SRC)})
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    for name in ("json", "json_derived", "json_joined_itself", "json_guarded", "local_rows"):
        assert out[name]["client"] is False, name  # answered in the client
        assert out[name]["server"] is False, name  # and the server agrees
    assert out["json"]["rows"] == 4
    assert out["json_derived"]["rows"] == 6
    assert out["local_rows"]["rows"] == 1
    for name in ("stream", "stream_joined", "sql", "view"):
        assert out[name]["client"] is None, name  # left to the server
    assert out["stream"]["server"] is True
    assert out["stream_joined"]["server"] is True
    # a scalar subquery's plan sits inside an expression: walked too, still batch-only
    assert out["json_subquery"] == {"client": False, "server": False, "rows": 4}
