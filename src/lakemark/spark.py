"""Getting a Spark session the way lakemark needs it, and saying clearly when Java is missing."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import weakref
from collections.abc import Mapping
from importlib import resources
from typing import TYPE_CHECKING, Any

from .connect_compat import default_parallelism, empty_frame, is_connect, not_over_connect
from .errors import ConfigError, EnvironmentProblem

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["check_java", "check_reachable", "default_parallelism", "empty_frame", "get_spark",
           "is_connect", "not_over_connect", "remote_endpoint", "spark_settings",
           "LAKEMARK_SPARK_CONF"]

#: Settings lakemark applies to sessions it creates (a caller's own values win).
LAKEMARK_SPARK_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    # The planner already knows every file: never pay for Spark to list them again.
    "spark.sql.sources.parallelPartitionDiscovery.threshold": "1000000",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    # Hadoop's checksummed local file system looks for a ".NAME.crc" beside every file and
    # cannot even build that name for a file called e.g. "a:b.json"; the raw one reads any
    # name a disk allows (and writes no .crc files).
    "spark.hadoop.fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem",
}


def _java_path() -> str | None:
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return java if java and os.path.exists(java) else None


def check_java() -> str:
    """Path of the ``java`` Spark will use; EnvironmentProblem if there is none."""
    java = _java_path()
    if not java:
        raise EnvironmentProblem(
            "Java was not found (no JAVA_HOME and no `java` on PATH). Spark needs Java 17 or "
            "newer: install it (e.g. `apt-get install openjdk-17-jre-headless`) and retry."
        )
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentProblem(f"Java at {java} could not be started: {exc}") from exc
    text = (out.stderr or out.stdout).splitlines()
    first = text[0] if text else ""
    version = first.split('"')[1] if '"' in first else ""
    major = version.split(".")[0] if version else ""
    if major.isdigit() and int(major) < 17:
        raise EnvironmentProblem(f"Spark 4 needs Java 17 or newer; {java} is {version}")
    return java


def spark_settings(
    master: str | None = None,
    conf: Mapping[str, str] | None = None,
    *,
    verbose: bool = False,
) -> tuple[str, dict[str, str]]:
    """The master and settings lakemark starts Spark with.

    ``master`` falls back to ``LAKEMARK_SPARK_MASTER``, then ``local[*]``; settings come from
    lakemark's defaults, then ``LAKEMARK_SPARK_CONF`` (a JSON object), then ``conf``.
    """
    master = master or os.environ.get("LAKEMARK_SPARK_MASTER") or "local[*]"
    settings = dict(LAKEMARK_SPARK_CONF)
    if master.startswith("local"):
        settings.setdefault("spark.driver.host", "127.0.0.1")
        settings.setdefault("spark.driver.bindAddress", "127.0.0.1")
    # Python workers must run the driver's interpreter (the one with pyarrow and lakemark),
    # not whatever `python3` comes first on PATH; PySpark reads this only from the environment.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    driver_options = []
    if not verbose:
        quiet = resources.files("lakemark.resources").joinpath("log4j2-quiet.properties")
        driver_options.append(f"-Dlog4j2.configurationFile=file:{quiet}")
    java = _java_path()
    if java:
        # Spark's classes from a class-data sharing archive: a cold driver starts faster.
        from .session.class_cache import java_options

        driver_options.append(java_options(java))
    if any(driver_options):
        settings["spark.driver.extraJavaOptions"] = " ".join(o for o in driver_options if o)
    extra = os.environ.get("LAKEMARK_SPARK_CONF")
    if extra:
        try:
            settings.update({str(k): str(v) for k, v in json.loads(extra).items()})
        except (ValueError, AttributeError) as exc:
            raise ConfigError(f"LAKEMARK_SPARK_CONF must be a JSON object: {exc}") from exc
    settings.update(conf or {})
    # JDBC drivers installed from Debian packages (never downloaded) go on the classpath.
    from .session.jdbc_drivers import driver_jars

    jars = [j for j in settings.get("spark.jars", "").split(",") if j]
    jars += [j for j in driver_jars() if j not in jars]
    if jars:
        settings["spark.jars"] = ",".join(jars)
    return master, settings


def get_spark(
    master: str | None = None,
    conf: Mapping[str, str] | None = None,
    *,
    app_name: str = "lakemark",
    verbose: bool = False,
    remote: str | None = None,
) -> SparkSession:
    """The active Spark session, or a new one with :func:`spark_settings`.

    Spark's own logging is kept to errors unless ``verbose``. ``remote`` (else
    ``SPARK_REMOTE``), an ``sc://`` URL, gives a Spark Connect session to that server instead
    (:func:`_remote_session`; ``master`` does not apply).
    """
    from pyspark.sql import SparkSession

    remote = remote or os.environ.get("SPARK_REMOTE") or None
    if remote is not None:
        return _remote_session(remote, conf)
    from .spark_io import install

    install()  # plain Spark I/O on s3:// works without S3A (lakemark.spark_io)
    active = SparkSession.getActiveSession()
    if active is not None:
        _register_delta(active)
        return active
    check_java()
    from .session.jvm_stderr import patch_gateway

    patch_gateway()
    master, settings = spark_settings(master, conf, verbose=verbose)
    builder = SparkSession.builder.appName(app_name).master(master)
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    if not verbose:
        session.sparkContext.setLogLevel("ERROR")
    _register_delta(session)
    return session


def _register_delta(session: SparkSession) -> None:
    """``format("delta")`` with no jars in every session lakemark hands out (lakemark.tables)."""
    from .tables import register

    register(session)


def _session_settings(conf: Mapping[str, str] | None) -> dict[str, str]:
    """What a Connect client sets on its own session: lakemark's SQL settings and ``conf``
    (the other defaults are the server's, given by ``lakemark server start``)."""
    base = {k: v for k, v in LAKEMARK_SPARK_CONF.items() if k.startswith("spark.sql.")}
    return {**base, **(conf or {})}


def _remote_session(url: str, conf: Mapping[str, str] | None) -> SparkSession:
    """A Spark Connect session to ``url`` with lakemark's SQL settings and ``conf`` applied.

    ConfigError for a URL that is not ``sc://…`` or a setting the server refuses (a static one
    belongs to the server's start); EnvironmentProblem when the client libraries are missing or
    the server cannot be reached.
    """
    if not url.startswith("sc://"):
        raise ConfigError(f"--remote/SPARK_REMOTE must be a Spark Connect URL sc://HOST:PORT, "
                          f"got {url.split('/')[0]!r}…")
    missing = [m for m in ("grpc", "grpc_status", "google.rpc", "zstandard", "pandas", "pyarrow")
               if not _importable(m)]
    if missing:
        raise EnvironmentProblem(f"Spark Connect needs its client libraries: pip install "
                                 f"'lakemark[connect]' (missing: {', '.join(missing)})")
    from pyspark.sql import SparkSession

    try:
        before = _connect_sessions()
        builder = SparkSession.builder.remote(url)
        # getOrCreate hands back the caller's session whatever server it talks to: only one to
        # this very endpoint may be shared, else lakemark's own to it, else a new one.
        wanted = _endpoint(url)
        if not before or _endpoint(before[0]) == wanted:
            session = builder.getOrCreate()
        else:
            session = next((s for s in list(_BOUNDED) if _endpoint(s) == wanted
                            and not getattr(s, "is_stopped", False)), None) or builder.create()
        if session not in before or session in _BOUNDED:  # lakemark's own, not the caller's
            _bound_retries(session)
        _ = session.version  # the first call: reaches the server now, not mid-run
    except Exception as exc:
        raise EnvironmentProblem(f"cannot reach the Spark Connect server at {_no_token(url)}: "
                                 f"{str(exc).splitlines()[0][:200] if str(exc) else exc!r} "
                                 f"(a local one: `lakemark server status`)") from None
    for key, value in _session_settings(conf).items():
        try:
            session.conf.set(key, value)
        except Exception as exc:
            raise ConfigError(f"--conf {key} cannot be set over Spark Connect "
                              f"({type(exc).__name__}): a server setting goes to `lakemark "
                              f"server start --conf`") from None
    _register_delta(session)
    from .session.connect_io import install

    install(session)  # format("iceberg"); save modes, partitionBy, one-line errors
    return session


#: How long a Connect client keeps retrying a server that stopped answering (gRPC UNAVAILABLE)
#: before the run fails, in seconds, about: the backoff 0.05, 0.2, 0.8, 3.2, 8, 8, 8 s.
#: Spark's default retries for at least 10 minutes, too long for a scheduled run to sit on a
#: dead server; a restart of the local server takes longer than this anyway.
CONNECT_RETRY_S = 28


#: The Connect sessions lakemark made and bounded (:func:`_bound_retries`); a session the
#: caller made keeps Spark's retries even when lakemark's getOrCreate hands it back.
_BOUNDED: weakref.WeakSet[Any] = weakref.WeakSet()


def _endpoint(target: Any) -> str | None:
    """``host:port`` of an ``sc://`` URL or of a Connect session's client; None if unknown."""
    try:
        if isinstance(target, str):
            from pyspark.sql.connect.client.core import DefaultChannelBuilder

            return str(DefaultChannelBuilder(target).endpoint)
        return str(target.client._builder.endpoint)
    except Exception:  # another client's builder: treat as a different server
        return None


def _connect_sessions() -> list[Any]:
    """The Connect sessions this thread's getOrCreate could return (active, default)."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    return [s for s in (ConnectSession.getActiveSession(),
                        ConnectSession._get_default_session()) if s is not None]


def _bound_retries(session: SparkSession) -> None:
    """Retry a lost server for about CONNECT_RETRY_S seconds, not Spark's ten minutes, and
    without Spark's RETRIES_EXCEEDED warning (the command line says it in one line): on this
    session's client only, so the process's other Connect sessions keep Spark's defaults."""
    from pyspark.sql.connect.client.retries import DefaultPolicy

    client = getattr(session, "client", None)
    if client is None or not hasattr(client, "set_retry_policies"):
        return
    client.set_retry_policies([DefaultPolicy(max_retries=7, initial_backoff=50,
                                             backoff_multiplier=4.0, max_backoff=8000)])
    quiet = _quiet_retrying()
    client._retrying = lambda: quiet(client._retry_policies, max_retry_exception_elapsed_time=(
        client._max_retry_exception_elapsed_time))
    _BOUNDED.add(session)


@functools.cache
def _quiet_retrying() -> type:
    """Spark Connect's ``Retrying`` that gives up on a lost server without its warning."""
    from pyspark.sql.connect.client.retries import RetryException, Retrying

    class QuietRetrying(Retrying):  # type: ignore[misc]
        def _wait(self) -> None:
            exception = self._last_exception()
            if isinstance(exception, RetryException):  # Spark's own bound (an hour)
                super()._wait()
                return
            policy = next((p for p in self._policies if p.can_retry(exception)), None)
            wait_ms = None if policy is None else policy.next_attempt(exception)
            if wait_ms is None:
                raise exception
            self._sleep(wait_ms / 1000)

    return QuietRetrying


def _no_token(url: str) -> str:
    """``url`` without its parameters (``;token=…`` may be a credential)."""
    return url.split(";", 1)[0]


def _importable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def check_reachable(url: str, timeout: float = 5.0) -> None:
    """EnvironmentProblem unless the host and port of the ``sc://HOST[:PORT][/;params]`` URL
    accept a TCP connection (port 15002 when none is given): a cheap check made before a run
    starts, so an unreachable server fails it before any state changes."""
    import socket

    hostport = url.removeprefix("sc://").split("/", 1)[0].split(";", 1)[0]
    host, sep, port_text = hostport.rpartition(":")
    if not sep or not port_text.isdigit():
        host, port_text = hostport, "15002"
    host = host.strip("[]")
    try:
        with socket.create_connection((host, int(port_text)), timeout=timeout):
            pass
    except OSError as exc:
        raise EnvironmentProblem(f"cannot reach the Spark Connect server at "
                                 f"sc://{host}:{port_text} ({exc.strerror or exc}); a local "
                                 "one: `lakemark server status` / `lakemark server start`"
                                 ) from None


def remote_endpoint(remote: str | None, master: str | None = None, *,
                    option: str = "--remote") -> str | None:
    """The Spark Connect URL a command runs on: ``remote`` (``--remote``), else
    ``SPARK_REMOTE``, else None (a local Spark). ConfigError, naming the option, for one that
    is not ``sc://…`` or that comes with ``master``; EnvironmentProblem when nothing listens
    there. Checked before a run starts, so a bad endpoint changes no state."""
    url = remote or os.environ.get("SPARK_REMOTE") or None
    if url is None:
        return None
    given = option if remote else "SPARK_REMOTE"
    if not url.startswith("sc://"):
        raise ConfigError(f"{given} must be a Spark Connect URL sc://HOST:PORT, got "
                          f"{url.split(';')[0]!r}")
    if master:
        raise ConfigError(f"--master does not apply with {given}: the server's master is set "
                          "where it starts (lakemark server start --master)")
    check_reachable(url)
    return url
