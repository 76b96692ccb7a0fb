"""S3 for :mod:`._fs`, through boto3: publish is a server-side copy, small files are single
``PutObject`` requests (atomic on S3: a reader gets the whole object or none)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ..errors import SinkError

__all__ = ["S3FileSystem"]

log = logging.getLogger("lakemark")

#: Objects up to this size are published with one ``CopyObject``; larger ones (S3's single-copy
#: limit is 5 GiB) with boto3's managed multipart copy.
_SINGLE_COPY_LIMIT = 5 * 1024 ** 3


class S3FileSystem:
    """A folder target under an S3 prefix, through boto3 (the standard AWS configuration,
    ``AWS_ENDPOINT_URL[_S3]`` included): publish is a server-side copy, records are single
    ``PutObject`` requests (atomic on S3: a reader gets the whole object or none)."""

    def __init__(self, bucket: str, prefix: str, client: Any = None) -> None:
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self._client = client

    @property
    def root(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"

    @property
    def client(self) -> Any:
        if self._client is None:
            from ._s3 import s3_client

            self._client = s3_client()
        return self._client

    def key(self, rel: str) -> str:
        """The object key of a path relative to the root."""
        return f"{self.prefix}/{rel}" if self.prefix else rel

    def _error(self, action: str, rel: str, exc: Exception) -> SinkError:
        from botocore.exceptions import ClientError

        where = f"s3://{self.bucket}/{self.key(rel)}"
        if isinstance(exc, ClientError):
            error = exc.response.get("Error", {})
            code = str(error.get("Code", "")) or "Unknown"
            message = str(error.get("Message", "")) or code
            return SinkError(f"cannot {action} {where}: S3 error {code}: {message}")
        return SinkError(f"cannot {action} {where}: {type(exc).__name__}: {exc}")

    def _errors(self) -> tuple[type[Exception], ...]:
        from botocore.exceptions import BotoCoreError, ClientError

        return (ClientError, BotoCoreError)

    def read_text(self, rel: str) -> str | None:
        from botocore.exceptions import ClientError

        try:
            answer = self.client.get_object(Bucket=self.bucket, Key=self.key(rel))
            return str(answer["Body"].read().decode("utf-8"))
        except ClientError as exc:
            if str(exc.response.get("Error", {}).get("Code")) in ("NoSuchKey", "404"):
                return None
            raise self._error("read", rel, exc) from exc
        except self._errors() as exc:
            raise self._error("read", rel, exc) from exc

    def write_text(self, rel: str, text: str) -> None:
        try:
            self.client.put_object(Bucket=self.bucket, Key=self.key(rel),
                                   Body=text.encode("utf-8"), ContentType="application/json")
        except self._errors() as exc:
            raise self._error("write", rel, exc) from exc

    def _list(self, folder: str, *, delimiter: bool, start: str = "") -> dict[str, int]:
        prefix = self.key(folder).rstrip("/") + "/" if (folder or self.prefix) else ""
        params: dict[str, Any] = {"Bucket": self.bucket, "Prefix": prefix + start}
        if delimiter:
            params["Delimiter"] = "/"
        out: dict[str, int] = {}
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(**params):
                for obj in page.get("Contents", ()):
                    name = str(obj["Key"])[len(prefix):]
                    if name and not name.endswith("/"):  # skip "folder" marker objects
                        out[name] = int(obj.get("Size", 0))
        except self._errors() as exc:
            raise self._error("list", folder + "/", exc) from exc
        return out

    def names(self, folder: str, start: str = "") -> list[str]:
        return list(self._list(folder, delimiter=True, start=start))

    def files(self, folder: str) -> dict[str, int]:
        return self._list(folder, delimiter=False)

    def exists(self, rel: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self.client.head_object(Bucket=self.bucket, Key=self.key(rel))
            return True
        except ClientError as exc:
            if str(exc.response.get("Error", {}).get("Code")) in ("NoSuchKey", "404",
                                                                    "NotFound"):
                return False
            raise self._error("inspect", rel, exc) from exc
        except self._errors() as exc:
            raise self._error("inspect", rel, exc) from exc

    def publish(self, source: str, dest: str, size: int) -> None:
        copy_source = {"Bucket": self.bucket, "Key": self.key(source)}
        try:
            if size < _SINGLE_COPY_LIMIT:
                self.client.copy_object(Bucket=self.bucket, Key=self.key(dest),
                                        CopySource=copy_source)
            else:
                self.client.copy(copy_source, self.bucket, self.key(dest))
        except self._errors() as exc:
            raise self._error("publish", dest, exc) from exc

    def delete(self, rels: Sequence[str]) -> None:
        keys = [self.key(rel) for rel in rels]
        for start in range(0, len(keys), 1000):
            batch = [{"Key": key} for key in keys[start:start + 1000]]
            try:
                answer = self.client.delete_objects(Bucket=self.bucket,
                                                    Delete={"Objects": batch, "Quiet": True})
            except self._errors() as exc:
                raise self._error("delete", rels[start], exc) from exc
            errors = answer.get("Errors") or []
            if errors:
                first = errors[0]
                raise SinkError(f"cannot delete s3://{self.bucket}/{first.get('Key')}: S3 error "
                                f"{first.get('Code')}: {first.get('Message')} "
                                f"({len(errors)} object(s) not deleted)")

    def remove_tree(self, folder: str) -> None:
        try:
            self.delete([f"{folder}/{rel}" for rel in self.files(folder)])
        except SinkError as exc:
            log.warning("could not remove %s/%s: %s", self.root, folder, exc)
