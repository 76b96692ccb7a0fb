"""Writing a DataFrame to a target: Delta tables (with idempotent commits) and file folders.

* :func:`write_target` writes a DataFrame to a local path or ``s3://`` URI as ``delta``,
  ``parquet``, ``json``, ``csv`` or ``orc``, in ``append`` or ``overwrite`` mode, optionally
  partitioned, and returns a :class:`WriteResult` (rows, files, bytes, Delta version).
* ``format="iceberg"``: the target is a table name ``[catalog.]db.table``; Spark writes the
  Parquet files and pyiceberg appends them, the token in the snapshot summary (``_iceberg``).
* :class:`IdempotencyToken` is Delta's ``txnAppId``/``txnVersion``: a Delta write carrying a
  token that the table has already recorded is skipped, so a retried run never duplicates rows.

Delta tables need no Delta jars: Spark (or, on S3 without the S3A connector, pyarrow on the
executors) writes the Parquet files and ``deltalake`` commits them in one transaction, with the
token's ``txn`` action in the same commit. See ``_delta`` for the commit protocol and the race
rules, ``_files`` for folder formats and ``_publish`` for the staged, committed publish of folder
writes, local and S3 (a job's per-run token kept in a commit record inside the folder);
:func:`committed_files` lists the files of a folder target that committed runs wrote.
:func:`write_jdbc_table` appends to a database table with the run's token in the same database
transaction as the rows (PostgreSQL, MySQL/MariaDB; ``_jdbc``).
"""

from ._model import FORMATS, MODES, IdempotencyToken, WriteResult
from ._jdbc import JdbcTarget, write_jdbc_table
from ._publish import committed_files
from ._write import TXN_APP_ID, TXN_VERSION, check_write, token_from_options, write_target

__all__ = ["FORMATS", "MODES", "IdempotencyToken", "JdbcTarget", "WriteResult", "TXN_APP_ID",
           "TXN_VERSION", "check_write", "committed_files", "token_from_options",
           "write_jdbc_table", "write_target"]
