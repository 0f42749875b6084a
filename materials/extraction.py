"""From an uploaded file's bytes to numbered units of text: PDF pages, PPTX slides, DOCX sections.

Two steps, both raising MaterialError with a code and a message a teacher can act on:
`sniff()` (cheap, at upload: extension and content agree) and `extract()` (in the Celery job).

DOCX files have no pages (pagination is decided by Word when it renders), so a DOCX unit is a
*section*: a new section starts at every heading paragraph ("Title", "Heading 1…9"); a document
without headings is one section. Citations say "§ 3" for DOCX, "p. 3" for PDF, "slide 3" for PPTX.
"""

from __future__ import annotations

import io
import logging
import zipfile
from dataclasses import dataclass
from pathlib import PurePath

import docx
import pptx
from django.conf import settings
from django.utils.translation import gettext as _
from docx.table import Table
from pptx.enum.shapes import MSO_SHAPE_TYPE
from pypdf import PasswordType, PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError

from uedu_dr.bounded_process import EncryptedDocument, run_bounded

log = logging.getLogger(__name__)

SUPPORTED = ("pdf", "docx", "pptx")
# An Office file is a ZIP; one that would expand past this is a zip bomb, not a course reader.
MAX_UNZIPPED_BYTES = 512 * 1024 * 1024
# How long an indexing job waits for a parse slot (uedu_dr.parse_slots) before it is queued again.
MATERIAL_SLOT_WAIT_SECONDS = 300
_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# Password-protected DOCX/PPTX are not ZIPs but OLE2 containers holding an "EncryptionInfo" stream.
_OLE2_ENCRYPTION_INFO = "EncryptionInfo".encode("utf-16-le")
_OOXML_MAIN_PART = {"docx": "word/document.xml", "pptx": "ppt/presentation.xml"}


class MaterialError(Exception):
    """A file that cannot be indexed. `code` is a Material.ErrorCode value."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


class ParserBusy(Exception):
    """No parse slot came free in time (uedu_dr.parse_slots): nothing is wrong with the file; the
    indexing is tried again later."""


@dataclass(frozen=True)
class Unit:
    number: int  # 1-based page, slide or section
    text: str


def kind_from_name(name: str) -> str:
    return PurePath(name).suffix.lower().lstrip(".")


def sniff(name: str, data: bytes) -> str:
    """The material kind if the extension is supported and the content really is that kind."""
    kind = kind_from_name(name)
    if kind not in SUPPORTED:
        raise MaterialError(
            "wrong_type",
            _("Only PDF, DOCX and PPTX files can be indexed; “%(name)s” is not one of them.")
            % {"name": name},
        )
    if not data:
        raise MaterialError("empty", _("The file is empty (0 bytes)."))
    if kind == "pdf":
        # The header may follow a little junk; readers accept it anywhere in the first kilobyte.
        if b"%PDF-" not in data[:1024]:
            raise MaterialError(
                "wrong_type", _("The file is named .pdf but its content is not a PDF document.")
            )
        return kind
    if data.startswith(_OLE2_MAGIC):
        if _OLE2_ENCRYPTION_INFO in data:
            raise MaterialError(
                "encrypted",
                _("The file is password-protected. Remove the password in Office and upload it again."),
            )
        raise MaterialError(
            "wrong_type",
            _("The file is in the old Office format (.doc/.ppt). Save it as .%(kind)s and upload it again.")
            % {"kind": kind},
        )
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            unzipped = sum(info.file_size for info in archive.infolist())
    except zipfile.BadZipFile:
        raise MaterialError(
            "wrong_type",
            _("The file is named .%(kind)s but its content is not a %(upper)s document.")
            % {"kind": kind, "upper": kind.upper()},
        ) from None
    if _OOXML_MAIN_PART[kind] not in names:
        other = next((k for k, part in _OOXML_MAIN_PART.items() if part in names), None)
        if other:
            message = _("The file is named .%(kind)s but it is a %(other)s document.") % {
                "kind": kind,
                "other": other.upper(),
            }
        else:
            message = _("The file is named .%(kind)s but its content is not a %(upper)s document.") % {
                "kind": kind,
                "upper": kind.upper(),
            }
        raise MaterialError("wrong_type", message)
    if unzipped > MAX_UNZIPPED_BYTES:
        raise MaterialError(
            "corrupt", _("The file expands to more than 512 MB when opened; it cannot be indexed.")
        )
    return kind


def extract(kind: str, data: bytes) -> list[Unit]:
    """Numbered units with their raw text; units without text are left out.

    The parsing runs in a child process with a memory ceiling (UEDU_EXTRACTION_MAX_MEMORY_MB) and
    a deadline (UEDU_EXTRACTION_TIMEOUT_SECONDS): a crafted PDF or Office file that makes a parser
    allocate without end or loop for ever fails that one material, never the worker that runs
    many researches and indexings in threads.

    Raises MaterialError('encrypted' | 'corrupt' | 'too_large' | 'empty'), or ParserBusy when the
    platform's parse slots stayed taken for MATERIAL_SLOT_WAIT_SECONDS."""
    outcome = _run_bounded(kind, data)
    if outcome[0] == "encrypted":
        raise MaterialError(
            "encrypted", _("The PDF is password-protected. Remove the password and upload it again.")
        )
    if outcome[0] == "error":
        # Parsers raise anything (KeyError, lxml errors, struct.error…) on damaged files.
        log.info("unreadable %s: %s", kind, outcome[1])
        raise MaterialError(
            "corrupt", _("The file is damaged and could not be read (%(detail)s).") % {"detail": outcome[1]}
        )
    if outcome[0] == "memory":
        raise MaterialError(
            "too_large",
            _("Reading the file needs more than %(mb)d MB of memory; split it into smaller files.")
            % {"mb": settings.UEDU_EXTRACTION_MAX_MEMORY_MB},
        )
    if outcome[0] == "timeout":
        raise MaterialError(
            "too_large",
            _("Reading the file takes longer than %(s)d seconds; split it into smaller files.")
            % {"s": settings.UEDU_EXTRACTION_TIMEOUT_SECONDS},
        )
    if outcome[0] == "busy":
        raise ParserBusy()
    units = [Unit(number, text) for number, text in outcome[1] if text.strip()]
    if not units:
        hint = (
            _(" A scanned PDF needs text recognition (OCR) before it can be indexed.")
            if kind == "pdf"
            else ""
        )
        raise MaterialError("empty", _("No text could be extracted from the file.") + hint)
    return units


