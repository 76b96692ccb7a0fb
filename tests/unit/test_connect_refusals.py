"""Spark Connect refusals that need no server: one line naming what is not available."""

from __future__ import annotations

import socket

import click
import pytest
from click.testing import CliRunner
from pyspark.errors import PySparkAttributeError

from lakemark.cli._output import connect_missing_message, handle_errors
from lakemark.connect_server import _cores
from lakemark.errors import EnvironmentProblem, UnsupportedError
from lakemark.spark import check_reachable, not_over_connect


def test_a_reach_for_the_jvm_is_one_line_naming_the_attribute() -> None:
    @click.command()
    @handle_errors
    def command() -> None:
        try:  # as Connect's session raises it for spark.sparkContext
            raise PySparkAttributeError(errorClass="JVM_ATTRIBUTE_NOT_SUPPORTED",
                                        messageParameters={"attr_name": "sparkContext"})
        except PySparkAttributeError as exc:
            raise RuntimeError("a step failed") from exc

    done = CliRunner().invoke(command, [])
    assert done.exit_code == 1
    assert done.output.strip() == (
        "error: a feature of this run needs Spark's JVM in this process (sparkContext) and is "
        "not available over Spark Connect yet; run it without --remote/SPARK_REMOTE")


def test_other_errors_are_not_taken_for_connect() -> None:
    assert connect_missing_message(ValueError("sparkContext")) is None


def test_not_over_connect_names_the_feature() -> None:
    class Session:  # what a Connect session's class looks like to lakemark
        __module__ = "pyspark.sql.connect.session"

    with pytest.raises(UnsupportedError, match=r"^the Glue facade is not available over "
                       r"Spark Connect yet \(run it without --remote/SPARK_REMOTE\)$"):
        not_over_connect(Session(), "the Glue facade")
    not_over_connect(object(), "the Glue facade")  # a classic session: nothing to say


def test_an_unreachable_endpoint_is_named_without_its_parameters() -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    with pytest.raises(EnvironmentProblem, match=rf"^cannot reach the Spark Connect server at "
                       rf"sc://127\.0\.0\.1:{port} \(") as raised:
        check_reachable(f"sc://127.0.0.1:{port}/;token=SECRET")
    assert "SECRET" not in str(raised.value)


def test_a_listening_endpoint_is_reachable() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        check_reachable(f"sc://127.0.0.1:{server.getsockname()[1]}")


@pytest.mark.parametrize(("master", "cores"), [("local", 1), ("local[3]", 3),
                                               ("local[2,4]", 2)])
def test_the_servers_default_parallelism_follows_its_master(master: str, cores: int) -> None:
    assert _cores(master) == cores
