"""Holds the ``awsglue`` stand-in package; this folder goes on sys.path inside ``lakemark run``."""
