"""The one place that removes credentials from text before lakemark prints, logs or stores it.

Every boundary where text leaves lakemark goes through this module: error messages (every
:class:`~lakemark.errors.LakemarkError` redacts its own ``str``), log records of the
``lakemark`` loggers, the state store (a run's ``error`` and its recorded plan), the
``lineage extract`` folder (connections, job arguments, scripts), and every lineage output
(OpenLineage events, DOT, Mermaid, JSON, HTML). It imports nothing from lakemark (layer 0).

What is removed (each replaced by ``***``):

* **URL user-info** in every URL and JDBC form: ``scheme://user:PASSWORD@host``,
  ``jdbc:mysql://user:PASSWORD@host``, ``redis://:PASSWORD@host``, passwords that contain
  ``/``, ``:`` or ``@`` (``etl:S3c/ret@db``, ``etl:p@ss@db``), and Oracle's
  ``jdbc:oracle:thin:scott/PASSWORD@//host:1521/orcl`` and ``user/PASSWORD@//host``.
  The user name is kept.
* **Named values** whose name looks secret (see :data:`SECRET_NAMES`): query and semicolon
  parameters (``?password=…``, ``;pwd=…``, ``&X-Amz-Signature=…``), ``name=value``,
  ``name: value``, JSON and Python dict entries (``"token": "…"``), command-line arguments
  (``--DB_PWD value``, ``--api_key=…``, ``--conf spark.hadoop.fs.s3a.secret.key=…``) and
  the keys of mappings given to :func:`redact_obj`.
* **SQL secrets**: ``IDENTIFIED BY '…'`` and ``PASSWORD '…'``.
* **Known values**: a password lakemark was given (a JDBC source's ``password``, a catalog
  connection's ``PASSWORD``) is remembered (:func:`remember_secret`) and removed wherever it
  appears later in the process (unless it could be an ordinary word, see there).
* **Other forms**: XML elements named like a secret, whole ``Authorization:`` header values,
  URL-encoded ``password%3D…`` inside another URL.
* **Known credential shapes** wherever they appear: AWS access key ids (``AKIA…``, ``ASIA…``
  and the other four-letter prefixes), a 40-character AWS secret key written near a
  secret-looking name, ``Bearer``/``Basic`` authorization values, PEM private-key blocks,
  JSON web tokens, and GitHub, Slack, Google and Stripe-style API tokens.

A name looks secret when, lower-cased and stripped of everything but letters and digits, it
*contains* one of :data:`SECRET_NAMES` or *equals* one of :data:`SECRET_EXACT_NAMES`, or when
one of its parts (split at ``.``, ``_``, ``-`` and case changes) is one of
:data:`SECRET_NAME_PARTS`. Users add
their own words with the environment variable ``LAKEMARK_SECRET_NAMES`` (comma-separated, matched
the same way as contained words; e.g. ``LAKEMARK_SECRET_NAMES=ssn,pin_code``).

Redaction is deliberately greedy: a path that merely looks like ``user:x@host`` loses its
``x``. A name in an error message is less important than a password.
"""

from __future__ import annotations

import io
import logging
import os
import re
import sys
import tokenize
import traceback
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any

__all__ = [
    "MASK",
    "SECRET_EXACT_NAMES",
    "SECRET_NAME_PARTS",
    "SECRET_NAMES",
    "install_log_redaction",
    "is_secret_name",
    "redact",
    "redact_arguments",
    "redact_excepthook",
    "redact_obj",
    "redact_source",
    "redact_url",
    "remember_secret",
    "secret_names",
]

MASK = "***"

#: Words that make a name secret when the normalised name contains them.
SECRET_NAMES: tuple[str, ...] = (
    "password", "passwd", "passphrase", "pwd", "secret", "token", "credential",
    "apikey", "accesskey", "secretkey", "privatekey", "accountkey", "sessionkey",
    "masterkey", "sharedkey", "signingkey", "encryptionkey", "clientkey", "authkey",
    "authorization", "signature", "sastoken", "connectionstring", "cookie",
)
#: Names that are secret only as a whole (``?key=…``, ``pass=…``, ``sig=…``).
SECRET_EXACT_NAMES: tuple[str, ...] = ("key", "pass", "pw", "sig", "sas", "auth", "pat", "cred",
                                        "identifiedby")
