"""The web console's JSON API and pages (Starlette's TestClient over a real SQLite store),
the token gate, escaping of hostile names, redaction, and `lakemark ui`'s checks."""

from __future__ import annotations

import json
import socket
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient
from test_lineage_render_escaping import HOSTILE

from lakemark.cli import cli
from lakemark.console import StateQueries
from lakemark.console.app import TOKEN_COOKIE, create_app
from lakemark.planning import FileEntry
from lakemark.state import open_store
from lakemark.state.sqlite import SQLiteStore

SECRET = "hunter2-Pa55"


def add_run(store: Any, job: str, paths: list[str], fail: str | None = None) -> str:
    r = store.begin_run(job, "enable", host=socket.gethostname(), pid=1, lease_timeout_s=60)
    store.record_plan(r.run_id, "src", {"source": f"postgresql://u:{SECRET}@db/x"},
                      [FileEntry(path=p, mtime=1_700_000_000_000, size=2048) for p in paths])
    if fail:
        store.fail_run(r.run_id, fail, update_bookmark=True)
    else:
        store.commit_run(r.run_id, {"src": {"high": 1}}, update_bookmark=True)
    return str(r.run_id)


@pytest.fixture
def store(tmp_path: Path) -> Any:
    s = SQLiteStore(tmp_path / "s.db")
    s.ids = {"o1": add_run(s, "orders", [f"/in/part-{i:04d}.json" for i in range(250)]),
             "o2": add_run(s, "orders", ["/in/late.json"],
                           fail=f"could not read: password={SECRET}"),
             "c1": add_run(s, "clicks", ["/in/part-0001.json"])}
    yield s
    s.close()


@pytest.fixture
def client(store: Any) -> TestClient:
    return TestClient(create_app(store))


def test_api_gives_the_data_of_the_query_layer(store: Any, client: TestClient) -> None:
    jobs = client.get("/api/jobs").json()
    assert jobs == json.loads(json.dumps(StateQueries(store).jobs()))
    assert [j["job_name"] for j in jobs] == ["clicks", "orders"]
    runs = client.get("/api/runs", params={"job": "orders", "limit": 1}).json()
    assert runs["total"] == 2 and runs["items"][0]["run_id"] == store.ids["o2"]
    assert SECRET not in json.dumps(runs)
    run = client.get("/api/run", params={"id": store.ids["o1"]}).json()
    assert run["files"] == 250 and run["inputs"][0]["source"].startswith("postgresql://u:")
    assert SECRET not in json.dumps(run)
    files = client.get("/api/run/files", params={"id": store.ids["o1"], "q": "part-02*",
                                                 "offset": 10, "limit": 20}).json()
    assert files["total"] == 0  # a glob is the whole path
    files = client.get("/api/run/files", params={"id": store.ids["o1"], "q": "*/part-02*",
                                                 "offset": 40, "limit": 20}).json()
    assert files["total"] == 50 and [f["path"] for f in files["items"]] == [
        f"/in/part-{i:04d}.json" for i in range(240, 250)]
    takes = client.get("/api/files", params={"q": "part-0001"}).json()
    assert {(t["job_name"], t["run_id"]) for t in takes["items"]} == {
        ("orders", store.ids["o1"]), ("clicks", store.ids["c1"])}
    hist = client.get("/api/bookmarks", params={"job": "orders"}).json()
    assert [v["version"] for v in hist["items"]] == [2, 1]


def test_api_errors_are_one_clear_line(client: TestClient) -> None:
    r = client.get("/api/runs", params={"job": "ordrs"})
    assert r.status_code == 404 and "did you mean 'orders'" in r.json()["error"]
    r = client.get("/api/runs", params={"job": "orders", "limit": "5000"})
    assert r.status_code == 400 and "limit" in r.json()["error"]
    r = client.get("/api/runs", params={"job": "orders", "offset": "x"})
    assert r.status_code == 400 and "'offset'" in r.json()["error"]
    assert client.get("/api/run", params={"id": "jr_nope"}).status_code == 404
    assert client.get("/api/files", params={"q": ""}).status_code == 400
    r = client.get("/job", params={"name": "ordrs"})
    assert r.status_code == 404 and "did you mean" in r.text


def test_pages_show_what_a_person_looks_for(store: Any, client: TestClient) -> None:
    page = client.get("/").text
    assert "orders" in page and store.ids["o2"] in page and "FAILED" in page
    assert "orders" not in client.get("/", params={"q": "click"}).text.split("<tbody>")[1]
    job = client.get("/job", params={"name": "orders"}).text
    assert 'src="/static/plotly.min.js"' in job and "chart-duration" in job
    assert store.ids["o1"] in job and "v2" in job
    run = client.get("/run", params={"id": store.ids["o2"]}).text
    assert "password=***" in run and SECRET not in run
    run = client.get("/run", params={"id": store.ids["o1"], "q": "part-0007"}).text
    assert "1 file(s) matching" in run and "/in/part-0007.json" in run
    paged = client.get("/run", params={"id": store.ids["o1"], "offset": 200}).text
    assert "201–250 of 250" in paged and "/in/part-0200.json" in paged
    search = client.get("/search", params={"q": "part-0001"}).text
    assert "2 take(s)" in search and store.ids["c1"] in search
    js = client.get("/static/plotly.min.js")
    assert js.status_code == 200 and "plotly" in js.text[:2000].lower()


