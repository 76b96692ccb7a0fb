"""``awsglue.transforms`` served by lakemark (``from awsglue.transforms import *``)."""

from lakemark.glue.transforms import *  # noqa: F403
from lakemark.glue.transforms import __all__  # noqa: F401