#: Names that are secret when one of their parts (split at '.', '_', '-' and case changes) is
#: one of these: ``DB_PASS``, ``es.net.http.auth.pass``, ``fs.azure.sas.<container>``.
SECRET_NAME_PARTS: tuple[str, ...] = ("pass", "pw", "sas", "sig", "cred", "creds")

_ENV = "LAKEMARK_SECRET_NAMES"


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def secret_names() -> tuple[str, ...]:
    """:data:`SECRET_NAMES` plus the words in ``LAKEMARK_SECRET_NAMES`` (normalised)."""
    extra = tuple(w for w in (_norm(x) for x in os.environ.get(_ENV, "").split(",")) if w)
    return SECRET_NAMES + extra


def is_secret_name(name: str) -> bool:
    """Whether a parameter, argument, property or key called ``name`` holds a secret."""
    norm = _norm(str(name))
    if not norm:
        return False
    if norm in SECRET_EXACT_NAMES or any(word in norm for word in secret_names()):
        return True
    # a part of a dotted/snake/camel name: DB_PASS, es.net.http.auth.pass, fs.azure.sas.…
    parts = re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", str(name))
    return any(part.lower() in SECRET_NAME_PARTS for part in parts)


# -- patterns -----------------------------------------------------------------------------------
_STOP = r"\s'\"<>`"  # what ends a token in free text

_PEM = re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",  # noqa: E501
                  re.S)
# scheme://user:PASSWORD@host — the password may hold '/', ':' and '@'; it ends at the first
# '@' that is followed by a host and then a delimiter (so 'p@ss@db/x' loses 'p@ss').
_USERINFO = re.compile(
    r"(?P<pre>(?<![A-Za-z0-9+.\-])(?:[A-Za-z][A-Za-z0-9+.\-]{0,40}:){0,4}//)"
    r"(?P<user>[^" + _STOP + r"/?#@:]{0,256}):"
    r"(?!\d+(?:[/?#;]|$))"                      # host:port/… is not user:password@
    r"(?P<pw>\S{0,512}?)"                         # may hold quotes, '/', ':', '@', '#', '?'
    r"@(?=[^" + _STOP + r"@/?#;]{0,256}(?:[/?#;" + _STOP + r"]|$))",
    re.M,
)
# jdbc:oracle:thin:scott/PASSWORD@//host:1521/orcl (also @host:port:sid, @(DESCRIPTION=…))
_ORACLE = re.compile(
    r"(?i)(?P<pre>jdbc:oracle:[a-z0-9]+:)(?P<user>[^" + _STOP + r"/@:]{1,256})/"
    r"(?P<pw>\"[^\"\n]{0,512}\"|\\\"[^\"\n]{0,512}?\\\"|\S{0,512})@")
# user/PASSWORD@//host (EZConnect, sqlplus)
_EZCONNECT = re.compile(r"(?<![\w:.$#])(?P<user>[A-Za-z][\w$#]{0,64})/(?P<pw>\S{1,512}?)@(?=//)")
# name=value, name: value, "name": "value", --name value
_QUOTED = r"\"(?:[^\"\\\n]|\\.){0,2048}\"|'(?:[^'\\\n]|\\.){0,2048}'"
_ESCAPED_QUOTED = (r"\\\"(?:[^\"\\\n]|\\[^\"]){0,2048}\\\""  # JSON in JSON
                   r"|\\'(?:[^'\\\n]|\\[^']){0,2048}\\'")
