"""The web console in a real browser: `lakemark ui` as a process on a free loopback port,
driven by Playwright through Debian's Chromium (/usr/bin/chromium, never a downloaded one).

Open the jobs page, click into a job (its charts are drawn), a run and a file, search a run's
files and search which run took a file; then a job with a file set aside: its count on the jobs
page, its Schema page, the run that set the file aside and the run that took it again,
checking the text a person sees on each page. Set
LAKEMARK_UPDATE_SCREENSHOT=1 to refresh docs/console-*.png."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_console_app import add_run
from test_console_run_details import fill
from test_lineage_html_render import ROOT, chromium

from lakemark.state.sqlite import SQLiteStore


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(proc: subprocess.Popen[bytes], port: int, limit_s: float = 60.0) -> None:
    """Until the server accepts connections (or fail with its output if it ended)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"lakemark ui ended: {proc.communicate()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"lakemark ui did not listen on {port} within {limit_s}s")


@pytest.fixture
def console_url(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    store = SQLiteStore(tmp_path / "s.db")
    ids = {}
    for n in range(6):  # a history worth a chart: one failure among them
        ids[f"o{n}"] = add_run(store, "orders-to-lake",
                               [f"s3://landing/orders/2026/11/{n:02d}/part-{i:04d}.json"
                                for i in range(40 * (n + 1))],
                               fail="S3 read failed: 503 SlowDown" if n == 3 else None)
    ids.update({f"e{k[1:]}": v for k, v in fill(store, "events-raw").items()})
    ids["c0"] = add_run(store, "clicks <daily>", ["s3://landing/clicks/a.json",
                                                   "s3://landing/orders/2026/11/00/part-0007.json"])
    store.close()
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    export = tmp_path / "export" / "123456789012-us-east-1"  # a folder `lineage extract` wrote
    shutil.copytree(ROOT / "tests" / "fixtures" / "catalog" / "123456789012-us-east-1"
                    / "catalog", export / "catalog")
    (export / "jobs" / "classic").mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "fixtures" / "lineage" / "scripts" / "classic.py",
                export / "jobs" / "classic" / "classic.py")
    proc = subprocess.Popen([sys.executable, "-m", "lakemark", "ui", "--state",
                             f"sqlite:///{tmp_path}/s.db", "--port", str(port),
                             "--lineage", str(tmp_path / "export")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_listening(proc, port)
        yield f"http://127.0.0.1:{port}", ids
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_an_operator_finds_a_run_and_a_file_in_chromium(console_url: tuple[str, dict[str, str]],
                                                        tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright
    expect.set_options(timeout=30_000)  # a loaded CI machine renders slowly

    url, ids = console_url
    shots: dict[str, Path] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(url + "/")
        expect(page.locator("h1")).to_have_text("Jobs")
        row = page.locator("#jobs tbody tr", has_text="orders-to-lake")
        expect(row).to_contain_text("SUCCEEDED")
        expect(page.locator("#jobs")).to_contain_text("clicks <daily>")  # a name shown as text
        shots["jobs"] = tmp_path / "jobs.png"
        page.screenshot(path=shots["jobs"])

        row.get_by_role("link", name="orders-to-lake").click()
        expect(page.locator("#job-name")).to_have_text("orders-to-lake")
        expect(page.locator("#chart-duration svg.main-svg").first).to_be_visible()
        expect(page.locator("#chart-bytes svg.main-svg").first).to_be_visible()
        expect(page.locator("#runs tbody tr")).to_have_count(6)
        expect(page.locator("#runs")).to_contain_text("S3 read failed: 503 SlowDown")
        expect(page.locator("#bookmarks tbody tr").first).to_contain_text("v6")
        shots["job"] = tmp_path / "job.png"
        page.screenshot(path=shots["job"], full_page=True)

        page.get_by_role("link", name=ids["o1"]).first.click()
        expect(page.locator("#run-status")).to_have_text("SUCCEEDED")
        expect(page.locator("#files-count")).to_have_text("80 file(s)")
        page.get_by_label("search files").fill("part-0007")
        page.get_by_role("button", name="Search").click()
        expect(page.locator("#files-count")).to_have_text("1 file(s) matching")
        shots["run"] = tmp_path / "run.png"
        page.screenshot(path=shots["run"], full_page=True)

        path = "s3://landing/orders/2026/11/01/part-0007.json"
        page.get_by_role("link", name=path).click()  # which runs took this file?
        expect(page.locator("#takes-count")).to_contain_text("1 take(s)")
        expect(page.locator("#takes")).to_contain_text(ids["o1"])

        page.get_by_label("file pattern").fill("*/part-0007.json")
        page.get_by_role("button", name="Search").click()
        expect(page.locator("#takes-count")).to_contain_text("7 take(s)")
        expect(page.locator("#takes")).to_contain_text("clicks <daily>")
        shots["search"] = tmp_path / "search.png"
        page.screenshot(path=shots["search"], full_page=True)

        # a job with a file set aside: its count on the jobs page, its schemas, its runs
        page.goto(url + "/")
        events = page.locator("#jobs tbody tr", has_text="events-raw")
        expect(events.locator("td").nth(8)).to_have_text("1")  # set aside, not yet retaken
        events.get_by_role("link", name="events-raw").click()
        page.locator("#schema-link").click()
        expect(page.locator("h1")).to_contain_text("Schemas of job events-raw")
        versions = page.locator(".schema-versions tbody tr")
        expect(versions).to_have_count(2)
        expect(versions.first).to_contain_text("added code string")
        expect(versions.first).to_contain_text(ids["e2"])
        shots["schema"] = tmp_path / "schema.png"
        page.screenshot(path=shots["schema"], full_page=True)

        versions.nth(1).get_by_role("link", name=ids["e1"]).click()  # the run of version 1
        expect(page.locator("#quarantined")).to_contain_text("/in/bad2.json")
        expect(page.locator("#quarantined")).to_contain_text("broken link")
        page.locator("#quarantined").get_by_role("link", name=ids["e2"]).click()  # retaken by
        expect(page.locator("#quarantined")).to_contain_text("taken again")
        notes = page.locator("#file-notes")
        expect(notes).to_contain_text("retaken whole")
        expect(notes).to_contain_text("modified since an earlier take: skipped")
        expect(notes).to_contain_text("changed during the read: left out")
        expect(page.locator("#run-timings")).to_have_text(
            "plan 1.250 s · read 0.500 s · write 42.000 s · commit 0.250 s")
        shots["run-details"] = tmp_path / "run-details.png"
        page.screenshot(path=shots["run-details"], full_page=True)

        page.get_by_role("link", name="Lineage").click()  # the export folder's column lineage
        expect(page.locator("#lineage-jobs")).to_contain_text("classic")
        graph = page.frame_locator("#lineage-report")
        expect(graph.locator("#view g.job").first).to_be_visible()
        expect(graph.locator("#view path.e").first).to_be_attached()
        shots["lineage"] = tmp_path / "lineage.png"
        page.screenshot(path=shots["lineage"], full_page=True)
        browser.close()
    for name, shot in shots.items():
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        if os.environ.get("LAKEMARK_UPDATE_SCREENSHOT"):
            (ROOT / "docs" / f"console-{name}.png").write_bytes(shot.read_bytes())
