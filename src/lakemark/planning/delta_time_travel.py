"""Which version a Delta time-travel read means, by the rules Delta on Spark applies (pure: no
I/O, no Spark; the caller lists ``_delta_log`` and passes what it found).

Delta's rules, as its documentation and error classes give them:

* ``versionAsOf`` and ``timestampAsOf`` together are refused (``DELTA_ONEOF_IN_TIMETRAVEL``), and
  so is a path's ``@v<n>`` / ``@<yyyyMMddHHmmssSSS>`` suffix together with either option
  ("time travel in multiple formats").
* A version must lie between the earliest *recreatable* version and the latest one
  (``DELTA_VERSION_NOT_FOUND``: "Available versions: [earliest, latest]"); a negative version is
  simply outside that range. The earliest recreatable version is 0 while every commit file from
  0 on is kept, else the oldest complete checkpoint from which every later commit file is kept
  (log clean-up removes commit files before a checkpoint).
* A timestamp resolves to the last version committed at or before it. One before the earliest
  recreatable version's commit is refused (``DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION``),
  and so is one after the latest commit (``DELTA_TIMESTAMP_GREATER_THAN_COMMIT``: Delta's reader
  does not return the last commit for a later time). A commit's time is its file's
  modification time, made strictly increasing over the versions (Delta adjusts a commit whose
  time is not after its predecessor's to the predecessor's plus 1 ms), or its
  ``inCommitTimestamp`` where the table has in-commit timestamps on.
* A timestamp string is read as Spark casts a string to a timestamp: ``yyyy[-MM[-dd]]``, then
  an optional time ``HH[:mm[:ss[.fraction]]]`` after ``T`` or a space, then an optional zone
  (``Z``, ``+hh:mm``, ``UTC``, a region such as ``Europe/Paris``); without a zone, in the
  session's time zone.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..errors import ConfigError, SourceError

__all__ = ["LogListing", "TimeTravel", "earliest_recreatable", "commit_times", "format_ms",
           "parse_log_names", "parse_timestamp", "requested", "split_path", "check_version",
           "version_at"]

_COMMIT = re.compile(r"^(\d{20})\.json$")
_CLASSIC = re.compile(r"^(\d{20})\.checkpoint\.parquet$")
_MULTI = re.compile(r"^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$")
_V2 = re.compile(r"^(\d{20})\.checkpoint\.[0-9a-fA-F-]{36}\.(?:json|parquet)$")
_AT_VERSION = re.compile(r"^(?P<path>.+)@[vV](?P<version>\d+)$")
_AT_STAMP = re.compile(r"^(?P<path>.+)@(?P<stamp>\d{17})$")
_STAMP = re.compile(
    r"^\s*(?P<y>[+-]?\d{4,6})(?:-(?P<mo>\d{1,2})(?:-(?P<d>\d{1,2})"
    r"(?:[T ](?P<h>\d{1,2})(?::(?P<mi>\d{1,2})(?::(?P<s>\d{1,2})(?:\.(?P<f>\d{1,9}))?)?)?)?)?)?"
    r"\s*(?P<z>Z|[+-]\d{1,2}(?::?\d{2})?|(?:UTC|GMT|UT)(?:[+-]\d{1,2}(?::?\d{2})?)?"
    r"|[A-Za-z_]+(?:/[A-Za-z_+-]+)+)?\s*$")


@dataclass(frozen=True)
class LogListing:
    """What ``_delta_log`` holds, by version: commit files and complete checkpoints, each with
    its modification time in epoch milliseconds."""

    commits: Mapping[int, int]
    checkpoints: Mapping[int, int]


@dataclass(frozen=True)
class TimeTravel:
    """A read's time-travel request: a version, or an instant (aware datetime), or neither."""

    version: int | None = None
    timestamp: dt.datetime | None = None
    text: str = ""  # the timestamp as the user gave it, for messages


