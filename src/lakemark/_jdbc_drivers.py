"""JDBC driver jars installed from Debian packages: which exist on this machine.

Below both users: :mod:`lakemark.spark` puts the jars that exist on the classpath of the sessions
it starts, and :mod:`lakemark.sources.jdbc` names the driver class (and the package to install
when a jar is missing). Nothing is downloaded.
"""

from __future__ import annotations

import os

__all__ = ["DRIVER_JARS", "driver_jars"]

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
