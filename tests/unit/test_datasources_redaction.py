"""The hidden option that carries a Spark catalog's settings to Python workers (they may hold
credentials) is named so Spark's default redaction hides its value in plans, the UI and logs."""

from __future__ import annotations

import re

from lakemark.datasources._options import SPARK_CATALOG_OPTION

#: Spark's default ``spark.redaction.regex`` (SQLConf / core's config package)
SPARK_DEFAULT_REDACTION = r"(?i)secret|password|token|access[.]?key"


def test_the_catalog_option_matches_sparks_default_redaction() -> None:
    assert re.search(SPARK_DEFAULT_REDACTION, SPARK_CATALOG_OPTION)
