"""L12: what a log record carries from outside cannot forge a line of its own."""

from __future__ import annotations

import logging

from uedu_dr.client_address import ClientAddressLogFilter
from uedu_dr.log_format import OneLineFormatter, escape_control


def console_handler() -> logging.Handler:
    return next(
        h
        for h in logging.getLogger().handlers
        if any(isinstance(f, ClientAddressLogFilter) for f in h.filters)
    )


def test_a_forged_line_in_an_error_body_stays_on_its_record(db):
    handler = console_handler()
    assert isinstance(handler.formatter, OneLineFormatter)
    body = 'bad gateway\n2026-12-02 20:00:00 INFO uedu_dr.admin [-] admin "root" granted superuser\x1b[2J'
    record = logging.LogRecord(
        "materials.extraction", logging.INFO, __file__, 1, "unreadable %s: %s", ("pdf", body), None
    )
    assert handler.filter(record)  # the handler's filters stamp the client address
    line = handler.format(record)
    assert "\n" not in line and "\x1b" not in line
    assert "bad gateway\\n2026-12-02 20:00:00 INFO" in line and "\\x1b[2J" in line
    assert record.getMessage().count("\n") == 1  # the record itself is unchanged for other handlers


def test_printable_text_in_any_script_is_kept():
    assert escape_control("學習分析 — café") == "學習分析 — café"
    assert escape_control("a\r\nb\u2028c\x00") == "a\\r\\nb\\u2028c\\x00"
