"""A Glue JDBC read or write whose driver jar is not on the classpath ends in one line naming
what to install, for every flavour lakemark knows (issue 32; docs/jdbc.md "Drivers").

The session has the Debian jars (PostgreSQL, MariaDB); the other flavours' jars are absent,
and a driver class that exists nowhere stands in for a missing PostgreSQL jar."""

from __future__ import annotations

from typing import Any

import pytest

from lakemark.session.jdbc_drivers import OTHER_DRIVERS, missing_driver_message
from lakemark.errors import EnvironmentProblem
from lakemark.glue import GlueContext

_URLS = {"mysql": "jdbc:mysql://127.0.0.1:1/db", "sqlserver":
         "jdbc:sqlserver://127.0.0.1:1;databaseName=db", "oracle":
         "jdbc:oracle:thin:@127.0.0.1:1/db", "redshift": "jdbc:redshift://127.0.0.1:1/db"}


def _options(flavour: str) -> dict[str, Any]:
    return {"url": _URLS[flavour], "dbtable": "public.t", "user": "u", "password": "pw-secret"}


@pytest.mark.parametrize("flavour", sorted(OTHER_DRIVERS))
def test_read_and_write_without_the_jar(spark, flavour):  # type: ignore[no-untyped-def]
    glue = GlueContext(spark.sparkContext)
    expected = missing_driver_message(OTHER_DRIVERS[flavour][0], _URLS[flavour])
    with pytest.raises(EnvironmentProblem) as read:
        glue.create_dynamic_frame.from_options(connection_type=flavour,
                                               connection_options=_options(flavour))
    assert str(read.value) == expected and "pw-secret" not in str(read.value)
    frame = spark.createDataFrame([(1,)], "id int")
    with pytest.raises(EnvironmentProblem) as write:
        glue.write_dynamic_frame.from_options(frame=frame, connection_type=flavour,
                                              connection_options=_options(flavour))
    assert str(write.value) == expected


def test_a_bookmarked_read_without_the_jar(spark, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    from lakemark.glue.job import Job as GlueJob

    monkeypatch.setenv("LAKEMARK_STATE", f"sqlite:///{tmp_path / 's.db'}")
    glue = GlueContext(spark.sparkContext)
    job = GlueJob(glue)
    job.init("jdbc-no-driver", {"job_bookmark_option": "job-bookmark-enable"})
    options = {**_options("redshift"), "url": "jdbc:postgresql://127.0.0.1:1/db",
               "customJdbcDriverClassName": "org.example.MissingDriver"}
    with pytest.raises(EnvironmentProblem, match=r"^the JDBC driver org\.example\.MissingDriver "
                                                 r"is not on Spark's classpath: pass its jar"):
        glue.create_dynamic_frame.from_options(connection_type="postgresql",
                                               connection_options=options,
                                               transformation_ctx="src")
    with pytest.raises(EnvironmentProblem, match="Maven com.mysql:mysql-connector-j"):
        glue.create_dynamic_frame.from_options(connection_type="mysql",
                                               connection_options=_options("mysql"),
                                               transformation_ctx="src2")
