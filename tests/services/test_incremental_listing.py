"""Incremental (StartAfter) listing of an S3 file source on moto_server: a run lists only the
keys after the last one the bookmark covers — ceil(N/1000) + 2 ListObjectsV2 calls at most for N
new keys, however many are behind — plans the same files as a full listing, never passes over
a file a bounded run left waiting, and the periodic full listing finds a key that arrived out
of order."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from lakemark import Job
from lakemark.errors import ConfigError
from lakemark.state import open_store

pytestmark = pytest.mark.services

BUCKET = "landing"
SOURCE = f"s3://{BUCKET}/events"


def put(client: Any, keys: list[str]) -> None:
    for key in keys:
        client.put_object(Bucket=BUCKET, Key=f"events/{key}", Body=b'{"id": 1}\n')


def day_keys(day: int, count: int, start: int = 0) -> list[str]:
    return [f"date=2024-01-{day:02d}/part-{i:05d}.json" for i in range(start, start + count)]


def plan(state: str, job: str = "incr", **kw: Any) -> tuple[list[str], dict[str, Any]]:
    """Plan one run (nothing is read); the planned keys and the source's manifest entry."""
    with Job(job, state=state) as j:
        planned = j.plan_files(SOURCE, ctx="src", **kw).files
        files = [f.path.split("/events/", 1)[1] for f in planned]
        run_id = j.run_id
    store = open_store(state)
    try:
        [inputs] = [i for i in store.run_inputs(run_id) if i.ctx == "src"]
        return sorted(files), dict(inputs.plan)
    finally:
        store.close()


@pytest.fixture
def bucket(s3: Any) -> Any:
    client = s3.client("s3")
    client.create_bucket(Bucket=BUCKET)
    return client


def test_new_keys_cost_a_few_calls_and_plan_like_a_full_listing(
    bucket: Any, tmp_path: Path
) -> None:
    state = f"sqlite:///{tmp_path / 's.db'}"
    put(bucket, day_keys(1, 1100))
    first, entry = plan(state, incremental_listing=True)
    assert len(first) == 1100
    assert entry["listing"]["mode"] == "full" and entry["listing"]["requests"] == 2
    # A full-listing job of the same source, to compare with.
    assert len(plan(state, job="full")[0]) == 1100

    new = day_keys(2, 5)
    put(bucket, new)
    taken, entry = plan(state, incremental_listing=True)
    assert taken == sorted(new)
    assert entry["listing"]["mode"] == "start-after"
    assert entry["listing"]["start_after"] == {SOURCE: f"{SOURCE}/{day_keys(1, 1100)[-1]}"}
    assert entry["listing"]["requests"] <= math.ceil(len(new) / 1000) + 2
    assert entry["listing"]["requests"] == 1  # against ceil(1105 / 1000) = 2 for a full listing
    assert plan(state, job="full")[0] == taken


def test_bounded_runs_leave_no_waiting_file_behind_the_start_key(
    bucket: Any, tmp_path: Path
) -> None:
    state = f"sqlite:///{tmp_path / 's.db'}"
    put(bucket, day_keys(1, 3))
    assert len(plan(state, incremental_listing=True)[0]) == 3
    put(bucket, day_keys(2, 5))
    seen: list[str] = []
    for _ in range(3):  # 2 + 2 + 1: the start key never passes a file still waiting
        taken, entry = plan(state, incremental_listing=True, bounded_files=2)
        assert entry["listing"]["mode"] == "start-after"
        seen += taken
    assert sorted(seen) == sorted(day_keys(2, 5)) and len(seen) == 5
    assert plan(state, incremental_listing=True)[0] == []


def test_a_key_behind_the_start_key_is_found_by_the_periodic_full_listing(
    bucket: Any, tmp_path: Path
) -> None:
    state = f"sqlite:///{tmp_path / 's.db'}"
    put(bucket, day_keys(2, 2))
    kw = {"incremental_listing": True, "full_listing_every": 3}
    assert plan(state, **kw)[1]["listing"]["mode"] == "full"
    late = day_keys(1, 1, start=7)  # sorts before every key already taken
    put(bucket, late)
    for _ in range(2):
        taken, entry = plan(state, **kw)
        assert taken == [] and entry["listing"]["mode"] == "start-after"
    taken, entry = plan(state, **kw)  # the third run after a full listing lists everything
    assert entry["listing"]["mode"] == "full"
    assert taken == late


def test_local_sources_and_bad_options_are_refused_before_any_change(
    bucket: Any, tmp_path: Path
) -> None:
    state = f"sqlite:///{tmp_path / 's.db'}"
    local = tmp_path / "in"
    local.mkdir()
    with pytest.raises(ConfigError, match="applies to S3 sources"):
        with Job("j", state=state) as job:
            job.plan_files(str(local), ctx="src", incremental_listing=True)
    with pytest.raises(ConfigError, match="fullListingEvery must be at least 1"):
        with Job("j", state=state) as job:
            job.plan_files(SOURCE, ctx="src", incremental_listing=True, full_listing_every=0)
    store = open_store(state)
    try:
        assert store.get_bookmark("j").version == 0
    finally:
        store.close()