_NAME = r"[A-Za-z_][\w.\-]{0,127}"  # names are bounded, so no match scans a long word twice
_ASSIGN = re.compile(
    r"(?P<name>(?<![\w.])" + _NAME + r")(?:\\?[\"'])?"
    r"(?P<sep>\s*=\s*|\s*:\s*)"
    r"(?P<value>" + _ESCAPED_QUOTED + "|" + _QUOTED + r"|\{[^}\n]*\}|[^" + _STOP
    + r"&;,)\]}\\]+)"
)
_ARG = re.compile(r"(?P<name>(?<!\w)-{1,3}" + _NAME + r")(?P<sep>\s+)(?P<value>" + _QUOTED
                  + r"|[^" + _STOP + r"\-][^" + _STOP + r"]*)")
_AWS_ID = re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|AKPA|ANPA|ANVA|APKA|AROA"
                     r"|ASCA)[A-Z0-9]{16}(?![A-Z0-9])")
_NEAR = re.compile(r"(?P<name>(?<![\w.\-])" + _NAME + r")(?P<sep>[\s\"':=,]{1,6})"
                   r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")
# an Authorization header: its whole value (scheme and credentials, AWS4 signatures)
_AUTH_HEADER = re.compile(r"(?i)\b(?P<name>(?:proxy-)?authorization)(?P<sep>\"?\s*[:=]\s*\"?)"
                          r"(?P<value>[^\r\n\"]{1,4096})")
# <password>…</password> (XML configuration)
_XML = re.compile(r"<(?P<name>" + r"[A-Za-z_][\w.\-]{0,127}" + r")>(?P<value>[^<]{1,4096})</(?P=name)>")  # noqa: E501
# name%3Dvalue (a URL-encoded query inside another)
_ENCODED = re.compile(r"(?P<name>(?<![A-Za-z_.])[A-Za-z_][\w.\-]{0,127})(?P<sep>%3[dD])"
                      r"(?P<value>(?:(?!%26)[^" + _STOP + r"&;])+)")
_AUTH = re.compile(r"(?i)\b(?P<name>bearer|basic)(?P<sep>\s+)(?P<value>[A-Za-z0-9._~+/=\-]{8,})")
_TOKENS = re.compile(
    r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,}|xox[abeprs]-[A-Za-z0-9\-]{10,}"
    r"|AIza[0-9A-Za-z_\-]{35}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|sk-[A-Za-z0-9_\-]{20,}"
    r"|npm_[A-Za-z0-9]{30,}|glpat-[A-Za-z0-9_\-]{20,}|ya29\.[A-Za-z0-9_\-]{20,}"
    r"|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"
    r"|dapi[0-9a-f]{32}(?:-\d+)?|hf_[A-Za-z0-9]{30,}|GOCSPX-[A-Za-z0-9_\-]{20,}"
    r"|AKCp[A-Za-z0-9]{60,}|SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,})"
)
# SQL: IDENTIFIED BY 'pw', WITH PASSWORD 'pw'; and a secret name followed by a quoted literal
_SQL_SECRET = re.compile(r"(?i)\b(?P<name>identified\s+by|password)(?P<sep>\s+)"
                         r"(?P<value>" + _ESCAPED_QUOTED + "|" + _QUOTED
                         + r"|[^\s;,)'\"]+(?=\s*;))")


_METAVARS = frozenset({"VALUE", "VAL", "<value>", "..."})


def _named(match: re.Match[str]) -> str:
    if not is_secret_name(match.group("name")):
        return match.group(0)
    value = match.group("value")
    if value.lstrip("\\\"'").startswith(MASK):  # already redacted (user:***@host, …)
        return match.group(0)
    if value in _METAVARS:  # a usage line's placeholder (``--option KEY=VALUE``), not a value
        return match.group(0)
    if value[:2] in ('\\"', "\\'") and value[-2:] == value[:2] and len(value) >= 4:
        masked = value[:2] + MASK + value[:2]
    elif value[:1] in "\"'" and value[-1:] == value[:1] and len(value) >= 2:
        masked = value[0] + MASK + value[0]
    else:
        masked = MASK
    return match.group(0)[: match.start("value") - match.start(0)] + masked


