"""JDBC driver jars installed from Debian packages: which exist on this machine.

Below both users: :mod:`lakemark.spark` puts the jars that exist on the classpath of the sessions
it starts, and :mod:`lakemark.sources.jdbc` and :mod:`lakemark.glue.jdbc` name the driver class
and, when its jar is missing, what to install (:func:`missing_driver_message`: the Debian
package, or for flavours without one the vendor's jar). Nothing is downloaded.
"""

from __future__ import annotations

import os

__all__ = ["DRIVER_JARS", "OTHER_DRIVERS", "driver_jars", "is_missing_driver",
           "missing_driver_message"]

#: dialect → (driver class, Debian jar, Debian package).
DRIVER_JARS: dict[str, tuple[str, str, str]] = {
    "postgresql": ("org.postgresql.Driver", "/usr/share/java/postgresql.jar",
                   "libpostgresql-jdbc-java"),
    "mariadb": ("org.mariadb.jdbc.Driver", "/usr/share/java/mariadb-java-client.jar",
                "libmariadb-java"),
}


def driver_jars() -> list[str]:
    """The JDBC driver jars of :data:`DRIVER_JARS` present on this machine."""
    return [jar for _, jar, _ in DRIVER_JARS.values() if os.path.exists(jar)]


#: flavour → (driver class, where its jar comes from) for the JDBC flavours lakemark knows that
#: have no Debian package: nothing installs them, the user puts the jar on Spark's classpath.
OTHER_DRIVERS: dict[str, tuple[str, str]] = {
    "mysql": ("com.mysql.cj.jdbc.Driver",
              "MySQL Connector/J (Maven com.mysql:mysql-connector-j; or install the Debian "
              "package libmariadb-java and use a jdbc:mariadb: URL)"),
    "sqlserver": ("com.microsoft.sqlserver.jdbc.SQLServerDriver",
                  "Microsoft's JDBC driver (Maven com.microsoft.sqlserver:mssql-jdbc)"),
    "oracle": ("oracle.jdbc.OracleDriver",
               "Oracle's JDBC driver (Maven com.oracle.database.jdbc:ojdbc11)"),
    "redshift": ("com.amazon.redshift.jdbc42.Driver",
                 "Amazon's Redshift JDBC driver (Maven com.amazon.redshift:redshift-jdbc42)"),
}


def is_missing_driver(text: str) -> bool:
    """Whether a Spark/Java error's text says the JDBC driver class is not on the classpath."""
    return "ClassNotFoundException" in text or "No suitable driver" in text


def missing_driver_message(driver_class: str | None, url: str) -> str:
    """One line for a JDBC driver class that is not on Spark's classpath, naming what to
    install (``url`` already without credentials names the database when no class is known)."""
    what = f"the JDBC driver {driver_class}" if driver_class else f"a JDBC driver for {url}"
    for cls, jar, package in DRIVER_JARS.values():
        if cls == driver_class:
            return (f"{what} is not on Spark's classpath: install the Debian package {package} "
                    f"({jar}); lakemark adds it to the Spark sessions it starts, or pass "
                    "--conf spark.jars=PATH")
    for cls, where in OTHER_DRIVERS.values():
        if cls == driver_class:
            return (f"{what} is not on Spark's classpath: get the jar of {where} and pass "
                    "--conf spark.jars=PATH")
    return f"{what} is not on Spark's classpath: pass its jar with --conf spark.jars=PATH"
