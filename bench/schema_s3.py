"""Time a run saves on S3 when its JSON source keeps a tracked schema (issue 23).

A run over N new S3 JSON files (moto_server, a separate process) of a source whose schema
lakemark already tracks — the default since this issue — against the same run of a source
read untracked (`--schema-evolution off`: lakemark's sampled inference, which copies up to
16 files / 64 MiB of the run's files and lets Spark infer on the copies, then reads). Both
jobs first take an older batch with their bookmark enabled (the tracked job stores its
schema then), then read the N new files under `--bookmark pause` (the same files every
repeat, nothing committed), interleaved, in one warm Spark session, materialised with the
`noop` sink. The files hold `{"id", "code", "name", "amount", "ok", "tags"}` rows, 0.1 % of
`code` values not numbers.

A third job, *tracked_twice*, is the tracked run as it was before its objects were fetched once
(``sources/_fetched.py``): the same code with ``fetch_records`` returning None, so the key scan
and the typed frame each fetch every object (2 GETs per object).

Writes ``bench/results/schema_s3.json``. Usage:
``PYTHONPATH=src python bench/schema_s3.py [--files N] [--rows R] [--repeat K]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from s3_events import start_moto  # noqa: E402

BUCKET = "bench-schema"


def _body(rnd: random.Random, rows: int, start: int) -> bytes:
    lines = []
    for i in range(start, start + rows):
        row = {"id": i, "code": rnd.randint(0, 1000), "name": f"name-{rnd.randint(0, 10**6)}",
               "amount": rnd.random() * 100, "ok": rnd.random() < 0.5,
               "tags": ["a", "b"][: rnd.randint(0, 2)]}
        if rnd.random() < 0.001:
            row["code"] = f"X{row['code']}"
        lines.append(json.dumps(row))
    return ("\n".join(lines) + "\n").encode()


def _put_batch(client: Any, prefix: str, files: int, rows: int, seed: int) -> int:
    bodies = [(f"{prefix}/part-{i:05d}.json", _body(random.Random(seed * 100_000 + i), rows,
                                                     i * rows)) for i in range(files)]

    def put(item: tuple[str, bytes]) -> None:
        client.put_object(Bucket=BUCKET, Key=item[0], Body=item[1])

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put, bodies))
    return sum(len(b) for _, b in bodies)


@contextlib.contextmanager
def _fetch_twice(on: bool) -> Iterator[None]:
    """With ``on``: tracked reads fetch each S3 object for the scan and again for the frame."""
    from lakemark.sources import _fetched

    saved = _fetched.fetch_records
    if on:
        _fetched.fetch_records = lambda *args, **kwargs: None  # type: ignore[assignment]
    try:
        yield
    finally:
        _fetched.fetch_records = saved  # type: ignore[assignment]


def _run(job_name: str, state: str, source: str, evolution: str, bookmark: str) -> float:
    from lakemark import Job

    start = time.perf_counter()
    with _fetch_twice(job_name == "tracked_twice"), \
            Job(job_name, state=state, bookmark=bookmark) as job:
        df = job.read_files(source, format="json", ctx="src", schema_evolution=evolution)
        df.write.format("noop").mode("overwrite").save()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "schema_s3.json"))
    args = parser.parse_args(argv)
    proc, endpoint = start_moto()
    os.environ.update({"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "bench",
                       "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"})
    try:
        import boto3

        from lakemark.spark import get_spark

        client = boto3.client("s3", endpoint_url=endpoint)
        client.create_bucket(Bucket=BUCKET)
        _put_batch(client, "old", 20, args.rows, 1)
        get_spark()
        with tempfile.TemporaryDirectory() as tmp:
            state = f"sqlite:///{Path(tmp) / 'state.db'}"
            source = f"s3://{BUCKET}/"
            _first_runs(state, source)  # the tracked job keeps its schema
            size = _put_batch(client, "new", args.files, args.rows, 2)
            load_start = os.getloadavg()
            order = [("tracked", "addNewColumns"), ("untracked", "off"),
                     ("tracked_twice", "addNewColumns")]
            times: dict[str, list[float]] = {name: [] for name, _ in order}
            for i in range(args.repeat):
                for job_name, evolution in order[i % 3:] + order[:i % 3]:
                    times[job_name].append(_run(job_name, state, source, evolution, "pause"))
        load_end = os.getloadavg()
    finally:
        proc.kill()
    med = {k: statistics.median(v) for k, v in times.items()}
    result = {
        "files": args.files, "rows_per_file": args.rows, "bytes": size,
        "repeat": args.repeat, "samples_s": times, "median_s": med,
        "saved_s": med["untracked"] - med["tracked"],
        "untracked_over_tracked": med["untracked"] / med["tracked"],
        "saved_against_twice_s": med["tracked_twice"] - med["tracked"],
        "twice_over_tracked": med["tracked_twice"] / med["tracked"],
        "load_start": load_start, "load_end": load_end,
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


def _first_runs(state: str, source: str) -> None:
    """The jobs take the objects there now (old/), with their bookmarks enabled."""
    for job_name, evolution in (("tracked", "addNewColumns"), ("untracked", "off"),
                                ("tracked_twice", "addNewColumns")):
        _run(job_name, state, source, evolution, "enable")


if __name__ == "__main__":
    raise SystemExit(main())
