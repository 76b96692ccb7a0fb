"""``lakemark schema show|reset`` on a state store (no Spark: the schemas are committed
directly)."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from click.testing import CliRunner

from lakemark.cli import cli
from lakemark.state import PendingSchema, open_store


def _run_with(url: str, fields: list[dict[str, object]], changes: list[dict[str, object]],
              reason: str) -> str:
    store = open_store(url)
    r = store.begin_run("j", "enable", host=socket.gethostname(), pid=os.getpid(),
                        lease_timeout_s=60)
    store.commit_run(r.run_id, {}, update_bookmark=True,
                     schemas={"source": PendingSchema(fields, changes, reason)})
    store.close()
    return r.run_id


def test_show_names_the_run_of_each_column_and_reset_forgets(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    first = _run_with(url, [{"name": "code", "type": "long"}],
                      [{"column": "code", "change": "added", "type": "long"}], "inferred")
    second = _run_with(url, [{"name": "code", "type": "long"}, {"name": "extra", "type": "string"}],
                       [{"column": "extra", "change": "added", "type": "string"}], "evolved")
    runner = CliRunner()
    shown = runner.invoke(cli, ["schema", "show", "j", "--state", url])
    assert shown.exit_code == 0, shown.output
    assert f"added by {first} (v1)" in shown.output and f"added by {second} (v2)" in shown.output
    as_json = json.loads(runner.invoke(cli, ["schema", "show", "j", "source", "--state", url,
                                             "--json"]).output)
    assert as_json["schemas"]["source"]["version"] == 2
    assert [h["reason"] for h in as_json["history"]] == ["inferred", "evolved"]
    reset = runner.invoke(cli, ["schema", "reset", "j", "source", "--state", url, "--json"])
    assert reset.exit_code == 0 and json.loads(reset.output)["reset"] == ["source"]
    after = json.loads(runner.invoke(cli, ["schema", "show", "j", "--state", url, "--json"]).output)
    assert after["schemas"]["source"] is None and after["history"][-1]["reason"] == "reset"
    again = runner.invoke(cli, ["schema", "reset", "j", "--state", url])
    assert again.exit_code == 1 and "no tracked schema" in again.output


def test_schema_show_of_an_unknown_job_says_so(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    open_store(url).close()
    shown = CliRunner().invoke(cli, ["schema", "show", "nobody", "--state", url])
    # a job the store has no record of at all is an error (tests/unit/test_cli_console.py)
    assert shown.exit_code == 1 and "no job 'nobody'" in shown.stderr
