"""Holds the ``delta`` stand-in package; this folder goes at the end of ``sys.path`` when
Delta Lake's own ``delta`` package (delta-spark) is not installed (``tables._delta_shim``)."""