def _sub_named(pattern: re.Pattern[str], text: str) -> str:
    """Like ``pattern.sub(_named, text)``, but a match whose name is not secret consumes only
    its name, so a secret right after it (``https://h/?password=…``) is still found."""
    out: list[str] = []
    pos = 0
    while True:
        m = pattern.search(text, pos)
        if m is None:
            out.append(text[pos:])
            return "".join(out)
        if is_secret_name(m.group("name")):
            out.append(text[pos:m.start()])
            out.append(_named(m))
            pos = m.end()
        else:
            stop = max(m.end("name"), m.start() + 1)
            out.append(text[pos:stop])
            pos = stop


_KNOWN: set[str] = set()


def remember_secret(value: object) -> None:
    """Remove ``value`` wherever it appears from now on in this process (a password lakemark
    was given as an option or read from a catalog connection): a driver may echo it in a form
    no pattern recognises. Only values that cannot be ordinary words are remembered (6 or more
    characters with a digit or a symbol, or 12 or more), so a password like ``postgres`` does
    not mask every ``postgres://`` in the output."""
    if not isinstance(value, str) or value == MASK or len(value) < 6:
        return
    if len(value) >= 12 or not value.isalpha():
        _KNOWN.add(value)


def redact(text: str) -> str:
    """``text`` with every credential this module knows removed (see the module docstring)."""
    if not isinstance(text, str) or not text:
        return text
    out = text
    for value in sorted(_KNOWN, key=len, reverse=True):
        if value in out:
            out = out.replace(value, MASK)
    out = _PEM.sub(f"-----BEGIN \\1PRIVATE KEY-----{MASK}-----END \\1PRIVATE KEY-----", out)
    out = _ORACLE.sub(lambda m: f"{m['pre']}{m['user']}/{MASK}@", out)
    out = _EZCONNECT.sub(lambda m: f"{m['user']}/{MASK}@", out)
    out = _USERINFO.sub(lambda m: f"{m['pre']}{m['user']}:{MASK}@", out)
    out = _AUTH_HEADER.sub(lambda m: f"{m['name']}{m['sep']}{MASK}", out)
    out = _AUTH.sub(lambda m: f"{m['name']}{m['sep']}{MASK}", out)
    out = _XML.sub(lambda m: (f"<{m['name']}>{MASK}</{m['name']}>" if is_secret_name(m["name"])
                              else m.group(0)), out)
    out = _sub_named(_ENCODED, out)
    out = _SQL_SECRET.sub(_named, out)
    out = _sub_named(_ASSIGN, out)
    out = _sub_named(_ARG, out)
    out = _sub_named(_NEAR, out)
    out = _AWS_ID.sub(MASK, out)
    return _TOKENS.sub(MASK, out)


def redact_url(url: str) -> str:
    """A URL (JDBC or any other) without its credentials; the same rules as :func:`redact`."""
    return redact(url)


