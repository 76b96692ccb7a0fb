"""An in-process ``lakemark run SCRIPT`` (from Python, a test, a notebook) leaves its caller's
``os.environ``, ``sys.path`` and ``sys.argv`` as they were: lakemark's settings and whatever
the script changed in them are undone when it returns, fails or exits (no JVM: the scripts
do not use Spark)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lakemark.cli import cli

_SCRIPT = """\
import json, os, sys
seen = {{"argv": sys.argv[1:], "state": os.environ.get("LAKEMARK_STATE"),
        "home": os.environ.get("HOME")}}
open({seen!r}, "w").write(json.dumps(seen))
os.environ["LAKEMARK_LEAK_TEST"] = "set by the script"
os.environ["HOME"] = "/changed/by/the/script"
sys.path.append("/added/by/the/script")
sys.argv.append("--added")
{ending}
"""


@pytest.mark.parametrize(("ending", "status"), [("", 0), ("raise RuntimeError('boom')", 1),
                                                ("sys.exit(4)", 4)])
def test_the_caller_keeps_its_environment_path_and_argv(tmp_path: Path, ending: str,
                                                        status: int) -> None:
    seen = tmp_path / "seen.json"
    script = tmp_path / "job.py"
    script.write_text(_SCRIPT.format(seen=str(seen), ending=ending))
    environ, path, argv = dict(os.environ), list(sys.path), list(sys.argv)
    argv_object = sys.argv
    state = f"sqlite:///{tmp_path / 'state.db'}"
    result = CliRunner().invoke(cli, ["run", "--state", state, str(script), "a", "--b"])
    assert result.exit_code == status, result.output
    # the script ran with lakemark's settings and its own arguments ...
    assert json.loads(seen.read_text()) == {"argv": ["a", "--b"], "state": state,
                                            "home": environ.get("HOME")}
    # ... and none of them, nor the script's own changes, outlive it
    assert dict(os.environ) == environ
    assert sys.path == path
    assert sys.argv is argv_object and sys.argv == argv
