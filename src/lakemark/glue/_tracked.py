"""A Glue file source with a tracked schema (``schemaEvolutionMode``): choices, not rescues.

A Glue script reads drifting files into DynamicFrames, where a field whose records hold
values of two types is a *choice* that the script settles with ``resolveChoice``. lakemark's
tracked read (``Job.read_files(..., schema_evolution=...)``, docs/schema.md) keeps the source's
columns and types from run to run and puts every value that does not fit its column into a
rescued-data column. For a DynamicFrame source the facade turns that back into Glue's terms
(:func:`tracked_choices`, one Spark job over the run's input):

* a tracked column with values that did not fit in this run becomes
  ``choice(<tracked type>, string)``: the values that fit under their type, the others under
  ``string`` as their text — ``resolveChoice`` decides, as in Glue, and nothing is lost;
* a column without such values keeps its tracked type (no choice), and so does a string
  column (a value that does not fit a string column, e.g. an XML element with children, is
  left in the rescued data);
* what is left of the rescued data — keys that are not columns (``rescue`` mode, names that
  differ from a column only in case), records that did not parse — stays in the rescued-data
  column (``_rescued_data``, with its ``_file_path``), which the frame has only when the run
  has such leftovers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["INTERNAL_RESCUED", "tracked_choices"]

#: The rescued-data column of a tracked DynamicFrame source, before it is made choices.
INTERNAL_RESCUED = "__lm_glue_rescued"
_FILE_KEY = "_file_path"


def tracked_choices(df: DataFrame, rescued: str, leftover_column: str) -> DataFrame:
    """``df`` (a tracked read whose rescued data is in column ``rescued``) with each column
    that had values rescued made a choice of its type and ``string``, and the rest of the
    rescued data in ``leftover_column`` when any record has some (see the module doc)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    from ._choicetype import choice_type, member_name
    from ._fieldpaths import quote

    columns = [f for f in df.schema.fields if f.name != rescued]
    parsed = F.from_json(F.col(quote(rescued)), "map<string,string>")
    # A string column's rescued values (structured XML in a text column) stay rescued.
    names = [f.name for f in columns if not isinstance(f.dataType, StringType)]
    leftover = (F.map_filter(parsed, lambda k, _: ~k.isin(names)) if names else parsed)
    useful = F.map_filter(leftover, lambda k, _: k != F.lit(_FILE_KEY))
    checks = [F.max(parsed[f.name].isNotNull().cast("int")).alias(f"c{i}")
              for i, f in enumerate(columns)]
    checks.append(F.max((F.size(useful) > 0).cast("int")).alias("left"))
    seen = df.agg(*checks).collect()[0]
    out = []
    for i, f in enumerate(columns):
        col = F.col(quote(f.name))
        if not seen[f"c{i}"] or isinstance(f.dataType, StringType):
            out.append(col)
            continue
        text = parsed[f.name]
        target = choice_type([f.dataType, StringType()])
        value = F.struct(col.alias(member_name(f.dataType)),
                         text.alias(member_name(StringType())))
        out.append(F.when(col.isNull() & text.isNull(), F.lit(None).cast(target))
                   .otherwise(value.cast(target)).alias(f.name))
    if seen["left"]:
        out.append(F.when(F.size(useful) > 0, F.to_json(leftover)).alias(leftover_column))
    return df.select(*out)
