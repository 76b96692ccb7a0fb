"""``lakemark ui``: the web console, a read-only Starlette app over one state store.

Pages (HTML, rendered by Jinja2 with autoescaping, so every job name, path and error is
escaped) and a JSON API under ``/api/`` (docs/console.md) answer from the same
:class:`~lakemark.console.queries.StateQueries`. Charts are drawn by plotly.js, served from the
installed ``plotly`` package. With a token, every request must carry it (``Authorization:
Bearer``, the ``lakemark_token`` cookie, or ``?token=`` once, which sets the cookie).
"""

from __future__ import annotations

import hmac
import importlib.resources
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.convertors import Convertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import ConfigError, LakemarkError
from ..redaction import redact
from ..state import StateStore
from ._lineage import LineageViews
from .queries import StateQueries, UnknownJobError

__all__ = ["TOKEN_COOKIE", "create_app", "plotly_js"]

TOKEN_COOKIE = "lakemark_token"
#: Jobs per page of the jobs page (filtered and sorted over all jobs first).
JOBS_PER_PAGE = 200
_TEMPLATES = Path(__file__).parent / "templates"


def plotly_js() -> Path:
    """plotly.min.js as the installed ``plotly`` package ships it."""
    path = Path(str(importlib.resources.files("plotly") / "package_data" / "plotly.min.js"))
    if not path.is_file():
        raise ConfigError(f"the plotly package has no {path}; reinstall 'lakemark[ui]'")
    return path


def _human_bytes(n: int | None) -> str:
    if n is None:
        return "-"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def _took(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds:.1f}s" if seconds < 120 else f"{seconds / 60:.1f}min"


def _int_arg(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"query parameter {name!r} must be a whole number, "
                          f"got {raw!r}") from None


