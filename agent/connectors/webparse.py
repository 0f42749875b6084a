"""Turning a fetched body into text, run by webfetch in a bounded child process
(uedu_dr/bounded_process.py): pages and PDFs come from anywhere a student or a source links, so a
crafted one that makes trafilatura or pypdf loop or allocate without end must not hold the worker.

Plain functions of bytes to plain values (picklable), importing no Django: the child is a fresh
interpreter that imports only this module and its parsers."""

from __future__ import annotations

import io

import trafilatura
from pypdf import PdfReader

from uedu_dr.bounded_process import EncryptedDocument

HTML_TYPES = {"text/html", "application/xhtml+xml"}


def page_text(body: bytes, content_type: str, charset: str | None) -> tuple[str, str]:
    """(title, text) of a body. Tool output is data: nothing in it is interpreted."""
    if content_type in HTML_TYPES:
        text = trafilatura.extract(body, include_comments=False, include_tables=True, favor_recall=True) or ""
        if not text.strip():
            text = trafilatura.html2txt(body) or ""
        metadata = trafilatura.extract_metadata(body)
        return ((metadata.title if metadata else "") or "").strip(), text.strip()
    return "", body.decode(charset or "utf-8", errors="replace").strip()


def pdf_text(body: bytes, max_chars: int) -> tuple[str, list[str], int, bool]:
    """(title, text of each page, number of pages, cut at max_chars) of a PDF. Raises
    EncryptedDocument for a PDF that needs a password, anything else for a damaged one."""
    reader = PdfReader(io.BytesIO(body))
    if reader.is_encrypted and not reader.decrypt(""):
        raise EncryptedDocument()
    title = ((reader.metadata.title if reader.metadata else "") or "").strip()
    pages: list[str] = []
    total, cut = 0, False
    for page in reader.pages:
        text = " ".join((page.extract_text() or "").split())
        if total + len(text) > max_chars:
            text, cut = text[: max(0, max_chars - total)], True
        pages.append(text)
        total += len(text)
        if cut:
            break
    return title, pages, len(reader.pages), cut
