"""``spark.sql`` on Delta and Iceberg tables over Spark Connect (docs/connect.md).

A classic session serves ``delta.`path``` queries, ``VERSION``/``TIMESTAMP AS OF``, ``DESCRIBE
HISTORY``, ``INSERT``/``DELETE``/``UPDATE`` and ``CREATE TABLE … USING delta AS SELECT`` with
:mod:`lakemark.tables._sql` (DataFrame reads, lakemark's Delta writer and ``DeltaTable`` API),
which run over Connect as they are. One difference: a classic ``spark.sql`` result is analysed
at once, so the temporary views standing for the tables can be dropped when it returns; a
Connect one is analysed again on the server at each action. Here a query's tables are given to
Connect's ``spark.sql`` as DataFrame arguments instead, which Connect carries inside the plan
itself (no view left in the session, none needed later).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Any

__all__ = ["sql"]


def _query(spark: Any, original: Callable[..., Any], plan: Any) -> Any:
    """A :class:`~lakemark.planning.sql_forms.Query` with each table reference a DataFrame
    argument of Connect's ``spark.sql`` (``{name}`` in the text; other braces doubled)."""
    from ..tables._sql import _read_delta, _read_iceberg

    frames = {ref.view: _read_delta(spark, ref) if ref.kind == "delta" else
              _read_iceberg(spark, ref) for ref in plan.refs}
    text = plan.sql.replace("{", "{{").replace("}", "}}")
    if frames:
        names = sorted(frames, key=len, reverse=True)
        text = re.sub("|".join(rf"\b{re.escape(n)}\b" for n in names),
                      lambda m: "{" + m.group(0) + "}", text)
    return original(spark, text, **frames)


def sql(original: Callable[..., Any]) -> Callable[..., Any]:
    """Connect's ``SparkSession.sql`` serving what :mod:`lakemark.tables._sql` serves."""
    def method(self: Any, sqlQuery: str, args: Any = None, **kwargs: Any) -> Any:  # noqa: N803
        if args is None and not kwargs:  # parameterised/formatted queries: Spark's own
            from ..planning.sql_forms import Query, plan_sql
            from ..tables._register import register
            from ..tables._sql import _delta_names, _iceberg_catalogs, _serve

            plan = plan_sql(sqlQuery, iceberg_catalogs=_iceberg_catalogs(self, sqlQuery),
                            delta_names=_delta_names(),
                            view_prefix=f"__lakemark_{uuid.uuid4().hex[:8]}")
            if isinstance(plan, Query):
                if any(r.kind == "delta" for r in plan.refs) and not register(self):
                    return original(self, sqlQuery)  # Delta's jars serve it
                return _query(self, original, plan)
            served = _serve(self, original, sqlQuery)
            if served is not None:
                return served
        return original(self, sqlQuery, args, **kwargs)

    method.__name__ = "sql"
    method.__doc__ = original.__doc__
    return method
