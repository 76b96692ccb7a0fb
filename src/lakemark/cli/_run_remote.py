"""``lakemark run --remote``: a script's Spark is a Spark Connect session to a server.

The script's jobs plan and keep their bookmarks in this process; Spark's reads and writes run
on the server (docs/connect.md). The session is made before the script starts, with
lakemark's SQL settings and ``--conf``, so ``SparkSession.builder.getOrCreate()``, lakemark's
``Job`` and ``GlueContext`` all get it. A Glue script's ``SparkContext.getOrCreate()`` (or
``SparkContext()``, or its session's ``spark.sparkContext``) gets a stand-in that holds no
JVM: handed to ``GlueContext`` it stands for the Connect session, and any use of the
SparkContext itself beyond ``setLogLevel``, ``defaultParallelism``, ``appName``, ``getConf``
(a copy of the session's settings), ``sparkUser`` (the session's user) and ``stop`` is
refused in one line naming it, as is a frame's ``rdd`` (pyspark's own refusal is a stack
trace). What the script caches is unpersisted when its session stops: the server's cache is
shared and would serve the next run stale rows.
"""

from __future__ import annotations

import logging
import sys
import types
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import UnsupportedError

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["start_remote"]

#: What a script may use of the SparkContext stand-in.
_ALLOWED = frozenset({"setLogLevel", "defaultParallelism", "appName", "stop", "getOrCreate",
                      "getConf", "sparkUser", "_session"})


def start_remote(url: str, conf: Mapping[str, str], verbose: bool) -> Callable[[], None]:
    """Open the Connect session to ``url`` for the script (EnvironmentProblem, one line, when
    it cannot be reached) and serve ``pyspark.SparkContext`` / ``pyspark.context`` with the
    stand-in; returns the call that puts pyspark's own back, and the environment that makes
    sessions Connect ones as it was (an in-process caller's later sessions are not the
    script's)."""
    import os

    from ..spark import get_spark

    # pyspark marks the process as in Connect mode too (SPARK_CONNECT_MODE_ENABLED)
    before = {k: os.environ.get(k) for k in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")}

    def put_back_env() -> None:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    os.environ["SPARK_REMOTE"] = url  # the script's own SparkSession.builder gets the server
    try:
        session = get_spark(remote=url, conf=conf, verbose=verbose)
    except BaseException:
        put_back_env()
        raise
    put_back_context = _install_context(session)

    def restore() -> None:
        put_back_context()
        put_back_env()

    return restore


def _install_context(session: SparkSession) -> Callable[[], None]:
    import pyspark
    from pyspark import SparkContext

    class RemoteSparkContext(SparkContext):
        """A SparkContext over Spark Connect: no JVM here, only what a Glue script needs."""

        _session = session

        def __init__(self, *args: Any, **kwargs: Any) -> None:  # noqa: D107 - no JVM to start
            pass

        @classmethod
        def getOrCreate(cls, conf: Any = None) -> RemoteSparkContext:  # type: ignore[override]  # noqa: N802
            return cls()

        def setLogLevel(self, logLevel: str) -> None:  # noqa: N802, N803
            """The server's log level is its own (``lakemark server start``)."""

        @property
        def defaultParallelism(self) -> int:  # type: ignore[override]  # noqa: N802
            from ..connect_compat import default_parallelism

            return default_parallelism(type(self)._session)

        @property
        def appName(self) -> str:  # type: ignore[override]  # noqa: N802
            return "lakemark"

        def sparkUser(self) -> str:  # noqa: N802
            """The user the Connect session runs as (its user id: ``SPARK_USER``, else
            ``USER``, as pyspark's client sets it), else this process's user."""
            import getpass

            user = getattr(type(self)._session.client, "_user_id", None)
            return str(user) if user else getpass.getuser()

        def getConf(self) -> Any:  # noqa: N802
            """A copy of the Connect session's settings, as classic ``getConf`` is a copy of
            the context's: setting a key on it changes nothing on the server."""
            from pyspark import SparkConf

            settings = type(self)._session.conf.getAll
            return SparkConf(loadDefaults=False).setAll(sorted(settings.items()))

        def stop(self) -> None:
            """The server goes on; ``lakemark run`` closes the script's session."""

        def __getattribute__(self, name: str) -> Any:
            if name.startswith("__") or name in _ALLOWED:
                return object.__getattribute__(self, name)
            raise UnsupportedError(f"SparkContext.{name} is not available over Spark Connect "
                                   "yet (run it without --remote/SPARK_REMOTE)")

    from pyspark.sql.connect.session import SparkSession as ConnectSession

    def spark_context(self: Any) -> RemoteSparkContext:
        """``spark.sparkContext`` of the script's session: the stand-in (as
        ``SparkContext.getOrCreate()``), so ``GlueContext(spark.sparkContext)`` and
        ``spark.sparkContext.setLogLevel(...)`` run as in classic mode."""
        if self is not session:
            return self.__getattr__("sparkContext")  # pyspark's own one-line refusal
        return RemoteSparkContext()

    setattr(ConnectSession, "sparkContext", property(spark_context))  # noqa: B010

    from pyspark.sql.connect.dataframe import DataFrame as ConnectFrame

    def no_rdd(self: Any) -> Any:
        raise UnsupportedError("DataFrame.rdd is not available over Spark Connect (it has no "
                               "RDDs; run it without --remote/SPARK_REMOTE)")

    own_rdd = ConnectFrame.__dict__.get("rdd")
    setattr(ConnectFrame, "rdd", property(no_rdd))  # noqa: B010

    # A warm server's cache is shared by every session on it and outlives them: a frame the
    # script cached would serve the next run's same read (its files as they were then, no
    # input_file_name()). What the script persists is unpersisted when its session stops.
    persisted: list[Any] = []
    own_persist, own_stop = ConnectFrame.persist, ConnectSession.stop

    def persist(self: Any, *args: Any, **kwargs: Any) -> Any:  # cache() calls persist()
        done = own_persist(self, *args, **kwargs)
        persisted.append(self)
        return done

    def release() -> None:
        while persisted:
            frame = persisted.pop()
            try:
                frame.unpersist()
            except Exception:  # its session is gone, and the server's cache with it
                log.debug("could not unpersist a frame of the script", exc_info=True)

    def stop(self: Any) -> None:
        release()
        own_stop(self)

    setattr(ConnectFrame, "persist", persist)  # noqa: B010
    setattr(ConnectSession, "stop", stop)  # noqa: B010

    import pyspark.context as classic

    module = types.ModuleType("pyspark.context")
    module.__dict__.update(classic.__dict__)
    module.SparkContext = RemoteSparkContext  # type: ignore[attr-defined]
    saved = (classic, pyspark.SparkContext)
    sys.modules["pyspark.context"] = pyspark.context = module  # type: ignore[attr-defined]
    pyspark.SparkContext = RemoteSparkContext  # type: ignore[misc]

    def restore() -> None:
        release()
        setattr(ConnectFrame, "persist", own_persist)  # noqa: B010
        setattr(ConnectSession, "stop", own_stop)  # noqa: B010
        delattr(ConnectSession, "sparkContext")
        if own_rdd is None:
            delattr(ConnectFrame, "rdd")
        else:
            setattr(ConnectFrame, "rdd", own_rdd)  # noqa: B010
        sys.modules["pyspark.context"] = pyspark.context = saved[0]  # type: ignore[attr-defined]
        pyspark.SparkContext = saved[1]  # type: ignore[misc]

    return restore