def redact_obj(value: Any) -> Any:
    """A JSON-like value with secrets removed: the value under a secret-looking key becomes
    ``***``; every string is passed through :func:`redact`. Containers are copied."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {k: (MASK if is_secret_name(str(k)) and _scalar(v) else redact_obj(v))
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_obj(v) for v in value)
    return value


def _scalar(value: Any) -> bool:
    return value is not None and not isinstance(value, (Mapping, list, tuple, bool))


def redact_arguments(args: Mapping[str, Any]) -> dict[str, Any]:
    """Job arguments (``{"--name": "value"}``) with secret-named ones masked and secrets
    inside the others (``--jdbc_url``, ``--conf k=v``) removed."""
    return dict(redact_obj(dict(args)))


def redact_source(code: str) -> str:
    """Python source with secrets removed from its string literals and comments, and string
    values given to secret-looking names (``password = "…"``, ``{"token": "…"}``,
    ``.option("password", "…")``) masked, keeping the code valid Python. Code that does not
    tokenize gets only quoted values of secret-looking names masked."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return _QUOTED_ASSIGN.sub(_named, code)
    lines = io.StringIO(code).readlines()  # the lines tokenize numbered (form feeds, U+2028 …)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    edits: list[tuple[int, int, str]] = []
    significant = [t for t in tokens if t.type not in (tokenize.NL, tokenize.COMMENT,
                                                       tokenize.NEWLINE, tokenize.INDENT,
                                                       tokenize.DEDENT)]
    for n, tok in enumerate(significant):
        if tok.type != tokenize.STRING:
            continue
        new = _redact_literal(tok.string)
        prev, before = (significant[n - 1] if n >= 1 else None,
                        significant[n - 2] if n >= 2 else None)
        # password = "…", {"token": "…"}, .option("password", "…")
        if prev is not None and before is not None and (
                (prev.string in ("=", ":") and before.type == tokenize.NAME
                 and is_secret_name(before.string))
                or (prev.string in ("=", ":", ",") and before.type == tokenize.STRING
                    and is_secret_name(_literal_body(before.string)))):
            new = _mask_literal(tok.string)
        if new != tok.string:
            start = offsets[tok.start[0] - 1] + tok.start[1]
            end = offsets[tok.end[0] - 1] + tok.end[1]
            edits.append((start, end, new))
    for start, end, new in reversed(edits):
        code = code[:start] + new + code[end:]
    # comments may hold secrets too
    return _COMMENT.sub(lambda m: redact(m.group(0)), code)


_QUOTED_ASSIGN = re.compile(
    r"(?P<q>[\"']?)(?P<name>(?<![\w.\-])[A-Za-z_][\w.\-]*)(?P=q)(?P<sep>\s*[=:]\s*)"
    r"(?P<value>" + _QUOTED + r")")
_COMMENT = re.compile(r"#[^\n]*")
_PREFIX = re.compile(r"^([A-Za-z]*)('''|\"\"\"|'|\")")


def _literal_body(literal: str) -> str:
    m = _PREFIX.match(literal)
    if not m:
        return literal
    q = m.group(2)
    return literal[len(m.group(0)):len(literal) - len(q)]


def _redact_literal(literal: str) -> str:
    m = _PREFIX.match(literal)
    if not m:
        return literal
    head, q = m.group(0), m.group(2)
    body = literal[len(head):len(literal) - len(q)]
    new = redact(body)
    if "f" in m.group(1).lower():
        new = new if new.count("{") == body.count("{") and new.count("}") == body.count("}") \
            else MASK
    return head + new + q


def _mask_literal(literal: str) -> str:
    m = _PREFIX.match(literal)
    if not m:
        return literal
    return m.group(1) + m.group(2) + MASK + m.group(2)


# -- logs and uncaught exceptions ---------------------------------------------------------------
_installed = False


def install_log_redaction() -> None:
    """Redact every log record of the ``lakemark`` loggers (message, arguments and traceback)
    as it is created, whatever handler prints it. Installing twice is harmless."""
    global _installed
    if _installed:
        return
    previous: Callable[..., logging.LogRecord] = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if record.name == "lakemark" or record.name.startswith(("lakemark.", "py4j")):
            try:
                message = record.getMessage()
            except Exception:  # noqa: BLE001 - a bad format string is the caller's bug
                message = str(record.msg)
            if record.exc_info and record.exc_info[1] is not None:
                message += "\n" + "".join(traceback.format_exception(*record.exc_info)).rstrip()
                record.exc_info = None
            record.msg, record.args = redact(message), ()
        return record

    logging.setLogRecordFactory(factory)
    _installed = True


def redact_excepthook(kind: type[BaseException], exc: BaseException,
                      tb: TracebackType | None) -> None:
    """A :data:`sys.excepthook` that prints the traceback with credentials removed."""
    sys.stderr.write(redact("".join(traceback.format_exception(kind, exc, tb))))
