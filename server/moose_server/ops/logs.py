"""Log lines: one per event, as text for a terminal or JSON for operators.

Code logs with the standard `logging` module and names what the line is about
in `extra=`: `event` (a short stable name: hello, game_over, ...), `game`,
`player`, `seat`, `seq`, `code`, and sometimes more. Both formatters show these
fields (the text one only those six); the JSON one writes one object per line,
with `instance` and every `extra=` field::

    {"time": "2026-11-29T14:44:44.123Z", "level": "INFO", "logger": "moose_server.net.ws",
     "message": "hello p_1b2c3d4e5f (alice)", "instance": "i_9f8e7d6c",
     "event": "hello", "player": "p_1b2c3d4e5f"}

`configure` installs one of them on the root logger; only the entry point calls it.
Both pass every line through `moose.redact.redact_url`: a URL in a message or a
traceback (ours or a library's) shows no password.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from typing import Any, TextIO

from moose.redact import redact_url

__all__ = ["FORMATS", "JsonFormatter", "TextFormatter", "configure", "plain_message", "scrub"]

FORMATS = ("text", "json")
FIELDS = ("event", "game", "player", "seat", "seq", "code")  # shown first, in this order
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
}


# A URL as text: scheme://, then anything up to a space or a quote.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")


def scrub(text: str) -> str:
    """`text` with every URL in it redacted (userinfo and query secrets masked)."""
    if "://" not in text:
        return text
    return _URL.sub(lambda m: redact_url(m.group()), text)


def _extra(record: logging.LogRecord) -> dict[str, Any]:
    """The `extra=` fields of a record: FIELDS first, then any others, None left out."""
    found = {k: v for k, v in vars(record).items() if k not in _STANDARD and v is not None}
    ordered = {k: found.pop(k) for k in FIELDS if k in found}
    ordered.update(found)
    return ordered


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, instance, extra fields."""

    def __init__(self, instance: str | None = None) -> None:
        super().__init__()
        self.instance = instance

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of JSON."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        out: dict[str, Any] = {
            "time": f"{stamp}.{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if self.instance:
            out["instance"] = self.instance
        out.update(_extra(record))
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        elif record.stack_info:
            out["stack"] = self.formatStack(record.stack_info)
        return scrub(json.dumps(out, default=str, ensure_ascii=False))


# A field value written bare; any other is written as a JSON string ("a b", "x=y").
_BARE = re.compile(r"[A-Za-z0-9_.:@/+-]+")
# What a message may not hold as it is: a backslash, "=" (a field's mark) and any
# line break or control character (a planted line).
_UNSAFE = re.compile(r"[\\=\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _field(value: Any) -> str:
    text = str(value)
    return text if _BARE.fullmatch(text) else json.dumps(text)


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    return "\\" + ch if ch in "\\=" else ch.encode("unicode_escape").decode("ascii")


def plain_message(text: str) -> str:
    """A message as the text format writes it: no "=" nor line break left unescaped, so
    that no name in it can pass for a key=value field or start a line of its own."""
    return _UNSAFE.sub(_escape, text)


class TextFormatter(logging.Formatter):
    """The usual `time level logger: message`, then the ids (FIELDS) as key=value.

    Only those: the message says the rest, and libraries' own extras (aiohttp's
    access log has a dozen) would drown it. A value other than a plain token is
    written as a JSON string, and the message is escaped (`plain_message`): the
    only unescaped `key=value` pairs on a line are its fields, whatever a player's
    name holds.
    """

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    # URLs are redacted before the message is escaped: redacting after would take the
    # escaped "\=" of a query for part of its key.
    def formatMessage(self, record: logging.LogRecord) -> str:
        """The line before any traceback, its URLs redacted."""
        message = plain_message(scrub(record.message))
        line = self._style._fmt % (vars(record) | {"message": message})
        fields = {k: v for k in FIELDS if (v := getattr(record, k, None)) is not None}
        if fields:
            line += " [" + " ".join(f"{k}={_field(scrub(str(v)))}" for k, v in fields.items()) + "]"
        return line

    def formatException(self, ei: Any) -> str:
        """A traceback, its URLs redacted."""
        return scrub(super().formatException(ei))

    def formatStack(self, stack_info: str) -> str:
        """A stack, its URLs redacted."""
        return scrub(super().formatStack(stack_info))


def configure(
    fmt: str = "text",
    level: str | int = "INFO",
    instance: str | None = None,
    stream: TextIO | None = None,
) -> logging.Handler:
    """Send every log line to `stream` (stderr) in format `fmt`; return the handler."""
    if fmt not in FORMATS:
        raise ValueError(f"log format {fmt!r} is not one of {', '.join(FORMATS)}")
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter(instance) if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    return handler
