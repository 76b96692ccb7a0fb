"""A command whose Spark JVM goes away under it (killed, out of memory) ends in one `error:`
line, not a Python traceback through Py4J; other unexpected errors still raise."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from lakemark.cli._output import handle_errors, jvm_lost_message


def _command(exc: BaseException) -> click.Command:
    @click.command()
    @click.option("--json", "as_json", is_flag=True)
    @handle_errors
    def cmd(as_json: bool) -> None:
        try:
            raise exc
        except BaseException as inner:
            raise RuntimeError("An error occurred while calling o42.save") from inner

    return cmd


@pytest.mark.parametrize("cause", [ConnectionRefusedError(111, "Connection refused"),
                                   ConnectionResetError(104, "Connection reset by peer")])
def test_a_lost_jvm_is_one_error_line(cause: BaseException) -> None:
    result = CliRunner().invoke(_command(cause), [])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines[0].startswith("error: the Spark JVM stopped during the run")
    assert "Traceback" not in result.output


def test_an_empty_answer_from_java_is_a_lost_jvm() -> None:
    exc = RuntimeError("An error occurred while calling o7.collect: Answer from Java side is empty")
    assert jvm_lost_message(exc) is not None


def test_other_errors_are_not_taken_for_a_lost_jvm() -> None:
    assert jvm_lost_message(ValueError("bad")) is None
    result = CliRunner().invoke(_command(KeyError("x")), [])
    assert isinstance(result.exception, RuntimeError)