def test_bad_sort_is_refused_by_name(client: TestClient) -> None:
    r = client.get("/", params={"sort": "evil"})
    assert r.status_code == 400 and "Bad request" in r.text and "&#39;sort&#39;" in r.text


def test_a_token_is_checked_on_every_request(store: Any) -> None:
    client = TestClient(create_app(store, token="t0ken"))
    for path in ("/", "/api/jobs", "/static/plotly.min.js", "/job?name=orders"):
        assert client.get(path).status_code == 401, path
    assert client.get("/api/jobs", headers={"Authorization": "Bearer nope"}).status_code == 401
    assert client.get("/api/jobs", headers={"Authorization": "Bearer t0ken"}).status_code == 200
    first = client.get("/", params={"token": "t0ken"})
    assert first.status_code == 200 and TOKEN_COOKIE in first.headers["set-cookie"]
    assert client.get("/api/jobs").status_code == 200  # the cookie carries it now


class Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.links: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text = ""
        self.comments: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "a":
            self.links.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text += data

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


def norm(text: str) -> str:
    """Line breaks as an HTML parser may hand them back."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parsed(html: str) -> Text:
    p = Text()
    p.feed(html)
    p.close()
    return p


def test_hostile_names_stay_text(tmp_path: Path) -> None:
    # names a store can hold (SQLite text is UTF-8: no lone surrogates; NUL is cut by drivers)
    names = [n for n in HOSTILE if "\x00" not in n and "\udc80" not in n]
    store = SQLiteStore(tmp_path / "h.db")
    ids = {n: add_run(store, n, [f"/in/{n}"], fail=n) for n in names}
    client = TestClient(create_app(store))
    pages = {"/": {}, "/search": {"q": "/in/"}}
    for path, params in pages.items():
        page = parsed(client.get(path, params=params).text)
        assert page.comments == [] and "script" not in page.tags, path
        for n in names:
            assert norm(n) in norm(page.text), (path, n[:30])
    for n in names:
        job = client.get("/job", params={"name": n})
        assert job.status_code == 200, n[:30]
        page = parsed(job.text)
        assert page.tags.count("script") == 3 and page.comments == [], n[:30]
        run = parsed(client.get("/run", params={"id": ids[n]}).text)
        assert "script" not in run.tags and run.comments == []
        assert norm(f"/in/{n}") in norm(run.text)
        link = next(v for t, a in page.links for k, v in a if k == "href" and
                    v and v.endswith("/schema"))
        schema = client.get(link)
        assert schema.status_code == 200, (n[:30], link)
        text = parsed(schema.text)
        assert "script" not in text.tags and text.comments == [], n[:30]
        assert norm(n) in norm(text.text), n[:30]
    store.close()


def test_ui_refuses_a_public_address_without_a_token(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    open_store(url).close()
    result = CliRunner().invoke(cli, ["ui", "--state", url, "--host", "0.0.0.0"],
                                env={"LAKEMARK_UI_TOKEN": None})
    assert result.exit_code == 1 and "--token" in result.stderr and "0.0.0.0" in result.stderr


def test_ui_names_a_missing_store(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["ui", "--state", f"sqlite:///{tmp_path}/none.db"])
    assert result.exit_code == 1 and "none.db" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "none.db").exists()


def test_the_jobs_page_pages_after_filtering_and_sorting(tmp_path: Path) -> None:
    from lakemark.console import app as console_app

    store = SQLiteStore(tmp_path / "many.db")
    for n in range(console_app.JOBS_PER_PAGE + 5):
        add_run(store, f"job-{n:04d}", [f"/in/{n}.json"])
    client = TestClient(create_app(store))
    first = client.get("/").text
    assert f"{console_app.JOBS_PER_PAGE + 5} job(s), 1–{console_app.JOBS_PER_PAGE} shown" in first
    assert "job-0000" in first and "job-0204" not in first
    rest = client.get("/", params={"offset": console_app.JOBS_PER_PAGE}).text
    assert "job-0204" in rest and "job-0000" not in rest and "/in/" not in rest
    assert "2.0 KiB" in rest  # the shown jobs' totals
    store.close()


def test_the_api_and_pages_on_postgresql() -> None:
    import uuid

    import psycopg
    from pgtest import DATABASE, HOST as PGHOST, PORT, need_postgres, state_url

    user = need_postgres()
    schema = f"lm_console_app_{uuid.uuid4().hex[:12]}"
    url = state_url(user) + f"?schema={schema}"
    open_store(url).close()
    writer = open_store(url)
    try:
        rid = add_run(writer, "orders", ["s3://b/in/x_1%.json", "s3://b/in/y.json"],
                      fail=f"password={SECRET}")
        store = open_store(url, read_only=True)
        client = TestClient(create_app(store))
        assert client.get("/api/jobs").json()[0]["last_run"]["files"] == 2
        assert client.get("/api/files", params={"q": "x_1%"}).json()["items"][0]["run_id"] == rid
        assert client.get("/api/files", params={"q": "*/?_1%.json"}).json()["total"] == 1
        page = client.get("/run", params={"id": rid}).text
        assert "FAILED" in page and SECRET not in page
        store.close()
    finally:
        writer.close()
        with psycopg.connect(host=PGHOST, port=PORT, dbname=DATABASE, user=user,
                             autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_which_hosts_count_as_loopback() -> None:
    from lakemark.cli._ui import is_loopback

    assert all(is_loopback(h) for h in ("127.0.0.1", "127.0.0.2", "::1", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "192.168.1.5", "example.com"))
