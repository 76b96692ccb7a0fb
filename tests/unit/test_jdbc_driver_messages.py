"""Every JDBC flavour lakemark knows names what to install when its driver jar is missing
(issue 32): one line, the Debian package where there is one, else the vendor's jar."""

from __future__ import annotations

import pytest

from lakemark.session.jdbc_drivers import DRIVER_JARS, OTHER_DRIVERS, missing_driver_message
from lakemark.glue.jdbc import jdbc_failure


@pytest.mark.parametrize("flavour", sorted(DRIVER_JARS))
def test_debian_flavours_name_the_package(flavour: str) -> None:
    driver, jar, package = DRIVER_JARS[flavour]
    text = missing_driver_message(driver, "jdbc:x://h/db")
    assert "\n" not in text
    assert f"the JDBC driver {driver} is not on Spark's classpath" in text
    assert f"install the Debian package {package} ({jar})" in text


@pytest.mark.parametrize("flavour", sorted(OTHER_DRIVERS))
def test_other_flavours_name_the_vendor_jar(flavour: str) -> None:
    driver, where = OTHER_DRIVERS[flavour]
    text = missing_driver_message(driver, "jdbc:x://h/db")
    assert "\n" not in text and where in text and "--conf spark.jars=PATH" in text


def test_unknown_class_and_no_class() -> None:
    assert missing_driver_message("org.example.Driver", "u") == (
        "the JDBC driver org.example.Driver is not on Spark's classpath: pass its jar with "
        "--conf spark.jars=PATH")
    assert missing_driver_message(None, "jdbc:db2://h/x").startswith(
        "a JDBC driver for jdbc:db2://h/x is not on")


def test_glue_failure_is_one_line_without_the_password() -> None:
    java = ("An error occurred while calling o71.load.\n: java.lang.ClassNotFoundException: "
            "org.postgresql.Driver\n\tat java.base/java.net.URLClassLoader.findClass")
    err = jdbc_failure(RuntimeError(java), {"url": "jdbc:postgresql://h/db", "password": "s3cr3t!",
                                            "driver": "org.postgresql.Driver"}, "source")
    assert str(err) == missing_driver_message("org.postgresql.Driver", "jdbc:postgresql://h/db")
    other = jdbc_failure(RuntimeError("Connection refused for s3cr3t!\n\tat x"),
                         {"url": "jdbc:postgresql://h/db", "password": "s3cr3t!",
                          "dbtable": "t"}, "sink")
    assert str(other) == "JDBC sink jdbc:postgresql://h/db t: Connection refused for ***"
