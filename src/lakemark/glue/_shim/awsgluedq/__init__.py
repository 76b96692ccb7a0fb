"""``awsgluedq`` (Glue Data Quality) is not available under lakemark: importing it says so."""

from lakemark.errors import UnsupportedError

raise UnsupportedError(
    "awsgluedq (AWS Glue Data Quality, EvaluateDataQuality) is not supported by lakemark; "
    "remove the data-quality node or run that check elsewhere"
)
