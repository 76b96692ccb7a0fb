"""Keep the Spark JVM's own start-up lines off a lakemark command's stderr.

Spark 4's launcher always starts the JVM with ``--add-modules=jdk.incubator.vector``, and the JVM
then prints ``WARNING: Using incubator modules: jdk.incubator.vector`` on its stderr: no setting
turns it off. A lakemark command therefore starts the JVM with its stderr on a pipe and forwards
every line to the real stderr except such known noise (everything with ``--verbose``). Errors the
JVM or its Python workers print still reach the user, in order.
"""

from __future__ import annotations

import errno
import os
import select
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["enable", "patch_gateway", "drain", "set_verbose", "NOISE"]

#: Whole lines the JVM prints at start that say nothing to a lakemark user.
NOISE: tuple[bytes, ...] = (b"WARNING: Using incubator modules: jdk.incubator.vector",)


class _Forwarder:
    """Copies lines from ``source`` (the JVM's stderr pipe) to ``target`` (a file descriptor)."""

    def __init__(self, source: int, target: int) -> None:
        self._source = source
        self._target = target
        self._partial = b""
        self._lock = threading.Lock()
        self._closed = False
        os.set_blocking(source, False)
        self._thread = threading.Thread(target=self._loop, name="lakemark-jvm-stderr",
                                        daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._closed:
            try:
                select.select([self._source], [], [])
            except (OSError, ValueError):
                return
            if not self._pump():
                return

    def _pump(self) -> bool:
        """Forward what the pipe holds now; False once the pipe is closed."""
        with self._lock:
            if self._closed:
                return False
            while True:
                try:
                    chunk = os.read(self._source, 65536)
                except BlockingIOError:
                    return True
                except OSError as exc:
                    if exc.errno == errno.EINTR:
                        continue
                    self._closed = True
                    return False
                if not chunk:
                    self._emit_lines(final=True)
                    self._closed = True
                    return False
                self._partial += chunk
                self._emit_lines(final=False)

    def _emit_lines(self, *, final: bool) -> None:
        lines = self._partial.split(b"\n")
        self._partial = b"" if final else lines.pop()
        kept = [line for line in lines
                if line and (_verbose or line.rstrip(b"\r") not in NOISE)]
        if kept:
            data = b"\n".join(kept) + b"\n"
            try:
                while data:
                    data = data[os.write(self._target, data):]
            except OSError:
                pass

    def drain(self) -> None:
        """Forward everything the JVM has written so far (called just before the process exits)."""
        self._pump()
        with self._lock:
            if self._partial:
                self._partial += b"\n"
                self._emit_lines(final=False)


_forwarders: list[_Forwarder] = []
_enabled = False
_patched = False
_verbose = False


def set_verbose(verbose: bool) -> None:
    """With ``--verbose`` the JVM's lines are forwarded whole, noise included."""
    global _verbose
    _verbose = verbose


def enable() -> None:
    """Filter the stderr of every Spark JVM this process starts from now on.

    Only the lakemark command calls this (a library must not rewire its host's output); it
    imports nothing, so a command that never starts Spark pays nothing for it.
    """
    global _enabled
    _enabled = True


def patch_gateway() -> None:
    """Route the next JVM launch through the filter, if :func:`enable` was called.

    Called just before a Spark session is made. A caller that passes its own ``stderr`` to
    PySpark's gateway launch is left alone.
    """
    global _patched
    if not _enabled or _patched:
        return
    try:
        import pyspark.core.context as spark_context
    except ImportError:  # another PySpark layout: leave its output as it is
        return
    original: Callable[..., Any] = spark_context.launch_gateway

    def launch_gateway(conf: Any = None, popen_kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = dict(popen_kwargs or {})
        if "stderr" in kwargs:
            return original(conf, kwargs)
        read_end, write_end = os.pipe()
        kwargs["stderr"] = write_end
        _forwarders.append(_Forwarder(read_end, 2))
        try:
            return original(conf, kwargs)
        finally:
            os.close(write_end)

    spark_context.launch_gateway = launch_gateway
    _patched = True


def drain() -> None:
    """Forward what the JVM wrote and not yet shown (at exit, so no line is lost)."""
    for forwarder in _forwarders:
        forwarder.drain()