def parse_log_names(entries: Sequence[tuple[str, int]]) -> LogListing:
    """The :class:`LogListing` of ``_delta_log`` entries given as (file name, mtime ms).
    A multi-part checkpoint counts only when all its parts are there."""
    commits: dict[int, int] = {}
    checkpoints: dict[int, int] = {}
    parts: dict[tuple[int, int], list[int]] = {}
    for name, mtime in entries:
        if found := _COMMIT.match(name):
            commits[int(found.group(1))] = mtime
        elif found := (_CLASSIC.match(name) or _V2.match(name)):
            checkpoints[int(found.group(1))] = mtime
        elif found := _MULTI.match(name):
            parts.setdefault((int(found.group(1)), int(found.group(3))), []).append(mtime)
    for (version, total), times in parts.items():
        if len(times) == total:
            checkpoints[version] = max(times)
    return LogListing(commits, checkpoints)


def earliest_recreatable(listing: LogListing, latest: int) -> int:
    """The oldest version whose snapshot the log can still rebuild: 0 while commits 0 ..
    ``latest`` are all there, else the oldest checkpoint followed by every later commit.
    ``latest`` itself when nothing older can be rebuilt."""
    kept = listing.commits
    start = latest
    while start - 1 >= 0 and (start - 1) in kept:
        start -= 1  # commits start .. latest are all kept (latest's own may be a checkpoint)
    if start == 0 and 0 in kept:
        return 0
    # the oldest checkpoint at or after the gap, from which every later commit is kept
    usable = [c for c in listing.checkpoints if start - 1 <= c <= latest]
    return min(usable) if usable else latest


def commit_times(listing: LogListing, earliest: int, latest: int,
                 in_commit: Callable[[int], int | None] | None = None,
                 in_commit_from: int | None = None) -> list[int]:
    """Each version's commit time (ms) from ``earliest`` to ``latest``, strictly increasing as
    Delta makes them: the commit file's modification time (the checkpoint's when the commit
    file is gone), or ``in_commit(v)`` from version ``in_commit_from`` on."""
    out: list[int] = []
    for version in range(earliest, latest + 1):
        stamp: int | None = None
        if in_commit is not None and in_commit_from is not None and version >= in_commit_from:
            stamp = in_commit(version)
        if stamp is None:
            stamp = listing.commits.get(version, listing.checkpoints.get(version, 0))
            if out and stamp <= out[-1]:
                stamp = out[-1] + 1
        out.append(stamp)
    return out


def format_ms(ms: int) -> str:
    """An epoch-milliseconds instant as ``YYYY-MM-DD HH:MM:SS.fff UTC``."""
    when = dt.datetime.fromtimestamp(ms / 1000, dt.UTC)
    return when.strftime("%Y-%m-%d %H:%M:%S.") + f"{ms % 1000:03d} UTC"


def _zone(text: str | None, default: str) -> dt.tzinfo:
    name = (text or "").strip()
    if not name:
        name = default or "UTC"
    if name in ("Z", "UTC", "GMT", "UT"):
        return dt.UTC
    offset = re.fullmatch(r"(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?", name)
    if offset:
        sign = -1 if offset.group(1) == "-" else 1
        delta = dt.timedelta(hours=int(offset.group(2)), minutes=int(offset.group(3) or 0))
        return dt.timezone(sign * delta)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r}") from None


def parse_timestamp(text: str, session_zone: str = "UTC") -> dt.datetime:
    """``text`` as Spark casts a string to a timestamp (an aware datetime); a string without a
    zone is in ``session_zone``. ValueError if it is not a timestamp."""
    found = _STAMP.match(str(text))
    if not found:
        raise ValueError(str(text))
    g = found.groupdict()
    fraction = (g["f"] or "").ljust(6, "0")[:6]
    naive = dt.datetime(int(g["y"]), int(g["mo"] or 1), int(g["d"] or 1), int(g["h"] or 0),
                        int(g["mi"] or 0), int(g["s"] or 0), int(fraction or 0))
    return naive.replace(tzinfo=_zone(g["z"], session_zone))


