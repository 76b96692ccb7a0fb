"""Scenario 3: S3 listing cost of planning N new keys among M, on moto_server.

Keys are lexically ordered (``date=YYYY-MM-DD/part-…``). Every ListObjectsV2 request is
counted on the wire side of the boto3 client (a botocore ``before-call`` hook), independently
of lakemark's own count. Compared:

* full: ``list_files`` (what ``Job.read_files`` does today) + ``plan_files``;
* incremental: ``list_files_after(last processed key)`` + ``plan_files`` on that listing,
  checked to plan exactly the same files as the full listing;
* the same two through a job: ``Job.plan_files`` (as ``read_files`` plans) with and without
  ``incremental_listing=True``, the second run of each after the first took the M existing
  keys; calls as lakemark counts them in the run's manifest (``listing.requests``).
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from gen import key_for  # noqa: E402
from s3_events import start_moto  # noqa: E402

BUCKET = "bench-listing"


def _put_all(client: Any, keys: list[str]) -> None:
    def put(key: str) -> None:
        client.put_object(Bucket=BUCKET, Key=key, Body=b'{"id": 1}\n')

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put, keys))


def scenario(*, existing: int, new: int, per_day: int = 1000) -> dict[str, Any]:
    proc, endpoint = start_moto()
    os.environ.update({"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "bench",
                       "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"})
    try:
        from botocore.config import Config

        import boto3
        from lakemark.planning import FileOptions, plan_files
        from lakemark.storage import list_files, list_files_after

        client = boto3.client("s3", endpoint_url=endpoint,
                              config=Config(max_pool_connections=16))
        calls = {"ListObjectsV2": 0}

        def count(**_: Any) -> None:
            calls["ListObjectsV2"] += 1

        client.meta.events.register("before-call.s3.ListObjectsV2", count)
        client.create_bucket(Bucket=BUCKET)
        old_keys = [f"in/{key_for(i // per_day, i % per_day, 'date', 'json')}"
                    for i in range(existing)]
        t0 = time.perf_counter()
        _put_all(client, old_keys)
        put_s = time.perf_counter() - t0
        uri = f"s3://{BUCKET}/in/"
        state_url = f"sqlite:///{tempfile.mkdtemp(prefix='lakemark-bench-listing-')}/state.db"
        job_runs = {mode: _job_plan(state_url, uri, mode) for mode in ("full", "incremental")}
        first = list_files(uri, s3_client=client)
        state = plan_files(None, first.entries, first.started_ms).next_state
        last_key = max(e.path for e in first.entries)
        time.sleep(0.05)
        first_day = existing // per_day + 1
        _put_all(client, [f"in/{key_for(first_day + i // per_day, i % per_day, 'date', 'json')}"
                          for i in range(new)])
        time.sleep(0.01)

        calls["ListObjectsV2"] = 0
        t0 = time.perf_counter()
        full = list_files(uri, s3_client=client)
        full_plan = plan_files(state, full.entries, full.started_ms, FileOptions())
        full_s = time.perf_counter() - t0
        full_calls = calls["ListObjectsV2"]

        calls["ListObjectsV2"] = 0
        t0 = time.perf_counter()
        inc = list_files_after(uri, last_key, s3_client=client)
        inc_plan = plan_files(state, inc.entries, inc.started_ms, FileOptions())
        inc_s = time.perf_counter() - t0
        inc_calls = calls["ListObjectsV2"]
        job_runs = {mode: _job_plan(state_url, uri, mode) for mode in ("full", "incremental")}
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    assert [f.path for f in full_plan.files] == [f.path for f in inc_plan.files]
    assert len(full_plan.files) == new, len(full_plan.files)
    assert job_runs["full"]["planned_paths"] == job_runs["incremental"]["planned_paths"]
    assert job_runs["incremental"]["listing"]["mode"] == "start-after"
    for run in job_runs.values():
        run.pop("planned_paths")
    total = existing + new
    target_calls = math.ceil(new / 1000) + 2
    return {
        "existing_keys": existing, "new_keys": new, "keys_per_date_prefix": per_day,
        "put_s": round(put_s, 2),
        "full_listing": {"list_objects_v2_calls": full_calls, "lakemark_counted": full.requests,
                         "seconds": round(full_s, 3), "planned": len(full_plan.files)},
        "start_after_listing": {"list_objects_v2_calls": inc_calls,
                                "lakemark_counted": inc.requests,
                                "seconds": round(inc_s, 3), "planned": len(inc_plan.files)},
        "same_plan": True,
        "target_calls": target_calls,
        "full_listing_expected_calls": math.ceil(total / 1000),
        "meets_target_start_after": inc_calls <= target_calls,
        "job_plan_files": job_runs,
        "meets_target_job_read_files":
            job_runs["incremental"]["listing"]["requests"] <= target_calls,
        "calls_ratio_full_over_start_after": round(full_calls / max(inc_calls, 1), 2),
        "note": ("Job.read_files/plan_files with incremental_listing=True (ingest files "
                 "--incremental-listing) list only the keys after the bookmark's start key and "
                 "plan the same files as the job that lists in full; without it the whole "
                 "prefix is listed every run."),
    }


def _job_plan(state: str, uri: str, mode: str) -> dict[str, Any]:
    """One run of a job that plans ``uri``; its listing as recorded in the manifest."""
    from lakemark import Job
    from lakemark.state import open_store

    t0 = time.perf_counter()
    with Job(f"listing-{mode}", state=state) as job:
        plan = job.plan_files(uri, ctx="src", incremental_listing=mode == "incremental")
        run_id = job.run_id
    seconds = time.perf_counter() - t0
    store = open_store(state)
    try:
        [entry] = [i.plan for i in store.run_inputs(run_id) if i.ctx == "src"]
    finally:
        store.close()
    return {"listing": entry["listing"], "planned": len(plan.files),
            "seconds": round(seconds, 3), "planned_paths": [f.path for f in plan.files]}
