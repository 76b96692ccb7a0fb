"""Conditions and values of the ``delta.tables`` API as SQL text deltalake can evaluate.

Delta's Python API takes a condition or a value either as a Spark SQL string or as a PySpark
``Column``. lakemark executes merges, updates and deletes with deltalake (DataFusion SQL), so
both become SQL text:

* a string is checked by Spark's analyzer against the frame it speaks about (so a misspelt
  column fails naming it, before anything is written) and then passed on as written, except
  that a ``"double-quoted"`` string literal (Spark's default reading) becomes single-quoted and
  backslash escapes in literals are spelt out (DataFusion reads ``"x"`` as a column name);
* a ``Column`` is resolved by Spark's analyzer against the same frame and printed with the
  resolved expression's ``sql()`` (infix operators, qualified columns such as ``s.id``), then
  adjusted where Spark's printing differs from the SQL deltalake parses: string literals use
  ``''`` for a quote (Spark prints ``\\'``) and ``<=>`` becomes ``IS NOT DISTINCT FROM``.

The frame is an empty DataFrame with the table's schema (and the merge source's, under their
aliases), so analysing never reads data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["frame_alias", "quote", "to_sql", "spark_sql_to_datafusion"]

_ESCAPES = {"'": "'", "\\": "\\", "n": "\n", "t": "\t", "r": "\r", '"': '"', "0": "\0"}


def quote(name: str) -> str:
    """A column name as a backquoted SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def spark_sql_to_datafusion(text: str) -> str:
    """Spark SQL as deltalake parses it: in string literals (single- or double-quoted, as
    Spark reads both) backslash escapes are resolved and the literal is written single-quoted
    with ``''`` for a quote (``'it\\'s'`` -> ``'it''s'``); ``<=>`` becomes ``IS NOT DISTINCT
    FROM``. Backquoted names are kept as they are."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "'\"":
            j, chunk = i + 1, []
            while j < n and text[j] != ch:
                if text[j] == "\\" and j + 1 < n:
                    chunk.append(_ESCAPES.get(text[j + 1], text[j + 1]))
                    j += 2
                    continue
                chunk.append(text[j])
                j += 1
            out.append("'" + "".join(chunk).replace("'", "''") + "'")
            i = j + 1
        elif ch == "`":
            j = text.find("`", i + 1)
            while j != -1 and j + 1 < n and text[j + 1] == "`":
                j = text.find("`", j + 2)
            j = n - 1 if j == -1 else j
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("<=>", i):
            out.append("IS NOT DISTINCT FROM")
            i += 3
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def frame_alias(df: DataFrame) -> str | None:
    """The alias ``df.alias(name)`` gave a DataFrame (None when it has none)."""
    plan = getattr(df, "_plan", None)  # a Spark Connect frame carries its plan in the client
    if plan is not None and type(plan).__name__ == "SubqueryAlias":
        return str(plan._alias)
    try:
        plan = df._jdf.queryExecution().logical()
        if plan.nodeName() == "SubqueryAlias":
            return str(plan.alias())
    except Exception:  # Spark Connect or an unexpected plan: treat as unaliased
        return None
    return None


def to_sql(value: Any, frame: DataFrame, what: str) -> str:
    """``value`` (a SQL string or a ``Column``) as SQL text over ``frame``'s columns.
    ConfigError naming ``what`` (e.g. ``merge condition``) when it is neither, or when Spark
    cannot resolve it against ``frame``."""
    from pyspark.errors import AnalysisException, ParseException
    from pyspark.sql import Column
    from pyspark.sql import functions as F

    from ..connect_compat import is_connect, not_over_connect

    if is_connect(frame.sparkSession) and isinstance(value, Column):
        not_over_connect(frame.sparkSession, f"a {what} given as a Column (give it as a SQL "
                         "string)")
    if isinstance(value, str):
        if not value.strip():
            raise ConfigError(f"{what} is an empty string")
        column, text = F.expr(value), value
    elif isinstance(value, Column):
        column, text = value, None
    else:
        raise ConfigError(f"{what} must be a SQL string or a pyspark Column, got "
                          f"{type(value).__name__}")
    try:
        if text is not None and is_connect(frame.sparkSession):  # no JVM here: Spark checks it
            _ = frame.select(column).schema  # analysed on the server: an unknown column fails
            return spark_sql_to_datafusion(text)
        plan = frame.select(column)._jdf.queryExecution().analyzed()
        expression = plan.projectList().head()
        if expression.nodeName() == "Alias":
            expression = expression.child()
        printed = str(expression.sql())
    except (AnalysisException, ParseException) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ConfigError(f"{what} {value if text is None else text!r} cannot be resolved: "
                          f"{first}") from None
    return spark_sql_to_datafusion(text if text is not None else printed)