def requested(options: Mapping[str, object], session_zone: str = "UTC",
              at_path: TimeTravel | None = None) -> TimeTravel:
    """The time travel ``options`` ask for (``versionAsOf`` / ``timestampAsOf`` in any case),
    or ``at_path`` (from a path's ``@`` suffix). ConfigError naming the option when both are
    given, when a path suffix comes with an option, or when a value cannot be read, and for
    ``readChangeFeed=true``: a snapshot read must not silently hand back the table instead of
    its changes."""
    lower = {str(k).lower(): v for k, v in options.items()}
    for name in ("readChangeFeed", "readChangeData"):
        if str(lower.get(name.lower(), "")).strip().lower() == "true":
            raise ConfigError(
                f"option {name}: a format('delta') read gives a snapshot of the table, not its "
                "change data feed; read the changes incrementally with Job.read_table(path, "
                "options={'readChangeFeed': 'true'}) (docs/delta.md)")
    version, stamp = lower.get("versionasof"), lower.get("timestampasof")
    if version is not None and stamp is not None:
        raise ConfigError("give either option timestampAsOf or option versionAsOf for time "
                          "travel, not both")
    if at_path is not None and (version is not None or stamp is not None):
        raise ConfigError("time travel given in multiple formats: a path ending in @v<version> "
                          "or @<yyyyMMddHHmmssSSS> and option "
                          f"{'versionAsOf' if version is not None else 'timestampAsOf'}")
    if at_path is not None:
        return at_path
    if version is not None:
        try:
            return TimeTravel(version=int(str(version).strip()))
        except ValueError:
            raise ConfigError(f"option versionAsOf must be a whole number, not "
                              f"{version!r}") from None
    if stamp is not None:
        try:
            return TimeTravel(timestamp=parse_timestamp(str(stamp), session_zone),
                              text=str(stamp))
        except ValueError:
            raise ConfigError(f"option timestampAsOf: the provided timestamp {str(stamp)!r} "
                              "cannot be converted to a valid timestamp (e.g. "
                              "'2024-05-01 12:00:00' or '2024-05-01T12:00:00Z')") from None
    return TimeTravel()


def split_path(path: str, session_zone: str = "UTC") -> tuple[str, TimeTravel] | None:
    """``(table path, request)`` when ``path`` ends in Delta's ``@v<version>`` or
    ``@<yyyyMMddHHmmssSSS>`` time-travel suffix, else None (the caller uses the suffix only
    when the path as given is not a table, as Delta does)."""
    if found := _AT_VERSION.match(path):
        return found.group("path"), TimeTravel(version=int(found.group("version")))
    if found := _AT_STAMP.match(path):
        raw = found.group("stamp")
        try:
            naive = dt.datetime.strptime(raw[:14], "%Y%m%d%H%M%S").replace(
                microsecond=int(raw[14:]) * 1000)
        except ValueError:
            raise ConfigError(f"path {path!r}: @{raw} is not a timestamp of the form "
                              "yyyyMMddHHmmssSSS") from None
        return found.group("path"), TimeTravel(
            timestamp=naive.replace(tzinfo=_zone(None, session_zone)), text=raw)
    return None


def check_version(root: str, version: int, earliest: int, latest: int) -> int:
    """``version`` if the log can rebuild it, else Delta's refusal naming the range."""
    if version < earliest or version > latest:
        raise SourceError(f"Cannot time travel Delta table {root} to version {version}. "
                          f"Available versions: [{earliest}, {latest}].")
    return version


def version_at(root: str, wanted: dt.datetime, times: Sequence[int], earliest: int,
               text: str = "") -> int:
    """The last version committed at or before ``wanted``; ``times`` are the commit times
    (ms) of versions ``earliest`` .. latest. SourceError, naming the bound, when ``wanted`` is
    before the earliest recreatable version or after the latest commit."""
    shown = text or wanted.isoformat()
    micros = (wanted - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(microseconds=1)
    latest = earliest + len(times) - 1
    if micros < times[0] * 1000:
        raise SourceError(
            f"Delta table {root}: the provided timestamp ({shown}) is before the earliest "
            f"version available to this table (version {earliest}, committed "
            f"{format_ms(times[0])}); use a timestamp at or after {format_ms(times[0])}")
    if micros > times[-1] * 1000:
        raise SourceError(
            f"Delta table {root}: the provided timestamp ({shown}) is after the latest version "
            f"available to this table (version {latest}, committed {format_ms(times[-1])}); "
            f"use a timestamp before or at {format_ms(times[-1])}, or versionAsOf {latest}")
    low, high = 0, len(times) - 1  # invariant: times[low] <= wanted
    while low < high:
        middle = (low + high + 1) // 2
        if times[middle] * 1000 <= micros:
            low = middle
        else:
            high = middle - 1
    return earliest + low
