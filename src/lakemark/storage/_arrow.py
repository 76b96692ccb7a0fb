"""``pyarrow.fs`` filesystems for local paths and S3, for reading objects without the Spark
classpath (the Arrow read path) and for executors that must rebuild the same filesystem.

Unlike boto3, pyarrow's ``S3FileSystem`` does **not** read ``AWS_ENDPOINT_URL`` /
``AWS_ENDPOINT_URL_S3`` (pyarrow 26 still goes to ``<bucket>.s3.<region>.amazonaws.com``), so the
endpoint is resolved here, with the same precedence as botocore, and passed as
``endpoint_override`` + ``scheme``. Credentials are never put in the configuration: the AWS SDK
inside pyarrow finds them in each process's own environment, profile or instance metadata.
"""

from __future__ import annotations

import os
import urllib.parse
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ._uri import parse_uri

__all__ = ["arrow_fs_config", "arrow_filesystem_from_config", "arrow_filesystem", "arrow_path"]

if TYPE_CHECKING:
    import pyarrow.fs as pafs

_ARROW_MAX_ATTEMPTS = 8


def _endpoint_from_env() -> str | None:
    """The S3 endpoint as botocore would choose it (``AWS_ENDPOINT_URL_S3`` first)."""
    if os.environ.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "").lower() == "true":
        return None
    return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or None


def arrow_fs_config(uri: str | None = None) -> dict[str, Any]:
    """The filesystem settings for ``uri`` as a plain, picklable dict with no secrets.

    For a local path: ``{"kind": "local"}``. For S3 (or when ``uri`` is omitted):
    ``{"kind": "s3", "endpoint_override": "host:port" | None, "scheme": "http" | "https",
    "region": str | None}``, taken from ``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL`` and
    ``AWS_REGION`` / ``AWS_DEFAULT_REGION``. Resolve it once on the driver and ship it to
    executors, whose environment need not repeat the endpoint.
    """
    if uri is not None and not parse_uri(uri).is_s3:
        return {"kind": "local"}
    endpoint = _endpoint_from_env()
    scheme, override = "https", None
    if endpoint:
        parts = urllib.parse.urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(
                f"S3 endpoint {endpoint!r} (from AWS_ENDPOINT_URL[_S3]) is not an http(s) URL"
            )
        scheme, override = parts.scheme, parts.netloc
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or None
    return {"kind": "s3", "endpoint_override": override, "scheme": scheme, "region": region}


def arrow_filesystem_from_config(cfg: dict[str, Any]) -> pafs.FileSystem:
    """Rebuild the ``pyarrow.fs`` filesystem described by :func:`arrow_fs_config`."""
    import pyarrow.fs as pafs

    kind = cfg.get("kind")
    if kind == "local":
        return pafs.LocalFileSystem()
    if kind != "s3":
        raise ConfigError(f"unknown filesystem kind {kind!r} in filesystem configuration")
    return pafs.S3FileSystem(
        region=cfg.get("region"),
        endpoint_override=cfg.get("endpoint_override"),
        scheme=cfg.get("scheme") or "https",
        retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=_ARROW_MAX_ATTEMPTS),
    )


def arrow_path(uri: str) -> str:
    """The path pyarrow wants for ``uri``: ``bucket/key`` for S3, the absolute path locally."""
    loc = parse_uri(uri)
    return f"{loc.bucket}/{loc.key}".rstrip("/") if loc.is_s3 else loc.key


def arrow_filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    """A ``pyarrow.fs`` filesystem and the path inside it for a local path or S3 URI."""
    return arrow_filesystem_from_config(arrow_fs_config(uri)), arrow_path(uri)
