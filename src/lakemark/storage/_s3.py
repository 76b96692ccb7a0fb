"""Listing S3 prefixes with ``ListObjectsV2``, and the boto3 client they use.

The client is a plain boto3 client built from the standard AWS configuration chain, so
``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL`` (botocore reads both natively, the S3-specific one
first), profiles, credentials and ``AWS_DEFAULT_REGION`` all work as they do for the AWS CLI.

Every botocore error is converted to :class:`SourceError` here, naming the URI (and the bucket
when it is missing). Messages are built from the error code and botocore's message only; they
never carry credentials.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime, timedelta, UTC
from typing import Any

from ..errors import SourceError
from ..planning.files import FileEntry
from ._filters import Exclusions, has_hidden_segment
from ._uri import Location

__all__ = ["s3_client", "list_s3", "probe_s3", "PAGE_SIZE"]

PAGE_SIZE = 1000  # ListObjectsV2's maximum
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def s3_client(
    *,
    endpoint_url: str | None = None,
    region: str | None = None,
    max_attempts: int | None = None,
) -> Any:
    """A boto3 S3 client from the standard AWS configuration, with sane retries.

    Arguments override the environment. Retries default to botocore's ``standard`` mode with 8
    attempts (throttling and 5xx errors back off instead of failing a run), unless the user set
    ``AWS_RETRY_MODE`` / ``AWS_MAX_ATTEMPTS``, which are then honoured. The region falls back to
    ``AWS_REGION`` when ``AWS_DEFAULT_REGION`` and the profile set none.
    """
    import boto3
    from botocore.config import Config

    retries: dict[str, Any] = {}
    if max_attempts is not None:
        retries = {"mode": os.environ.get("AWS_RETRY_MODE", "standard"),
                   "max_attempts": max_attempts}
    elif not (os.environ.get("AWS_RETRY_MODE") or os.environ.get("AWS_MAX_ATTEMPTS")):
        retries = {"mode": "standard", "max_attempts": 8}
    config = Config(retries=retries or None, connect_timeout=10, read_timeout=60)
    session = boto3.session.Session()
    region = region or session.region_name or os.environ.get("AWS_REGION") or None
    kwargs: dict[str, Any] = {"config": config}
    if region:
        kwargs["region_name"] = region
    if endpoint_url:
        kwargs["endpoint_url"] = endpoint_url
    return session.client("s3", **kwargs)


def _mtime_ms(value: datetime) -> int:
    """An S3 ``LastModified`` as exact integer epoch milliseconds (no float rounding)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return (value - _EPOCH) // _MS


def _convert(exc: Exception, loc: Location) -> SourceError:
    """A botocore error as a :class:`SourceError` naming the URI (never credentials)."""
    from botocore.exceptions import ClientError

    uri = loc.original
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", "")) or "Unknown"
        message = str(error.get("Message", "")) or code
        if code in ("NoSuchBucket", "404"):
            return SourceError(
                f"S3 bucket {loc.bucket!r} does not exist (listing {uri})",
                uri=str(uri))
        if code in ("AccessDenied", "403", "AllAccessDisabled", "InvalidAccessKeyId",
                    "SignatureDoesNotMatch", "ExpiredToken"):
            return SourceError(f"access to {uri} denied by S3 ({code}: {message})", uri=str(uri))
        return SourceError(f"cannot list {uri}: S3 error {code}: {message}", uri=str(uri))
    return SourceError(f"cannot list {uri}: {type(exc).__name__}: {exc}", uri=str(uri))


def _pages(client: Any, loc: Location, params: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """ListObjectsV2 responses for ``params``, through boto3's paginator (which follows the
    continuation tokens); botocore errors become :class:`SourceError` naming the URI."""
    from botocore.exceptions import BotoCoreError, ClientError

    request = {"Bucket": loc.bucket, "MaxKeys": PAGE_SIZE, **params}
    pages = client.get_paginator("list_objects_v2").paginate(**request)
    try:
        yield from pages
    except (ClientError, BotoCoreError) as exc:
        raise _convert(exc, loc) from exc


def _is_marker(key: str) -> bool:
    """A "folder marker": an empty object the console or EMR creates to show a folder."""
    return key.endswith("/") or key.endswith("_$folder$")


def list_s3(
    client: Any,
    loc: Location,
    *,
    recurse: bool,
    exclusions: Exclusions,
    start_after: str | None = None,
) -> tuple[list[FileEntry], int]:
    """Objects under ``loc`` as unsorted entries, and the number of ListObjectsV2 calls made.

    The key is treated as a folder: ``s3://b/data`` lists ``data/…``. Only when nothing at all
    exists under ``data/`` is the key tried as one object (a second, one-key request); so when
    both an object ``data`` and objects under ``data/`` exist, the folder wins. With
    ``start_after`` (a full key) the key is always a folder and the listing starts after it.
    """
    key = loc.key
    prefix = key if (not key or key.endswith("/")) else key + "/"
    params: dict[str, Any] = {"Prefix": prefix}
    if not recurse:
        params["Delimiter"] = "/"
    if start_after:
        params["StartAfter"] = start_after
    files: list[FileEntry] = []
    requests = 0
    raw_keys = 0
    for page in _pages(client, loc, params):
        requests += 1
        for obj in page.get("Contents", ()):
            raw_keys += 1
            name: str = obj["Key"]
            rel = name[len(prefix):]
            if not rel or _is_marker(name) or has_hidden_segment(rel):
                continue
            full = f"s3://{loc.bucket}/{name}"
            if exclusions and exclusions.excludes(rel, full):
                continue
            files.append(FileEntry(_mtime_ms(obj["LastModified"]), full, int(obj["Size"])))
        raw_keys += len(page.get("CommonPrefixes", ()))
    if raw_keys or prefix == key or start_after:
        return files, requests

    # Nothing under "key/": maybe the key names one object. The smallest key with prefix
    # `key` is `key` itself, so one ListObjectsV2 call with MaxKeys=1 answers exactly, using
    # the same permission as the listing (HeadObject would need s3:GetObject).
    page = next(_pages(client, loc, {"Prefix": key, "MaxKeys": 1}))
    requests += 1
    contents = page.get("Contents", ())
    if contents and contents[0]["Key"] == key:
        obj = contents[0]
        name = key.rsplit("/", 1)[-1]
        full = f"s3://{loc.bucket}/{key}"
        if not exclusions.excludes(name, full):
            files.append(FileEntry(_mtime_ms(obj["LastModified"]), full, int(obj["Size"])))
    return files, requests


def probe_s3(client: Any, loc: Location) -> None:
    """One cheap ListObjectsV2 call: raises :class:`SourceError` if the bucket is missing or
    cannot be listed (an empty prefix is fine)."""
    next(_pages(client, loc, {"Prefix": loc.key, "MaxKeys": 1}))
