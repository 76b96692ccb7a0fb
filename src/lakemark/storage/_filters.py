"""Which listed names count: Spark's hidden-file rule, Glue's ``exclusions`` globs, and Hive
partition folders.

These rules are shared by the local and S3 listers so both backends select the same files from
the same tree.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import ConfigError
from ._uri import parse_uri

__all__ = ["is_hidden", "Exclusions", "parse_exclusions", "partition_values"]


def is_hidden(name: str) -> bool:
    """Spark's rule for names a file source skips (``shouldFilterOutPathName``).

    A name starting with ``.`` (``.crc`` files, ``.spark-staging``), a name starting with ``_``
    unless it contains ``=`` (``_SUCCESS``, ``_temporary`` — but ``_year=2024`` is a partition
    folder), and an in-progress Hadoop copy (``*._COPYING_``) are hidden. The rule applies to every
    folder and file name below the listed root, never to the root itself.
    """
    if name.startswith("."):
        return True
    if name.startswith("_") and "=" not in name:
        return True
    return name.endswith("._COPYING_")


def has_hidden_segment(relative: str) -> bool:
    """Is any ``/``-separated segment of a root-relative path hidden?"""
    return any(is_hidden(segment) for segment in relative.split("/"))


@dataclass(frozen=True)
class Exclusions:
    """Compiled exclusion globs; :meth:`excludes` tells whether a file is left out."""

    patterns: tuple[str, ...] = ()
    _compiled: tuple[re.Pattern[str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def excludes(self, relative: str, full: str) -> bool:
        """True when a pattern matches the root-relative path or the full path/URI."""
        return any(p.fullmatch(relative) or p.fullmatch(full) for p in self._compiled)


def parse_exclusions(exclusions: Sequence[str] | str | None) -> Exclusions:
    """Validate and compile Glue's ``exclusions`` option.

    Accepted forms: a sequence of glob patterns, or a string. A string whose first non-blank
    character is ``[`` is parsed as a JSON list of patterns (what Glue's connection option
    takes, e.g. ``'["**.json", "logs/**"]'``); a JSON object is rejected; any other non-empty
    string is one pattern (so ``"logs/**"`` and ``"{a,b}/**"`` work as given).

    Pattern syntax (Unix-style globs, as in Glue crawlers): ``*`` matches within one folder
    level, ``**`` crosses folders (``**/`` also matches no folder at all, so ``**/x.csv`` matches
    a top-level ``x.csv``), ``?`` is one character other than ``/``, ``[abc]``/``[!abc]`` are
    character classes, ``{a,b}`` are alternatives and ``\\`` escapes the next character.
    """
    if exclusions is None:
        return Exclusions()
    patterns: list[str]
    if isinstance(exclusions, str):
        text = exclusions.strip()
        if not text:
            return Exclusions()
        if text.startswith("["):
            try:
                loaded = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ConfigError(
                    f"option exclusions is not a valid JSON list of glob patterns: {exc.msg} "
                    f"in {exclusions!r}"
                ) from None
            if not isinstance(loaded, list):
                raise ConfigError(f"option exclusions must be a JSON list, got {exclusions!r}")
            patterns = loaded
        elif text.startswith("{") and _is_json_object(text):
            raise ConfigError(f"option exclusions must be a JSON list, got {exclusions!r}")
        else:
            patterns = [text]
    else:
        patterns = list(exclusions)
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern:
            raise ConfigError(
                f"option exclusions must hold non-empty glob strings, got {pattern!r}"
            )
    compiled = tuple(re.compile(glob_to_regex(p), re.DOTALL) for p in patterns)
    return Exclusions(tuple(patterns), compiled)


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except json.JSONDecodeError:
        return False


def glob_to_regex(pattern: str) -> str:
    """Translate one exclusion glob (syntax in :func:`parse_exclusions`) into a regex."""
    out: list[str] = []
    depth = 0  # open {…} groups
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if c == "*":
            if pattern.startswith("**", i):
                if pattern.startswith("**/", i):
                    out.append("(?:.*/)?")
                    i += 3
                else:
                    out.append(".*")
                    i += 2
            else:
                out.append("[^/]*")
                i += 1
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            end = _class_end(pattern, i)
            body = pattern[i + 1 : end]
            negate = body.startswith("!")
            if negate:
                body = body[1:]
            body = body.replace("\\", "\\\\").replace("[", "\\[")
            if body.startswith("^"):
                body = "\\" + body
            out.append(f"[^/{body}]" if negate else f"[{body}]")
            i = end + 1
            continue
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "," and depth:
            out.append("|")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        else:
            out.append(re.escape(c))
        i += 1
    if depth:
        raise ConfigError(f"option exclusions: unclosed '{{' in glob pattern {pattern!r}")
    return "".join(out)


def _class_end(pattern: str, start: int) -> int:
    """Index of the ``]`` closing the character class opened at ``start``."""
    j = start + 1
    if j < len(pattern) and pattern[j] == "!":
        j += 1
    if j < len(pattern) and pattern[j] == "]":  # a leading ] is a literal member
        j += 1
    end = pattern.find("]", j)
    if end < 0:
        raise ConfigError(f"option exclusions: unclosed '[' in glob pattern {pattern!r}")
    return end


def partition_values(root: str, path: str) -> dict[str, str]:
    """Hive-style ``key=value`` folders between ``root`` and the file ``path``.

    ``root`` and ``path`` may be given in any accepted form (``s3a://`` and ``s3://`` name the
    same place). Keys and values are URL-unquoted as Hive/Spark escape them (``a%3Db`` is
    ``a=b``); the name of the file itself is never a partition. Spark's null marker
    ``__HIVE_DEFAULT_PARTITION__`` is returned as that string, for the caller to map. A path
    outside ``root`` raises :class:`ConfigError`.
    """
    base, target = parse_uri(root), parse_uri(path)
    if (base.scheme, base.bucket) != (target.scheme, target.bucket):
        raise ConfigError(f"{path!r} is not under {root!r}")
    prefix = base.root[len(f"s3://{base.bucket}"):] if base.is_s3 else base.root
    full = target.root[len(f"s3://{target.bucket}"):] if target.is_s3 else target.root
    prefix = prefix.rstrip("/")
    if full == prefix:
        return {}
    if not full.startswith(prefix + "/"):
        raise ConfigError(f"{path!r} is not under {root!r}")
    folders = full[len(prefix) + 1 :].split("/")[:-1]
    values: dict[str, str] = {}
    for folder in folders:
        key, sep, value = folder.partition("=")
        if sep and key:
            values[urllib.parse.unquote(key)] = urllib.parse.unquote(value)
    return values
