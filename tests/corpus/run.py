"""Run the Glue compatibility corpus and print its table (``docs/glue.md`` keeps the last one).

    PYTHONPATH=src python tests/corpus/run.py            # every case
    PYTHONPATH=src python tests/corpus/run.py --fast     # the CI subset
    PYTHONPATH=src python tests/corpus/run.py plain_spark_s3 studio_sql_query

Each case runs its script unmodified with ``lakemark run`` in a fresh process (one JVM each).
Cases that need S3 get a moto_server started here (the venv's ``moto_server``).
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))  # tests/: pgtest

from cases import CASES, Case, run_case  # noqa: E402
from world import World  # noqa: E402

MOTO_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1"}


def start_moto() -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    exe = str(Path(sys.executable).with_name("moto_server"))
    proc = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).read()
            return proc, endpoint
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise SystemExit("moto_server did not start") from None
            time.sleep(0.2)


def outcome(case: Case, endpoint: str | None) -> tuple[str, str]:
    """("pass"|"FAIL", detail) for one case in a fresh temporary world."""
    with tempfile.TemporaryDirectory(prefix=f"corpus-{case.name}-") as tmp:
        env = dict(MOTO_ENV, AWS_ENDPOINT_URL=endpoint) if endpoint else {}
        world = World(Path(tmp), env)
        try:
            runs = run_case(case, world)
            case.check(world, runs)
        except Exception as exc:  # noqa: BLE001 - a broken case is a failed case
            text = str(exc).strip().splitlines()
            return "FAIL", (text[-1] if text else type(exc).__name__)[:200]
        if case.expect_failure:
            lines = runs[-1].stderr.splitlines()
            at = max((i for i, ln in enumerate(lines) if ln.startswith("error:")), default=-1)
            text = " ".join(ln.strip() for ln in lines[at:])
            return "pass", f"fails as expected: {text[:160]}"
        return "pass", ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*")
    parser.add_argument("--fast", action="store_true", help="only the CI subset")
    opts = parser.parse_args()
    chosen = [c for c in CASES if (not opts.names or c.name in opts.names)
              and (not opts.fast or c.fast)]
    moto = None
    endpoint = None
    if any(c.needs_s3 for c in chosen):
        moto, endpoint = start_moto()
    failed = 0
    print("| script | pattern | result | note |\n|---|---|---|---|")
    try:
        for case in chosen:
            result, detail = outcome(case, endpoint if case.needs_s3 else None)
            failed += result != "pass"
            print(f"| `{case.script}` | {case.pattern} | {result} | {detail} |", flush=True)
    finally:
        if moto is not None:
            moto.terminate()
            moto.wait(timeout=10)
    print(f"\n{len(chosen) - failed}/{len(chosen)} pass")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