class _TokenGate:
    """Refuse (401) every request that does not carry ``token``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    def _ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        auth = request.headers.get("authorization", "")
        bearer = auth[7:] if auth.lower().startswith("bearer ") else None
        if self._ok(bearer) or self._ok(request.cookies.get(TOKEN_COOKIE)):
            await self.app(scope, receive, send)
            return
        if self._ok(request.query_params.get("token")):
            async def send_with_cookie(message: Any) -> None:
                if message["type"] == "http.response.start":
                    cookie = (f"{TOKEN_COOKIE}={self.token.decode()}; HttpOnly; "
                              "SameSite=Strict; Path=/")
                    message["headers"] = [*message.get("headers", []),
                                          (b"set-cookie", cookie.encode())]
                await send(message)

            await self.app(scope, receive, send_with_cookie)
            return
        response = JSONResponse({"error": "this console needs its token: "
                                          "Authorization: Bearer TOKEN, or ?token=TOKEN once"},
                                status_code=401)
        await response(scope, receive, send)


class _JobName(Convertor[str]):
    """A job name in a path (``/jobs/{job:job_name}/schema``): any characters, ``/`` and line
    breaks too (Starlette's ``path`` stops at a line break), sent percent-encoded."""

    regex = r"[\s\S]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return quote(value, safe="")


register_url_convertor("job_name", _JobName())


def create_app(store: StateStore, *, token: str | None = None,
               stale_after_s: float = 24 * 3600.0,
               lineage: LineageViews | None = None) -> ASGIApp:
    """The console over an open ``store`` (opened read-only by the caller; closing it is the
    caller's too); with ``token``, every request must carry it; ``lineage``: what the Lineage
    page shows."""
    lineage = lineage or LineageViews()
    env = Environment(loader=FileSystemLoader(str(_TEMPLATES)),
                      autoescape=select_autoescape(["html"], default=True))
    env.filters["bytes"] = _human_bytes
    env.filters["took"] = _took
    env.filters["q"] = lambda s: quote(str(s), safe="")
    store_name = redact(store.url)

    def queries() -> StateQueries:
        return StateQueries(store, stale_after_s=stale_after_s)

    def page(template: str, code: int = 200, /, **values: Any) -> HTMLResponse:
        html = env.get_template(template).render(store=store_name, **values)
        return HTMLResponse(html, status_code=code)

    def guarded(handler: Callable[[Request], Response], *, api: bool) -> Callable[..., Any]:
        def endpoint(request: Request) -> Response:
            try:
                return handler(request)
            except UnknownJobError as exc:
                return _error(exc, 404, api)
            except LakemarkError as exc:
                return _error(exc, 400, api)

        return endpoint

    def _error(exc: Exception, status: int, api: bool) -> Response:
        message = redact(str(exc))
        if api:
            return JSONResponse({"error": message, "kind": type(exc).__name__},
                                status_code=status)
        heading = "Not found" if status == 404 else "Bad request"
        return page("error.html", status, message=message, heading=heading)

    # -- JSON API ---------------------------------------------------------------------------
    def api_jobs(request: Request) -> Response:
        return JSONResponse(queries().jobs())

    def api_runs(request: Request) -> Response:
        return JSONResponse(queries().runs(
            request.query_params.get("job", ""), offset=_int_arg(request, "offset", 0),
            limit=_int_arg(request, "limit", 50)).to_json())

    def api_bookmarks(request: Request) -> Response:
        return JSONResponse(queries().bookmark_history(
            request.query_params.get("job", ""), offset=_int_arg(request, "offset", 0),
            limit=_int_arg(request, "limit", 50)).to_json())

    def api_io(request: Request) -> Response:
        return JSONResponse(queries().job_io(request.query_params.get("job", "")))

    def api_run(request: Request) -> Response:
        run = queries().run(request.query_params.get("id", ""))
        if run is None:
            return JSONResponse({"error": "no such run", "kind": "UnknownRunError"},
                                status_code=404)
        return JSONResponse(run)

    def api_schema(request: Request) -> Response:
        return JSONResponse(queries().schema_history(request.query_params.get("job", "")))

    def api_run_files(request: Request) -> Response:
        return JSONResponse(queries().run_files(
            request.query_params.get("id", ""), pattern=request.query_params.get("q") or None,
            offset=_int_arg(request, "offset", 0),
            limit=_int_arg(request, "limit", 100)).to_json())

    def api_files(request: Request) -> Response:
        return JSONResponse(queries().find_files(
            request.query_params.get("q", ""), job_name=request.query_params.get("job") or None,
            offset=_int_arg(request, "offset", 0),
            limit=_int_arg(request, "limit", 100)).to_json())

    # -- pages ------------------------------------------------------------------------------
    def jobs_page(request: Request) -> Response:
        q = queries()
        jobs = q.jobs(totals=False)
        text = request.query_params.get("q", "")
        status = request.query_params.get("status", "")
        sort = request.query_params.get("sort", "name")
        if text:
            jobs = [j for j in jobs if text.lower() in j["job_name"].lower()]
        if status == "stale":
            jobs = [j for j in jobs if j["stale"]]
        elif status:
            jobs = [j for j in jobs if (j["last_run"] or {}).get("status") == status]
        keys: dict[str, Callable[[dict[str, Any]], Any]] = {
            "name": lambda j: j["job_name"],
            "started": lambda j: (j["last_run"] or {}).get("started_at") or "",
            "duration": lambda j: (j["last_run"] or {}).get("duration_s") or 0.0,
            "status": lambda j: (j["last_run"] or {}).get("status") or "",
        }
        if sort not in keys:
            raise ConfigError(f"query parameter 'sort' must be one of {', '.join(keys)}, "
                              f"got {sort!r}")
        jobs.sort(key=keys[sort], reverse=sort in ("started", "duration"))
        offset = max(_int_arg(request, "offset", 0), 0)
        shown = q.add_totals(jobs[offset:offset + JOBS_PER_PAGE])
        return page("jobs.html", jobs=shown, total=len(jobs), offset=offset,
                    per_page=JOBS_PER_PAGE, q=text, status=status, sort=sort)

    def job_page(request: Request) -> Response:
        name = request.query_params.get("name", "")
        q = queries()
        runs = q.runs(name, offset=_int_arg(request, "offset", 0), limit=50)
        chart = q.chart_runs(name)
        points = {"run": [r["run_id"] for r in chart],
                  "started": [r["started_at"] for r in chart],
                  "status": [r["status"] for r in chart],
                  "duration": [r["duration_s"] for r in chart],
                  "files": [r["files"] for r in chart], "bytes": [r["bytes"] for r in chart],
                  "rows": [r["rows"] for r in chart],
                  "sinks": {ctx: [r["sink_rows"].get(ctx) for r in chart]
                            for ctx in sorted({c for r in chart for c in r["sink_rows"]})}}
        bookmarks = q.bookmark_history(name, limit=50)
        return page("job.html", name=name, runs=runs, points=points, bookmarks=bookmarks,
                    io=q.job_io(name))

    def run_page(request: Request) -> Response:
        run_id = request.query_params.get("id", "")
        q = queries()
        run = q.run(run_id)
        if run is None:
            return page("error.html", 404, message=f"no run {run_id!r} in {store_name}",
                        heading="Not found")
        pattern = request.query_params.get("q", "")
        files = q.run_files(run_id, pattern=pattern or None,
                            offset=_int_arg(request, "offset", 0), limit=100)
        return page("run.html", run=run, files=files, q=pattern)

    def schema_page(request: Request) -> Response:
        name = str(request.path_params["job"])
        return page("schema.html", name=name, sources=queries().schema_history(name))

    def search_page(request: Request) -> Response:
        pattern = request.query_params.get("q", "")
        job = request.query_params.get("job", "")
        takes = None
        if pattern:
            takes = queries().find_files(pattern, job_name=job or None,
                                         offset=_int_arg(request, "offset", 0), limit=100)
        return page("search.html", q=pattern, job=job, takes=takes)

    def lineage_view(request: Request) -> str:
        default = "scripts" if lineage.folder is not None else "runs"
        return request.query_params.get("view", default)

    def lineage_page(request: Request) -> Response:
        views = [(v, label) for v, label, there in (
            ("scripts", "scripts of the export folder", lineage.folder is not None),
            ("runs", "what runs reported", lineage.events is not None)) if there]
        if not views:
            return page("lineage.html", views=[], view="", jobs=[])
        view = lineage_view(request)
        jobs = [{"job": j.job, "inputs": len(j.inputs), "outputs": len(j.outputs),
                 "edges": sum(len(e) for o in j.outputs for _, e in o.columns),
                 "warnings": [str(w) for w in j.warnings]}
                for j in lineage.jobs(view, rescan=request.query_params.get("rescan") == "1")]
        return page("lineage.html", views=views, view=view, jobs=jobs)

    def lineage_report(request: Request) -> Response:
        return HTMLResponse(lineage.html(lineage_view(request)))

    def api_lineage(request: Request) -> Response:
        return JSONResponse(lineage.json(lineage_view(request)))

    def plotly(request: Request) -> Response:
        return FileResponse(plotly_js(), media_type="text/javascript",
                            headers={"cache-control": "max-age=86400"})

    routes = [
        Route("/", guarded(jobs_page, api=False)),
        Route("/job", guarded(job_page, api=False)),
        Route("/run", guarded(run_page, api=False)),
        Route("/search", guarded(search_page, api=False)),
        Route("/jobs/{job:job_name}/schema", guarded(schema_page, api=False)),
        Route("/lineage", guarded(lineage_page, api=False)),
        Route("/lineage/report", guarded(lineage_report, api=False)),
        Route("/api/lineage", guarded(api_lineage, api=True)),
        Route("/api/jobs", guarded(api_jobs, api=True)),
        Route("/api/runs", guarded(api_runs, api=True)),
        Route("/api/bookmarks", guarded(api_bookmarks, api=True)),
        Route("/api/io", guarded(api_io, api=True)),
        Route("/api/run", guarded(api_run, api=True)),
        Route("/api/run/files", guarded(api_run_files, api=True)),
        Route("/api/schema", guarded(api_schema, api=True)),
        Route("/api/files", guarded(api_files, api=True)),
        Route("/static/plotly.min.js", plotly),
    ]
    app: ASGIApp = Starlette(routes=routes)
    if token:
        app = _TokenGate(app, token)
    return app
