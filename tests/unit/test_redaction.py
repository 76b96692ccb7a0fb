"""The one redactor (lakemark.redaction) on the secret corpus, and at the boundaries that need no
service: error messages, log records, the SQLite state file, and every lineage renderer."""

from __future__ import annotations

import ast
import json
import logging
from pathlib import Path

import pytest

from lakemark.errors import ConfigError, SourceError
from lakemark.lineage._graph import (
    ColumnEdge,
    DatasetRef,
    InputDataset,
    JobLineage,
    LineageWarning,
    OutputLineage,
)
from lakemark.lineage._html import to_html
from lakemark.lineage._render import to_dot, to_json, to_mermaid, to_openlineage
from lakemark.redaction import is_secret_name, redact, redact_arguments, redact_source
from lakemark.state.sqlite import SQLiteStore
from secret_corpus import SECRETS, SHAPES, leaks


@pytest.mark.parametrize(("text", "secret"), SHAPES, ids=[s for _, s in SHAPES])
def test_every_shape_is_redacted_alone_and_inside_a_message(text: str, secret: str) -> None:
    assert secret not in redact(text)
    for message in (f"cannot open {text!r}: refused", f'url "{text}"', f"({text})",
                    f"error: {text}\nnext line", json.dumps({"detail": text})):
        assert secret not in redact(message), message
    assert redact(redact(text)) == redact(text)  # idempotent


@pytest.mark.parametrize("text", [
    "s3://bucket/in/orders/2024/01/part-0000.json",
    "jdbc:postgresql://db.example.com:5432/shop",
    "postgresql://etl@pg.internal/state?schema=lm",
    "https://host.example.com:8080/path/file.json",
    "jobBookmarkKeys=id,updated_at; partitionKeys=dt",
    "sqlite:////var/lib/lakemark/state.db",
    "run jr_0123456789abcdef0123456789abcdef of job orders failed: 3 files missing",
    "file:///tmp/events.jsonl",
    "--enable-glue-datacatalog true --job-bookmark-option job-bookmark-enable "
    "--TempDir s3://tmp/ --extra-py-files s3://lib/a.py --passenger_count 3",
])
def test_text_without_credentials_is_unchanged(text: str) -> None:
    assert redact(text) == text


