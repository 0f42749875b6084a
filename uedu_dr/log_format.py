"""One log record, one line: what a record's message carries from outside (a file's extraction
error, a model server's error body, a username) cannot start a line of its own that reads like
another record, nor send terminal escape sequences to whoever tails the log.

The console handler's formatter (settings.LOGGING) escapes control characters in the message —
newlines as \\n, the rest as \\xNN or \\uNNNN — after the arguments are merged, so every call site
is covered without escaping at each one. A traceback (exc_info) stays multi-line: it is ours."""

from __future__ import annotations

import logging

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_control(text: str) -> str:
    out = []
    for char in text:
        code = ord(char)
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0:
            out.append(f"\\x{code:02x}")
        elif code in (0x2028, 0x2029):  # line and paragraph separators break lines too
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return "".join(out)


class OneLineFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        original = record.msg, record.args
        record.msg, record.args = escape_control(record.getMessage()), None
        try:
            return super().format(record)
        finally:
            record.msg, record.args = original
