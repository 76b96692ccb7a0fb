"""Sending OpenLineage events to an HTTP endpoint (Marquez, or any OpenLineage collector).

Each event is POSTed as JSON to ``URL`` (for Marquez: ``http://host:5000/api/v1/lineage``),
optionally with ``Authorization: Bearer <key>``. A refused event stops the sending with an
error naming the endpoint, the HTTP status and the job.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError
from ..redaction import redact_obj

__all__ = ["send_events"]


def send_events(url: str, events: Sequence[dict[str, Any]], *, api_key: str | None = None,
                timeout: float = 30.0) -> int:
    """POST every event to ``url``; the number sent."""
    if not url.lower().startswith(("http://", "https://")):
        raise ConfigError(f"OpenLineage endpoint {url!r} is not an http(s) URL")
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    for n, event in enumerate(events):
        request = urllib.request.Request(url, data=json.dumps(redact_obj(event)).encode("utf-8"),
                                         headers=headers, method="POST")
        job = event.get("job", {}).get("name", "?")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                response.read()
        except urllib.error.HTTPError as exc:
            raise ConfigError(f"OpenLineage endpoint {url} refused the event of job {job}: "
                              f"HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ConfigError(f"cannot send OpenLineage events to {url} ({n} sent): {reason}"
                              ) from None
    return len(events)
