"""``lakemark run``: run a Python script that uses lakemark's API (or an AWS Glue script)."""

from __future__ import annotations

import json
import os
import runpy
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import click

from ..run.quarantine import ON_BAD_FILE, POLICY_ENV, BadFilePolicy
from ..errors import ConfigError
from ._common import parse_key_values, state_option, state_url_of, verbose_option
from ._output import console, handle_errors, setup_logging
from ._progress import ProgressLines, interval_from, spark_tasks


@click.command(
    "run",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("script", type=click.Path(dir_okay=False))
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
@click.option("--master", metavar="URL", help="Spark master [env LAKEMARK_SPARK_MASTER; local[*]].")
@click.option("--remote", metavar="sc://HOST:PORT",
              help="Run the script's Spark on this Spark Connect server instead of in this "
              "process, e.g. a warm `lakemark server start` [env SPARK_REMOTE]: its jobs' "
              "bookmarks stay here. Glue scripts run with DataFrame operations only; what "
              "needs a local JVM is refused in one line. Not with --master or --submit. "
              "See docs/connect.md.")
@click.option("--conf", "confs", multiple=True, metavar="KEY=VALUE",
              help="A Spark configuration setting (repeatable; with --remote, a SQL setting "
              "of the script's session).")
@click.option("--submit", is_flag=True,
              help="Launch the script with spark-submit instead of in this process.")
@click.option("--catalog", "catalog", metavar="DIR|glue",
              help="Data catalog for Glue scripts' from_catalog: a catalog folder, or 'glue' "
              "for the AWS Glue Data Catalog [env LAKEMARK_CATALOG].")
@click.option("--progress-interval", type=float, metavar="SECONDS",
              help="When stdout is not a terminal (cron, CI logs): print a progress line to "
              "stderr every SECONDS while the script's jobs run (job, stage, files and bytes "
              "planned, rows written, Spark tasks done); 0 turns the lines off; not with "
              "--submit. Default: $LAKEMARK_PROGRESS_INTERVAL, else 30.")
@click.option("--bucket-map", "bucket_maps", multiple=True, metavar="s3://BUCKET[/prefix]=DIR",
              help="Serve an S3 bucket (or a prefix of one) from a local folder: the script's "
              "reads, writes, catalog table locations and purge_s3_path under it use DIR, "
              "bookmarks keep the s3:// names (repeatable).")
@click.option("--on-bad-file", type=click.Choice(ON_BAD_FILE),
              help="For the script's jobs (Python and Glue) made without a policy: a source "
              "file that cannot be read is set aside (quarantine, the default; exit status 3) "
              "or fails the run naming it (fail). See docs/bookmarks.md.")
@click.option("--max-bad-files", metavar="N|P%",
              help="For the script's jobs: fail a run that would set aside more than N files, "
              "or more than P% of a source's planned files.")
@click.option("--max-record-bytes", metavar="SIZE",
              help="For the script's jobs: json, csv, text, xml files holding a record larger "
              "than SIZE are set aside, e.g. 64MiB (the default).")
@state_option
@verbose_option
@handle_errors
def run(
    script: str,
    script_args: tuple[str, ...],
    master: str | None,
    remote: str | None,
    confs: tuple[str, ...],
    submit: bool,
    catalog: str | None,
    bucket_maps: tuple[str, ...],
    progress_interval: float | None,
    on_bad_file: str | None,
    max_bad_files: str | None,
    max_record_bytes: str | None,
    state_url: str | None,
    verbose: bool,
) -> None:
    """Run SCRIPT with SCRIPT_ARGS; its jobs use this --state, --catalog, --master and --conf.

    SCRIPT may use lakemark's API or be an unmodified AWS Glue script: its `awsglue` imports
    are served by lakemark, and Glue's arguments follow the script, e.g.

      lakemark run --state sqlite:///state.db --catalog ./catalog job.py \
          --JOB_NAME orders --job-bookmark-option job-bookmark-enable

    --bucket-map s3://prod-bucket=./local runs a production script on local folders: every
    path under the bucket (arguments, code, catalog locations) is read and written there.

    lakemark's options come before SCRIPT; everything after SCRIPT goes to the script
    (sys.argv). The script's exit status becomes lakemark's; a script whose runs committed
    but set aside source files they could not read exits 3, as `ingest files` does.
    """
    setup_logging(verbose)
    path = Path(script)
    if not path.is_file():
        raise ConfigError(f"script {script} does not exist or is not a file")
    conf = parse_key_values(confs, "--conf")
    url = _endpoint(remote, master, submit)  # bad or unreachable: one line, before anything
    try:
        interval = interval_from(progress_interval)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    policy = _policy_env(on_bad_file, max_bad_files, max_record_bytes)  # bad: before Spark
    from ..storage import BUCKET_MAP_ENV, parse_bucket_map

    mapping = parse_bucket_map(bucket_maps, "--bucket-map")  # malformed: fails before Spark
    if catalog:  # a missing or unreadable catalog folder fails now, before Spark starts
        from ..catalog import open_catalog

        open_catalog(catalog)
    env = dict(os.environ)
    if state_url is not None or "LAKEMARK_STATE" in env:  # an empty one fails here, not later
        env["LAKEMARK_STATE"] = state_url_of(state_url)
    if master:
        env["LAKEMARK_SPARK_MASTER"] = master
    if conf:
        env["LAKEMARK_SPARK_CONF"] = json.dumps(conf)
    if catalog:
        env["LAKEMARK_CATALOG"] = catalog
    if mapping:
        env[BUCKET_MAP_ENV] = json.dumps(mapping)
    env.update(policy)
    from ..glue import shim_path

    # Glue scripts import `awsglue` (served from the shim) on the driver and in Python workers.
    python_path = [shim_path(), str(path.resolve().parent)]
    if env.get("PYTHONPATH"):
        python_path.append(env["PYTHONPATH"])
    import importlib.util

    from ..tables import delta_shim_path

    if importlib.util.find_spec("delta") is None:  # `delta.tables` without delta-spark, last
        python_path.append(delta_shim_path())
    env["PYTHONPATH"] = os.pathsep.join(python_path)
    if submit:
        submit_exe = _spark_submit()
        cmd = [submit_exe]
        if master:
            cmd += ["--master", master]
        for key, value in conf.items():
            cmd += ["--conf", f"{key}={value}"]
        cmd += [str(path), *script_args]
        sys.exit(subprocess.call(cmd, env=env))
    with _caller_kept():  # also when the script fails or exits
        _run_here(path, script_args, env, url, conf, verbose, interval)


@contextmanager
def _caller_kept() -> Iterator[None]:
    """The caller's ``os.environ``, ``sys.path`` and ``sys.argv`` as they were before, once
    an in-process run returns or raises: lakemark's settings and whatever the script set in
    them do not leak into a Python caller (tests, a notebook) that calls ``lakemark run``."""
    environ, path, argv = dict(os.environ), list(sys.path), sys.argv
    try:
        yield
    finally:
        for key in [k for k in os.environ if k not in environ]:
            del os.environ[key]
        for key, value in environ.items():
            if os.environ.get(key) != value:
                os.environ[key] = value
        sys.path[:] = path
        sys.argv = argv


def _run_here(path: Path, script_args: tuple[str, ...], env: Mapping[str, str], url: str | None,
              conf: Mapping[str, str], verbose: bool, interval: float) -> None:
    """Run the script in this process with ``env`` and the script's ``sys.argv``."""
    from ..glue import finish_open_jobs, shim_path
    from ..spark import spark_settings

    os.environ.update(env)
    # A script that makes its own SparkContext() (as Glue scripts do) gets lakemark's settings.
    spark_master, settings = spark_settings(verbose=verbose)
    if "PYSPARK_SUBMIT_ARGS" not in os.environ and url is None:
        words = ["--master", spark_master]
        for key, value in settings.items():
            words += ["--conf", f"{key}={value}"]
        os.environ["PYSPARK_SUBMIT_ARGS"] = shlex.join([*words, "pyspark-shell"])
    sys.argv = [str(path), *script_args]
    sys.path[:0] = [shim_path(), str(path.resolve().parent)]
    from ..tables import install_delta_shim

    install_delta_shim()  # `from delta.tables import DeltaTable` without delta-spark
    from pyspark.sql import SparkSession

    restore: Callable[[], None] = lambda: None  # noqa: E731
    if url is None:
        from ..session.jvm_stderr import patch_gateway
        from ..spark_io import install

        patch_gateway()
        install()  # the script's spark.read/df.write: s3:// without S3A, format("delta") w/o jars
        session_before = SparkSession.getActiveSession()
    else:
        from ._run_remote import start_remote

        session_before = None
        restore = start_remote(url, conf, verbose)
    set_aside, unfollow = _follow_set_aside()
    progress = _progress_lines(0.0 if console.is_terminal else interval)
    try:
        with progress.running():
            runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (None, 0):
            finish_open_jobs(exc)
            raise
        finish_open_jobs(None)
    except BaseException as exc:
        finish_open_jobs(exc)
        raise
    else:
        finish_open_jobs(None)
    finally:
        # Stop the session the script started, never one that was running before it.
        active = SparkSession.getActiveSession()
        if active is not None and active is not session_before:
            active.stop()
        unfollow()  # an in-process caller's later Jobs are not this script's
        progress.unfollow()
        restore()
    _exit_if_set_aside(set_aside)


def _endpoint(remote: str | None, master: str | None, submit: bool) -> str | None:
    """The Spark Connect URL of ``--remote``/SPARK_REMOTE, checked (UsageError for a bad one;
    EnvironmentProblem for a server that does not answer), or None for a local Spark."""
    from ..spark import remote_endpoint

    try:
        url = remote_endpoint(remote, master)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    if url is not None and submit:
        raise click.UsageError(f"--submit does not apply with "
                               f"{'--remote' if remote else 'SPARK_REMOTE'}: the script runs "
                               "in this process against the server")
    return url


def _policy_env(on_bad_file: str | None, max_bad_files: str | None,
                max_record_bytes: str | None) -> dict[str, str]:
    """The environment that gives the script's jobs the bad-file policy of these options
    (``run.quarantine.POLICY_ENV``); UsageError naming a bad option."""
    if on_bad_file is None and max_bad_files is None and max_record_bytes is None:
        return {}
    try:
        BadFilePolicy.parse(on_bad_file or "quarantine", max_bad_files, max_record_bytes)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    values = (on_bad_file, max_bad_files, max_record_bytes)
    return {name: value for name, value in zip(POLICY_ENV, values, strict=True)
            if value is not None}


def _follow_set_aside() -> tuple[dict[str, set[str]], Callable[[], None]]:
    """job name -> the source files its committed runs set aside, filled as the script's jobs
    run (an observer of every Job made from now on), and the call that stops following."""
    from ..job import Job, JobEvent, add_job_observer

    found: dict[str, set[str]] = {}
    pending: dict[int, set[str]] = {}

    def observer(job: Job) -> Callable[[JobEvent], None]:
        def seen(event: JobEvent) -> None:
            if event.stage == "quarantined" and event.detail:
                pending.setdefault(id(job), set()).update(event.detail.get("paths") or ())
            elif event.stage == "committed" and pending.get(id(job)):
                found.setdefault(job.name, set()).update(pending.pop(id(job)))

        return seen

    return found, add_job_observer(observer)


class _ScriptProgress(ProgressLines):
    """Progress lines over every job the script runs, each line naming the job at work."""

    def __init__(self, interval_s: float) -> None:
        super().__init__(lambda line: click.echo(line, err=True), interval_s, tasks=spark_tasks)
        self.job: str | None = None
        self.unfollow: Callable[[], None] = lambda: None

    def line(self) -> str:
        text = super().line()
        if self.job is None:
            return text
        return text.replace("progress:", f"progress: job {_printable(self.job)},", 1)


def _printable(name: str) -> str:
    """A job name for one log line: control characters (a newline) shown escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)


def _progress_lines(interval_s: float) -> _ScriptProgress:
    """Follow the script's jobs from now on (nothing printed with interval 0: a terminal)."""
    from ..job import Job, JobEvent, add_job_observer

    progress = _ScriptProgress(interval_s)
    if interval_s > 0:
        def observer(job: Job) -> Callable[[JobEvent], None]:
            def seen(event: JobEvent) -> None:
                progress.job = job.name
                progress.on_event(event)

            return seen

        progress.unfollow = add_job_observer(observer)
    return progress


def _exit_if_set_aside(found: Mapping[str, set[str]]) -> None:
    """As ``ingest files`` does: a script whose runs committed but set aside source files
    ends with one warning line per job and exit status 3 (QUARANTINE_EXIT)."""
    if not found:
        return
    from ._ingest import QUARANTINE_EXIT

    for name, paths in sorted(found.items()):
        click.echo(f"warning: job {name} committed, but {len(paths)} source file(s) could not "
                   f"be read and were set aside; see `lakemark quarantine list {name}`", err=True)
    raise SystemExit(QUARANTINE_EXIT)


def _spark_submit() -> str:
    import pyspark

    candidate = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    found = shutil.which("spark-submit") or (str(candidate) if candidate.exists() else None)
    if not found:
        raise ConfigError("spark-submit was not found (neither on PATH nor in the pyspark package)")
    return found
