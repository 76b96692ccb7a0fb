"""lakemark's stand-in for AWS's ``awsglue`` package (served only inside ``lakemark run``).

``lakemark run`` puts the folder holding this package first on ``sys.path`` (and on the Spark
workers' ``PYTHONPATH``), so an unmodified Glue script's ``from awsglue… import …`` resolves
here. It is never installed as a top-level ``awsglue``, so AWS's own package, if installed,
is untouched and is what plain ``python`` imports.
"""

from lakemark.glue.dynamicframe import DynamicFrame

__all__ = ["DynamicFrame"]
