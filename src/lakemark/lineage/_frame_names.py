"""What the lineage analyser knows of Spark's functions and of DataFrame / DynamicFrame methods
by name: which functions aggregate or take several columns, how Spark names a function's
column, Glue Studio's generated transforms, and which frame methods pass columns through,
yield no frame, or are followed at all."""

from __future__ import annotations

__all__ = ["_AGGREGATES", "_COLUMNS_AFTER_FIRST", "_FRAME_METHODS", "_MULTI_COLUMN",
           "_NO_VALUE", "_PASSTHROUGH_FRAME", "_SEMI_JOINS", "_SPARK_NAMES", "_STUDIO"]

_AGGREGATES = {
    "sum", "avg", "mean", "count", "countDistinct", "count_distinct", "max", "min", "first",
    "last", "collect_list", "collect_set", "approx_count_distinct", "approxCountDistinct",
    "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop", "sumDistinct",
    "sum_distinct", "percentile_approx", "percentile", "median", "mode", "any_value",
    "bool_and", "bool_or", "every", "some", "max_by", "min_by", "corr", "covar_pop",
    "covar_samp", "kurtosis", "skewness", "count_if", "product", "first_value", "last_value",
    "array_agg", "listagg", "string_agg",
}
_MULTI_COLUMN = {"concat", "struct", "array", "coalesce", "greatest", "least", "countDistinct",
                 "count_distinct", "hash", "xxhash64", "create_map", "map_concat", "arrays_zip",
                 "datediff", "date_diff", "months_between", "nvl", "nvl2", "ifnull", "nanvl",
                 "pow", "power", "atan2", "hypot", "corr", "covar_pop", "covar_samp",
                 "map_from_arrays", "array_union", "array_intersect", "array_except",
                 "arrays_overlap", "levenshtein", "named_struct"}
#: functions whose first argument is a pattern and the others columns
_COLUMNS_AFTER_FIRST = {"concat_ws", "format_string", "printf", "locate"}
#: how Spark names the column of a function whose SQL name differs from its Python name
_SPARK_NAMES = {
    "countDistinct": "count(DISTINCT {})", "count_distinct": "count(DISTINCT {})",
    "sumDistinct": "sum(DISTINCT {})", "sum_distinct": "sum(DISTINCT {})",
    "mean": "avg({})", "approxCountDistinct": "approx_count_distinct({})",
    # a time window's column is named ``window`` (``session_window``) whatever its arguments:
    # groupBy(F.window("ts", "1 hour")) gives a struct column ``window`` (start, end)
    "window": "window", "session_window": "session_window",
}
#: Glue Studio transforms generated as DynamicFrame methods, with their positional parameters
_STUDIO = {
    "gs_derived": ["colName", "expr"], "gs_concat": ["colName", "colList", "spacer"],
    "gs_to_timestamp": ["colName", "colType", "newColName"],
    "gs_format_timestamp": ["colName", "dateFormat", "extractFormat", "newColName"],
    "gs_split": ["colName", "pattern", "newColName"],
    "gs_array_to_cols": ["colName", "colList"], "gs_now": ["colName", "dateFormat"],
    "gs_uuid": ["colName"], "gs_identifier": ["colName"], "gs_flatten": ["maxLevels", "separator"],
    "gs_format_number": ["colName", "decimalPrecision", "newColName"],
    "gs_hash": ["colName", "newColName"], "gs_encrypt": ["colName", "newColName"],
    "gs_decrypt": ["colName", "newColName"], "gs_explode": ["colName", "newCol", "outer"],
    "gs_regex_extract": ["colName", "regex", "newCols"],
}
_PASSTHROUGH_FRAME = {
    "repartition", "coalesce", "cache", "persist", "unpersist", "checkpoint",
    "localCheckpoint", "hint", "sample", "limit", "distinct", "dropDuplicates",
    "drop_duplicates", "sortWithinPartitions", "fillna", "dropna", "replace",
    "repartitionByRange", "withWatermark", "dropDuplicatesWithinWatermark", "spigot",
    "unbox", "unnest", "unnest_ddb_json", "errorsAsDynamicFrame", "assertErrorThreshold",
    "drop_null_fields", "resolveChoice", "resolve_choice", "transpose", "offset",
}
_NO_VALUE = {"show", "printSchema", "count", "collect", "take", "first", "head", "toPandas",
             "foreach", "foreachPartition", "isEmpty", "explain", "describe", "summary",
             "toJSON", "schema", "getNumPartitions", "errorsCount", "stageErrorsCount",
             "tail", "toLocalIterator"}
_FRAME_METHODS = _PASSTHROUGH_FRAME | _NO_VALUE | {
    "toDF", "apply_mapping", "select_fields", "drop_fields", "rename_field", "join", "filter",
    "relationalize", "split_fields", "map", "mapPartitions", "mergeDynamicFrame", "union",
    "unionAll", "unionByName", "select", "selectExpr", "withColumn", "withColumns",
    "withColumnRenamed", "withColumnsRenamed", "drop", "groupBy", "groupby", "agg", "where",
    "orderBy", "sort", "alias", "createOrReplaceTempView", "createTempView",
    "createGlobalTempView", "createOrReplaceGlobalTempView", "registerTempTable", "crossJoin",
    "intersect", "intersectAll", "subtract", "exceptAll", "rollup", "cube", "writeTo",
    "transform", "rdd", "na", "write", "printSchema",
}

#: join types that keep only the left frame's columns (``how`` without underscores)
_SEMI_JOINS = frozenset({"leftsemi", "semi", "leftanti", "anti"})
