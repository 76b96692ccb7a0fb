"""The AWS Glue Data Catalog through its API (boto3 ``glue`` client).

The client is built from the standard AWS configuration: profile (``AWS_PROFILE``), region
(``glue:<region>``, else ``AWS_REGION``/``AWS_DEFAULT_REGION``/the profile), credentials, and
endpoint (``AWS_ENDPOINT_URL_GLUE``, then ``AWS_ENDPOINT_URL``, which botocore also reads
itself). Errors are converted where they come in: a missing database/table/connection is a
:class:`ConfigError` naming it; other failures to read are :class:`SourceError`, to write
:class:`SinkError`. Messages carry botocore's error code and message, never credentials.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..errors import ConfigError, LakemarkError, SinkError, SourceError
from ._folder import close_matches
from ._model import CatalogTable, Connection, Database, Partition
from ._predicate import compile_predicate

__all__ = ["GlueCatalog"]

log = logging.getLogger("lakemark.catalog")

_BATCH = 100  # BatchCreatePartition takes at most 100 partitions per call
_NOT_FOUND = "EntityNotFoundException"


def _error_code(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, Mapping):
        return str(response.get("Error", {}).get("Code", "")) or "Unknown"
    return ""


def _error_text(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, Mapping):
        error = response.get("Error", {})
        code = str(error.get("Code", "")) or "Unknown"
        message = str(error.get("Message", "")) or code
        return f"{code}: {message}"
    return f"{type(exc).__name__}: {exc}"


class GlueCatalog:
    """The Glue Data Catalog of an account and region (``catalog_id``: another account's)."""

    def __init__(
        self,
        region: str | None = None,
        *,
        env: Mapping[str, str] | None = None,
        catalog_id: str | None = None,
        client: Any = None,
    ) -> None:
        self._env: Mapping[str, str] = os.environ if env is None else env
        self._explicit_env = env is not None
        self._region = region
        self._catalog_id = catalog_id
        self._client = client

    # -- client ------------------------------------------------------------------------------------
    @property
    def endpoint(self) -> str | None:
        """The endpoint set in the environment, if any (botocore's default otherwise)."""
        if self._env.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "").lower() == "true":
            return None
        return self._env.get("AWS_ENDPOINT_URL_GLUE") or self._env.get("AWS_ENDPOINT_URL") or None

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self._make_client()
        return self._client

    def _make_client(self) -> Any:
        import boto3
        from botocore.config import Config
        from botocore.exceptions import BotoCoreError

        env = self._env
        # Throttling and 5xx answers back off instead of failing a run (8 attempts), unless
        # the environment says otherwise.
        retries: dict[str, Any] = {"mode": env.get("AWS_RETRY_MODE") or "standard",
                                   "max_attempts": 8}
        if env.get("AWS_MAX_ATTEMPTS"):
            try:
                retries["max_attempts"] = max(1, int(env["AWS_MAX_ATTEMPTS"]))
            except ValueError:
                raise ConfigError(
                    f"AWS_MAX_ATTEMPTS={env['AWS_MAX_ATTEMPTS']!r} is not a number") from None
        config = Config(retries=retries, connect_timeout=10, read_timeout=60)
        session_kwargs: dict[str, Any] = {}
        if env.get("AWS_PROFILE"):
            session_kwargs["profile_name"] = env["AWS_PROFILE"]
        if self._explicit_env:  # an environment handed in, not the process's own
            for key, arg in (("AWS_ACCESS_KEY_ID", "aws_access_key_id"),
                             ("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key"),
                             ("AWS_SESSION_TOKEN", "aws_session_token")):
                if env.get(key):
                    session_kwargs[arg] = env[key]
        try:
            session = boto3.session.Session(**session_kwargs)
            region = (self._region or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
                      or session.region_name)
            if not region:
                raise ConfigError(
                    "the AWS Glue Data Catalog needs a region: use --catalog glue:<region> or "
                    "set AWS_REGION"
                )
            self._region = region
            kwargs: dict[str, Any] = {"config": config, "region_name": region}
            if self.endpoint:
                kwargs["endpoint_url"] = self.endpoint
            return session.client("glue", **kwargs)
        except BotoCoreError as exc:
            raise ConfigError(f"cannot set up the AWS Glue client: {exc}") from None

    def describe(self) -> str:
        region = self._region or self._env.get("AWS_REGION") or self._env.get(
            "AWS_DEFAULT_REGION") or "default region"
        parts = [f"region {region}"]
        if self.endpoint:
            parts.append(f"endpoint {self.endpoint}")
        if self._catalog_id:
            parts.append(f"catalog {self._catalog_id}")
        return "AWS Glue Data Catalog (" + ", ".join(parts) + ")"

    def __repr__(self) -> str:
        return f"GlueCatalog({self.describe()!r})"

    # -- calls -------------------------------------------------------------------------------------
    def _args(self, **kwargs: Any) -> dict[str, Any]:
        if self._catalog_id:
            kwargs["CatalogId"] = self._catalog_id
        return kwargs

    def _call(self, operation: str, what: str, *, write: bool = False, **kwargs: Any) -> Any:
        """One API call; errors other than "not found" converted (not-found re-raised)."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return getattr(self.client, operation)(**self._args(**kwargs))
        except ClientError as exc:
            if _error_code(exc) == _NOT_FOUND:
                raise
            raise self._failure(exc, what, write) from None
        except BotoCoreError as exc:
            raise self._failure(exc, what, write) from None

    def _pages(self, operation: str, key: str, what: str, **kwargs: Any) -> Iterator[Any]:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            paginator = self.client.get_paginator(operation)
            for page in paginator.paginate(**self._args(**kwargs)):
                yield from page.get(key, ())
        except ClientError as exc:
            if _error_code(exc) == _NOT_FOUND:
                raise
            raise self._failure(exc, what, False) from None
        except BotoCoreError as exc:
            raise self._failure(exc, what, False) from None

    def _failure(self, exc: Exception, what: str, write: bool) -> LakemarkError:
        text = f"{self.describe()}: cannot {'write' if write else 'read'} {what}: " \
               f"{_error_text(exc)}"
        if _error_code(exc) in ("AccessDeniedException", "InvalidInputException",
                                "ValidationException"):
            return ConfigError(text)
        return SinkError(text) if write else SourceError(text)

    # -- databases ---------------------------------------------------------------------------------
    def list_databases(self) -> list[str]:
        return sorted(str(d["Name"]) for d in self._pages("get_databases", "DatabaseList",
                                                           "databases"))

    def get_database(self, name: str) -> Database:
        from botocore.exceptions import ClientError

        try:
            response = self._call("get_database", f"database {name!r}", Name=name)
        except ClientError:
            raise ConfigError(f"catalog database {name!r} not found in {self.describe()}"
                              + close_matches(name, self._safe(self.list_databases))) from None
        return Database.from_glue(response["Database"])

    # -- tables ------------------------------------------------------------------------------------
    def list_tables(self, database: str) -> list[CatalogTable]:
        from botocore.exceptions import ClientError

        try:
            entries = list(self._pages("get_tables", "TableList", f"tables of {database!r}",
                                       DatabaseName=database))
        except ClientError:
            raise self._missing_database(database) from None
        return [CatalogTable.from_glue(e, database) for e in entries]

    def get_table(self, database: str, name: str) -> CatalogTable:
        from botocore.exceptions import ClientError

        try:
            response = self._call("get_table", f"table {database}.{name}",
                                  DatabaseName=database, Name=name)
        except ClientError:
            try:
                names = [t.name for t in self.list_tables(database)]
            except ConfigError:
                raise ConfigError(f"catalog table {database}.{name} not found: "
                                  f"{self._missing_database(database)}") from None
            except LakemarkError:
                names = []
            raise ConfigError(f"catalog table {database}.{name} not found in {self.describe()}"
                              + close_matches(name, names)) from None
        return CatalogTable.from_glue(response["Table"], database)

    def _missing_database(self, database: str) -> ConfigError:
        return ConfigError(f"catalog database {database!r} not found in {self.describe()}"
                           + close_matches(database, self._safe(self.list_databases)))

    @staticmethod
    def _safe(listing: Any) -> list[str]:
        try:
            return list(listing())
        except LakemarkError:
            return []

    def create_or_update_table(self, table: CatalogTable) -> None:
        """UpdateTable, or CreateTable when the table does not exist yet."""
        from botocore.exceptions import ClientError

        what = f"table {table.qualified_name}"
        table_input = table.table_input()
        try:
            self._call("update_table", what, write=True, DatabaseName=table.database,
                       TableInput=table_input)
            return
        except ClientError:
            pass  # not found: create it
        try:
            self._call("create_table", what, write=True, DatabaseName=table.database,
                       TableInput=table_input)
        except ClientError:
            raise self._missing_database(table.database) from None

    # -- partitions --------------------------------------------------------------------------------
    def get_partitions(self, table: CatalogTable, predicate: str | None = None) -> list[Partition]:
        """GetPartitions (paginated); ``predicate`` is sent as ``Expression`` as far as Glue
        evaluates it exactly as lakemark does, and always applied here as well."""
        from botocore.exceptions import ClientError

        if not table.partition_keys:
            return []
        compiled = None
        expression = None
        if predicate and predicate.strip():
            compiled = compile_predicate(predicate, table.partition_keys, table.qualified_name)
            expression = compiled.glue_expression
        what = f"partitions of {table.qualified_name}"
        kwargs: dict[str, Any] = {"DatabaseName": table.database, "TableName": table.name,
                                  "ExcludeColumnSchema": True}
        try:
            try:
                entries = list(self._pages("get_partitions", "Partitions", what,
                                           **kwargs, **({"Expression": expression}
                                                        if expression else {})))
            except ConfigError:
                if not expression:
                    raise
                # The server refused the expression (e.g. partition keys of mixed types):
                # ask for everything and filter here.
                log.debug("Glue refused partition expression %r for %s; filtering locally",
                          expression, table.qualified_name)
                entries = list(self._pages("get_partitions", "Partitions", what, **kwargs))
        except ClientError:
            raise ConfigError(f"catalog table {table.qualified_name} not found in "
                              f"{self.describe()}") from None
        partitions = [Partition.from_glue(e, table) for e in entries]
        if compiled is not None:
            partitions = [p for p in partitions if compiled(p.values)]
        return partitions

    def add_partitions(self, table: CatalogTable, partitions: Sequence[Partition]) -> None:
        """BatchCreatePartition in batches of 100; partitions that exist already are kept."""
        from botocore.exceptions import ClientError

        what = f"partitions of {table.qualified_name}"
        for start in range(0, len(partitions), _BATCH):
            batch = [p.partition_input(table) for p in partitions[start:start + _BATCH]]
            try:
                response = self._call("batch_create_partition", what, write=True,
                                      DatabaseName=table.database, TableName=table.name,
                                      PartitionInputList=batch)
            except ClientError:
                raise ConfigError(f"catalog table {table.qualified_name} not found in "
                                  f"{self.describe()}") from None
            errors = [e for e in response.get("Errors", ())
                      if e.get("ErrorDetail", {}).get("ErrorCode") != "AlreadyExistsException"]
            if errors:
                first = errors[0]
                detail = first.get("ErrorDetail", {})
                raise SinkError(
                    f"{self.describe()}: cannot add {len(errors)} partition(s) to "
                    f"{table.qualified_name}; first: values {first.get('PartitionValues')}: "
                    f"{detail.get('ErrorCode')}: {detail.get('ErrorMessage')}"
                )

    # -- connections -------------------------------------------------------------------------------
    def get_connection(self, name: str, *, with_password: bool = False) -> Connection:
        """GetConnection with ``HidePassword`` unless ``with_password=True``."""
        from botocore.exceptions import ClientError

        try:
            response = self._call("get_connection", f"connection {name!r}", Name=name,
                                  HidePassword=not with_password)
        except ClientError:
            names = self._safe(lambda: [str(c["Name"]) for c in self._pages(
                "get_connections", "ConnectionList", "connections", HidePassword=True)])
            raise ConfigError(f"catalog connection {name!r} not found in {self.describe()}"
                              + close_matches(name, names)) from None
        connection = Connection.from_glue(response["Connection"])
        return connection if with_password else connection.without_secrets()
