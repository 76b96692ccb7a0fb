"""The Spark session's plumbing below :mod:`lakemark.spark` (issue 33): the JDBC driver jars
installed on this machine (:mod:`.jdbc_drivers`), the class-data sharing archive that makes
the JVM start faster (:mod:`.class_cache`; its builder, a program of its own:
``python -m lakemark.session.class_cache_build``) and the filter of the JVM's stderr the
``lakemark`` command installs (:mod:`.jvm_stderr`).

This file re-exports nothing: import the module that holds what you need.
"""
