"""Getting a Spark session the way lakemark needs it, and saying clearly when Java is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from importlib import resources
from typing import TYPE_CHECKING

from .errors import EnvironmentProblem

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["check_java", "get_spark", "LAKEMARK_SPARK_CONF"]

#: Settings lakemark applies to sessions it creates (a caller's own values win).
LAKEMARK_SPARK_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    # The planner already knows every file: never pay for Spark to list them again.
    "spark.sql.sources.parallelPartitionDiscovery.threshold": "1000000",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}


def check_java() -> str:
    """Path of the ``java`` Spark will use; EnvironmentProblem if there is none."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.exists(java):
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


def get_spark(
    master: str | None = None,
    conf: Mapping[str, str] | None = None,
    *,
    app_name: str = "lakemark",
    verbose: bool = False,
) -> SparkSession:
    """The active Spark session, or a new one (``local[*]`` unless a master is given).

    ``master`` falls back to ``LAKEMARK_SPARK_MASTER``, then ``local[*]``. Spark's own logging is
    kept to errors unless ``verbose``.
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    check_java()
    builder = SparkSession.builder.appName(app_name)
    master = master or os.environ.get("LAKEMARK_SPARK_MASTER") or "local[*]"
    builder = builder.master(master)
    settings = dict(LAKEMARK_SPARK_CONF)
    if master.startswith("local"):
        settings.setdefault("spark.driver.host", "127.0.0.1")
        settings.setdefault("spark.driver.bindAddress", "127.0.0.1")
    if not verbose:
        quiet = resources.files("lakemark.resources").joinpath("log4j2-quiet.properties")
        settings["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile=file:{quiet}"
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    if not verbose:
        session.sparkContext.setLogLevel("ERROR")
    return session
