"""S3 event notifications parsed and ordered (pure: no AWS, no Spark)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lakemark.errors import ConfigError
from lakemark.events import EventParseError, ObjectFilter, S3EventRecord, parse_message
from lakemark.events.records import latest_per_object


def s3_record(key: str, name: str = "ObjectCreated:Put", sequencer: str | None = "0A1",
              time: str = "2026-01-02T03:04:05.678Z", size: int = 10) -> dict[str, object]:
    obj: dict[str, object] = {"key": key, "size": size, "eTag": "abc"}
    if sequencer:
        obj["sequencer"] = sequencer
    return {"eventVersion": "2.1", "eventSource": "aws:s3", "eventTime": time,
            "eventName": name, "s3": {"bucket": {"name": "bkt"}, "object": obj}}


def test_s3_notification_is_parsed_with_decoded_keys() -> None:
    body = json.dumps({"Records": [s3_record("in/a+b%2Bc%C3%A9.json"),
                                   s3_record("in/x.json", "ObjectRemoved:Delete")]})
    created, removed = parse_message(body)
    assert created.key == "in/a b+cé.json" and created.created and not created.removed
    assert created.uri == "s3://bkt/in/a b+cé.json"
    assert created.event_time_ms == 1767323045678
    assert (created.size, created.etag, created.sequencer) == (10, "abc", "0A1")
    assert removed.removed and removed.key == "in/x.json"


def test_sns_wrapped_notification_and_test_event() -> None:
    inner = json.dumps({"Records": [s3_record("k.json")]})
    wrapped = json.dumps({"Type": "Notification", "MessageId": "m", "Message": inner})
    assert [r.key for r in parse_message(wrapped)] == ["k.json"]
    test_event = json.dumps({"Service": "Amazon S3", "Event": "s3:TestEvent", "Bucket": "bkt"})
    assert parse_message(test_event) == []


def test_other_event_types_are_not_ingestion_events() -> None:
    body = json.dumps({"Records": [s3_record("k", "ObjectRestore:Completed")]})
    assert parse_message(body) == []


@pytest.mark.parametrize("body, needle", [
    ("not json", "not JSON"),
    ("[1, 2]", "not a JSON object"),
    (json.dumps({"hello": 1}), "Records"),
    (json.dumps({"Records": [{"eventName": "ObjectCreated:Put"}]}), "s3 section"),
    (json.dumps({"Records": [s3_record("")]}), "no object key"),
    (json.dumps({"Records": [s3_record("k", time="yesterday")]}), "eventTime"),
    (json.dumps({"Records": [s3_record("k", size=-1)]}), "size"),
])
def test_malformed_messages_say_what_is_wrong(body: str, needle: str) -> None:
    with pytest.raises(EventParseError, match=needle):
        parse_message(body)


def test_record_id_is_stable_for_redelivery_and_distinct_per_event() -> None:
    body = json.dumps({"Records": [s3_record("k", sequencer="0A1")]})
    assert parse_message(body)[0].record_id == parse_message(body)[0].record_id
    again = json.dumps({"Records": [s3_record("k", sequencer="0A2")]})
    assert parse_message(again)[0].record_id != parse_message(body)[0].record_id


def record(key: str, seq: str, name: str = "ObjectCreated:Put") -> S3EventRecord:
    return S3EventRecord("bkt", key, name, 0, 1, None, None, seq)


@given(st.permutations(["1", "02", "0A", "FF", "100"]))
def test_latest_event_per_object_follows_the_sequencer_in_any_arrival_order(
    order: list[str],
) -> None:
    # Sequencers compare as hex after left-padding: "100" is the last of these.
    events = [record("k", seq, "ObjectRemoved:Delete" if seq == "FF" else "ObjectCreated:Put")
              for seq in order]
    latest = latest_per_object(events)
    assert latest[("bkt", "k")].sequencer == "100"
    assert latest[("bkt", "k")].created


def test_object_filter() -> None:
    f = ObjectFilter(key_prefix="in/", key_suffix=".json", key_regex=r"day=\d+",
                     ignore_prefixes=("in/tmp/",))
    assert f.keeps("in/day=1/a.json")
    assert not f.keeps("out/day=1/a.json")
    assert not f.keeps("in/day=1/a.csv")
    assert not f.keeps("in/tmp/day=1/a.json")
    assert not f.keeps("in/x/a.json")
    with pytest.raises(ConfigError, match="key-regex"):
        ObjectFilter(key_regex="(")