def _run_bounded(kind: str, data: bytes) -> tuple:
    """("ok", [(number, text)…]) | ("encrypted",) | ("error", detail) | ("memory",) | ("timeout",)"""
    return run_bounded(
        _read_units,
        (kind, data),
        memory_mb=settings.UEDU_EXTRACTION_MAX_MEMORY_MB,
        timeout_seconds=settings.UEDU_EXTRACTION_TIMEOUT_SECONDS,
        # An indexing job in a worker has nobody waiting on it: it waits its turn for a parse slot.
        wait_seconds=MATERIAL_SLOT_WAIT_SECONDS,
    )


def _read_units(kind: str, data: bytes) -> list[tuple[int, str]]:
    """In the bounded child: the file's units as plain pairs (picklable, no Django)."""
    reader = {"pdf": _pdf_units, "docx": _docx_units, "pptx": _pptx_units}[kind]
    return [(u.number, u.text) for u in reader(data)]


# --------------------------------------------------------------------------- PDF


def _pdf_units(data: bytes) -> list[Unit]:
    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        # A PDF with only an owner password (print/copy restrictions) opens without a password in
        # every viewer, so its text is readable to anyone; only a user password stops indexing.
        try:
            opened = reader.decrypt("") != PasswordType.NOT_DECRYPTED
        except (DependencyError, FileNotDecryptedError, NotImplementedError):
            opened = False
        if not opened:
            raise EncryptedDocument()
    return [Unit(number, page.extract_text() or "") for number, page in enumerate(reader.pages, start=1)]


# --------------------------------------------------------------------------- DOCX


def _is_heading(paragraph) -> bool:
    name = (paragraph.style.name if paragraph.style is not None else "") or ""
    return name == "Title" or name.startswith("Heading")


def _docx_units(data: bytes) -> list[Unit]:
    document = docx.Document(io.BytesIO(data))
    sections: list[list[str]] = [[]]
    for block in document.iter_inner_content():  # paragraphs and tables in reading order
        if isinstance(block, Table):
            for row in block.rows:
                cells = [cell.text.strip() for cell in row.cells]
                if any(cells):
                    sections[-1].append(" | ".join(cells))
            continue
        text = block.text.strip()
        if not text:
            continue
        if _is_heading(block) and sections[-1]:
            sections.append([])
        sections[-1].append(text)
    # Paragraphs are separated by a blank line: each is its own sentence run (a heading or a list
    # item has no full stop), unlike the single line breaks of a PDF, which are visual wraps.
    return [Unit(number, "\n\n".join(lines)) for number, lines in enumerate(sections, start=1) if lines]


# --------------------------------------------------------------------------- PPTX


def _shape_texts(shapes) -> list[str]:
    texts = []
    for shape in shapes:
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            texts.extend(_shape_texts(shape.shapes))
        elif getattr(shape, "has_table", False) and shape.has_table:
            for row in shape.table.rows:
                cells = [cell.text.strip() for cell in row.cells]
                if any(cells):
                    texts.append(" | ".join(cells))
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            texts.extend(paragraph.text for paragraph in shape.text_frame.paragraphs)
    return texts


def _pptx_units(data: bytes) -> list[Unit]:
    presentation = pptx.Presentation(io.BytesIO(data))
    units = []
    for number, slide in enumerate(presentation.slides, start=1):
        texts = _shape_texts(slide.shapes)
        if slide.has_notes_slide:  # speaker notes often carry the explanation the slide only hints at
            notes = slide.notes_slide.notes_text_frame
            if notes is not None and notes.text.strip():
                texts.extend(paragraph.text for paragraph in notes.paragraphs)
        # One paragraph per bullet, separated by blank lines (see _docx_units).
        units.append(Unit(number, "\n\n".join(t.strip() for t in texts if t.strip())))
    return units
