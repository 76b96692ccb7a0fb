"""Job arguments as AWS Glue passes and resolves them (``awsglue.utils.getResolvedOptions``).

Glue starts a script with ``--KEY value`` pairs (``--JOB_NAME``, ``--job-bookmark-option``,
``--TempDir`` and any user argument). ``getResolvedOptions(sys.argv, ["JOB_NAME", "X"])``
returns ``{"JOB_NAME": …, "X": …}`` plus the reserved arguments Glue always resolves
(``job_bookmark_option`` …), and fails with :class:`GlueArgumentError` naming every required
argument that is missing. Arguments that were not asked for are ignored, as in Glue.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import ConfigError

__all__ = [
    "GlueArgumentError",
    "bookmark_arguments",
    "getResolvedOptions",
    "parse_job_arguments",
]

#: Reserved arguments: always resolved (with these defaults), never requested by name.
RESERVED_DEFAULTS: dict[str, str | None] = {
    "job_bookmark_option": "job-bookmark-disable",
    "job_bookmark_from": None,
    "job_bookmark_to": None,
    "continuation_option": "continuation-disabled",
    "JOB_ID": None,
    "JOB_RUN_ID": None,
    "SECURITY_CONFIGURATION": None,
    "encryption_type": None,
}


class GlueArgumentError(ConfigError):
    """A job argument that the script requires was not given (or was given malformed)."""


def _canonical(name: str) -> str:
    """Glue's argparse spelling: ``job-bookmark-option`` is resolved as ``job_bookmark_option``."""
    return name.replace("-", "_") if name.replace("-", "_") in RESERVED_DEFAULTS else name


def parse_job_arguments(argv: Sequence[str]) -> dict[str, str]:
    """Every ``--KEY value`` / ``--KEY=value`` pair of ``argv`` (the script name is skipped).

    A ``--KEY`` followed by another ``--…`` or by nothing has the value ``""`` only if it is
    the last argument; otherwise the next word is its value, even when it starts with ``-``
    (Glue passes values such as ``-1`` verbatim).
    """
    out: dict[str, str] = {}
    words = list(argv)
    i = 1 if words and not words[0].startswith("--") else 0
    while i < len(words):
        word = words[i]
        if not word.startswith("--") or word == "--":
            i += 1
            continue
        key, eq, value = word[2:].partition("=")
        if eq:
            out[_canonical(key)] = value
            i += 1
        elif i + 1 < len(words):
            out[_canonical(key)] = words[i + 1]
            i += 2
        else:
            out[_canonical(key)] = ""
            i += 1
    return out


def getResolvedOptions(args: Sequence[str], options: Sequence[str]) -> dict[str, str]:  # noqa: N802
    """Resolve the named job arguments from ``args`` (normally ``sys.argv``), as Glue does."""
    if isinstance(options, str):
        raise GlueArgumentError(
            f"getResolvedOptions takes a list of argument names, not the string {options!r}"
        )
    given = parse_job_arguments(args)
    reserved = [o for o in options if _canonical(o) in RESERVED_DEFAULTS]
    if reserved:
        raise GlueArgumentError(
            "reserved argument(s) are resolved automatically and must not be requested: "
            + ", ".join(reserved)
        )
    missing = [o for o in options if o not in given]
    if missing:
        raise GlueArgumentError(
            "the following arguments are required: " + ", ".join(f"--{m}" for m in missing)
        )
    resolved: dict[str, str] = {o: given[o] for o in options}
    for key, default in RESERVED_DEFAULTS.items():
        value = given.get(key, default)
        if value is not None:
            resolved[key] = value
    return resolved


def bookmark_arguments(args: dict[str, str]) -> tuple[str, str | None, str | None]:
    """(option, from run id, to run id) from resolved or raw job arguments."""
    option = args.get("job_bookmark_option") or args.get("job-bookmark-option") \
        or "job-bookmark-disable"
    start = args.get("job_bookmark_from") or args.get("job-bookmark-from") or None
    end = args.get("job_bookmark_to") or args.get("job-bookmark-to") or None
    return option, start, end
