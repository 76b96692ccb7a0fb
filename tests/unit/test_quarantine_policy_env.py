"""The bad-file policy a job made without one takes from the environment, as `lakemark run
--on-bad-file/--max-bad-files/--max-record-bytes` sets it for a script's jobs (no JVM)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from lakemark.run.quarantine import BadFilePolicy, policy_from_env
from lakemark.cli import cli
from lakemark.errors import ConfigError


def test_no_variable_is_the_default_policy() -> None:
    assert policy_from_env({}) == BadFilePolicy()


def test_the_variables_give_the_policy() -> None:
    env = {"LAKEMARK_ON_BAD_FILE": "fail", "LAKEMARK_MAX_RECORD_BYTES": "1MiB"}
    assert policy_from_env(env) == BadFilePolicy("fail", None, 1024 * 1024)
    assert policy_from_env({"LAKEMARK_MAX_BAD_FILES": "10%"}).max_bad_files == 0.1


def test_a_bad_value_names_the_option_and_the_variables() -> None:
    with pytest.raises(ConfigError, match=r"--max-bad-files 'lots'.*LAKEMARK_MAX_BAD_FILES"):
        policy_from_env({"LAKEMARK_MAX_BAD_FILES": "lots"})


def test_lakemark_run_refuses_a_bad_policy_option_before_the_script(tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    marker = tmp_path / "ran"
    script.write_text(f"open({str(marker)!r}, 'w').close()\n")
    result = CliRunner().invoke(cli, ["run", "--on-bad-file", "skip", str(script)])
    assert result.exit_code == 2 and "--on-bad-file" in result.output
    result = CliRunner().invoke(cli, ["run", "--max-record-bytes", "huge", str(script)])
    assert result.exit_code == 2 and "--max-record-bytes 'huge'" in result.output
    assert not marker.exists()
