"""Sending OpenLineage events through openlineage-python's transports.

``send_events`` POSTs each event as JSON to ``URL`` (for Marquez:
``http://host:5000/api/v1/lineage``) with the package's HTTP transport (retries on 5xx and
connection errors, ``Authorization: Bearer <key>`` through its API-key provider).
``file_emitter`` appends events as JSON lines with its file transport. A refused event stops
the sending with an error naming the endpoint, the HTTP status and the job. Events are
redacted before they leave, and the transports serialise them the OpenLineage way (fields
whose value is null are left out).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..errors import ConfigError
from ..redaction import redact_obj

__all__ = ["file_emitter", "send_events"]

#: Retries of one event: a collector that is restarting gets a few seconds, a dead one fails
#: the sending quickly.
_RETRY = {"total": 2, "read": 2, "connect": 2, "backoff_factor": 0.2,
          "status_forcelist": [500, 502, 503, 504], "allowed_methods": ["POST"]}


def _http_transport(url: str, api_key: str | None, timeout: float) -> Any:
    from openlineage.client.transport.http import (
        ApiKeyTokenProvider,
        HttpConfig,
        HttpTransport,
        TokenProvider,
    )

    parts = urlsplit(url)
    endpoint = parts.path.lstrip("/") + (f"?{parts.query}" if parts.query else "")
    auth = ApiKeyTokenProvider({"apiKey": api_key}) if api_key else TokenProvider({})
    return HttpTransport(HttpConfig(url=f"{parts.scheme}://{parts.netloc}/", endpoint=endpoint,
                                    timeout=timeout, auth=auth, retry=dict(_RETRY)))


def send_events(url: str, events: Sequence[dict[str, Any]], *, api_key: str | None = None,
                timeout: float = 30.0) -> int:
    """POST every event to ``url``; the number sent."""
    import requests

    if not url.lower().startswith(("http://", "https://")):
        raise ConfigError(f"OpenLineage endpoint {url!r} is not an http(s) URL")
    transport = _http_transport(url, api_key, timeout)
    for n, event in enumerate(events):
        job = event.get("job", {}).get("name", "?")
        try:
            transport.emit(redact_obj(event))
        except requests.HTTPError as exc:
            response = exc.response
            status = f"HTTP {response.status_code} {response.reason}" if response is not None \
                else str(exc)
            raise ConfigError(f"OpenLineage endpoint {url} refused the event of job {job}: "
                              f"{status}") from None
        except (requests.RequestException, OSError) as exc:
            raise ConfigError(f"cannot send OpenLineage events to {url} ({n} sent): "
                              f"{type(exc).__name__}") from None
    return len(events)


def file_emitter(path: Path) -> Callable[[dict[str, Any]], None]:
    """A function that appends each event it is given to ``path`` as one JSON line."""
    from openlineage.client.transport.file import FileConfig, FileTransport

    transport = FileTransport(FileConfig(log_file_path=str(path), append=True))

    def emit(event: dict[str, Any]) -> None:
        transport.emit(redact_obj(event))

    return emit