def test_secret_names_are_documented_and_extendable(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("--DB_PWD", "api_key", "spark.hadoop.fs.s3a.secret.key", "X-Amz-Signature",
                 "PGPASSWORD", "AccountKey", "key", "client_secret", "SessionToken", "DB_PASS",
                 "dbPass", "fs.azure.sas.c.acc.blob.core.windows.net"):
        assert is_secret_name(name), name
    for name in ("jobBookmarkKeys", "partitionKeys", "user", "source_table", "--TempDir",
                 "--passenger_count", "bypass", "--compass"):
        assert not is_secret_name(name), name
    assert redact("--employee_ssn 123-45-6789") == "--employee_ssn 123-45-6789"
    monkeypatch.setenv("LAKEMARK_SECRET_NAMES", "ssn, pin_code")
    assert is_secret_name("--employee_ssn") and is_secret_name("PinCode")
    assert redact("--employee_ssn 123-45-6789") == "--employee_ssn ***"
    assert redact_arguments({"--pin-code": "4711", "--env": "prod"}) == \
        {"--pin-code": "***", "--env": "prod"}


def test_a_password_lakemark_was_given_is_removed_wherever_it_appears() -> None:
    from lakemark.sources.jdbc import JdbcSource

    JdbcSource("jdbc:postgresql://h/db", "public.t", user="etl", password="Unnamed-Pw 1!")
    message = "FATAL: the server said 'Unnamed-Pw 1!' is not accepted"
    assert "Unnamed-Pw 1!" not in redact(message) and "FATAL" in redact(message)
    assert "Unnamed-Pw 1!" not in str(SourceError(message))


def test_job_arguments_lose_secret_values_and_embedded_secrets() -> None:
    args = {f"--arg{n}": text for n, (text, _) in enumerate(SHAPES)}
    args.update({"--DB_PWD": "plainpw1", "--api_key": "plainkey2", "--env": "prod"})
    cleaned = redact_arguments(args)
    assert not leaks(json.dumps(cleaned)) and "plainpw1" not in str(cleaned)
    assert "plainkey2" not in str(cleaned) and cleaned["--env"] == "prod"


def test_source_code_keeps_valid_python_and_its_paths() -> None:
    code = "\n".join([
        "import os",
        'PASSWORD = "HardCodedPw99"',
        "url = " + repr(SHAPES[0][0]),
        'opts = {"user": "u", "token": \'DictToken98\', "path": "s3://b/in/"}',
        "pwd = os.environ['DB_PWD']  # password=CommentPw97",
        'df = spark.read.parquet("s3://b/in/")',
    ] + [f"s{n} = {text!r}" for n, (text, _) in enumerate(SHAPES)]) + "\n"
    code = "sep = 'a\u2028b'\x0c\n" + code.replace("\n", "\r\n", 2)  # lines as tokenize counts
    cleaned = redact_source(code)
    ast.parse(cleaned)
    assert not leaks(cleaned)
    for secret in ("HardCodedPw99", "DictToken98", "CommentPw97"):
        assert secret not in cleaned
    assert "s3://b/in/" in cleaned and "os.environ['DB_PWD']" in cleaned


def test_errors_never_carry_a_secret() -> None:
    text = " | ".join(t for t, _ in SHAPES)
    for exc in (ConfigError(f"bad URL {text!r}"), SourceError(text)):
        assert not leaks(str(exc))
        assert not leaks(f"{exc}")


def test_log_records_are_redacted_whatever_the_handler(caplog: pytest.LogCaptureFixture) -> None:
    import lakemark  # noqa: F401 - installs the log redaction

    text = " | ".join(t for t, _ in SHAPES)
    with caplog.at_level(logging.INFO, logger="lakemark"):
        logging.getLogger("lakemark.glue.script").warning("reading %s", text)
        try:
            raise RuntimeError(text)
        except RuntimeError:
            logging.getLogger("lakemark").exception("failed")
    assert caplog.records and not leaks(caplog.text)


def test_state_file_never_holds_a_secret(tmp_path: Path) -> None:
    text = " | ".join(t for t, _ in SHAPES)
    store = SQLiteStore(tmp_path / "state.db")
    record = store.begin_run("leaky", "enable", host="h", pid=1, lease_timeout_s=60)
    store.record_plan(record.run_id, "src", {"kind": "jdbc", "url": SHAPES[0][0],
                                              "source": text, "next_state": {"k": 1}}, [])
    store.fail_run(record.run_id, f"RuntimeError: {text}", update_bookmark=True)
    [run] = store.list_runs("leaky")
    assert run.status == "FAILED" and not leaks(run.error or "")
    assert "jdbc:oracle:thin:scott/***@//127.0.0.1:1521/orcl" in (run.error or "")
    assert store.run_inputs(record.run_id)[0].plan["next_state"] == {"k": 1}
    store.close()
    for path in tmp_path.iterdir():
        assert not leaks(path.read_bytes()), path.name


def _leaky_jobs() -> list[JobLineage]:
    """Lineage whose every name, description, warning and script holds the corpus."""
    jobs = []
    for n, (text, _) in enumerate(SHAPES):
        src = DatasetRef(f"s3://in{n}", f"data/{text}")
        out = DatasetRef(text if "://" in text else f"jdbc:x://{n}", f"t{n}")
        edge = ColumnEdge(src, f"col {text}", description=f"from {text}", line=n)
        jobs.append(JobLineage(
            job=f"job-{n}-{text}", namespace=f"glue://{text}", script=f"{text}.py",
            inputs=(InputDataset(src, ((f"col {text}", "string"),)),),
            outputs=(OutputLineage(out, ((f"out {text}", (edge,)),), (edge,)),),
            warnings=(LineageWarning(f"unresolved {text}", n, f"{text}.py"),),
            source_code=f"url = {text!r}\n"))
    return jobs


def test_every_lineage_renderer_removes_secrets() -> None:
    jobs = _leaky_jobs()
    outputs = {
        "openlineage": json.dumps(to_openlineage(jobs)),
        "json": json.dumps(to_json(jobs)),
        "dot": to_dot(jobs),
        "mermaid": to_mermaid(jobs),
        "html": to_html(jobs),
    }
    for fmt, text in outputs.items():
        assert not leaks(text), (fmt, leaks(text))
    assert len(SECRETS) >= 30


@pytest.mark.parametrize("line", [
    "error: --option expects KEY=VALUE, got 'abc'",
    "  --conf KEY=VALUE        a Spark setting (repeatable)",
])
def test_a_usage_placeholder_is_not_a_secret(line: str) -> None:
    assert redact(line) == line


def test_a_value_beside_a_placeholder_word_is_still_masked() -> None:
    assert redact("secret_key=VALUE9 password=VALUES") == "secret_key=*** password=***"
