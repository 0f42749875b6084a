"""Real, small PDF / DOCX / PPTX files built in the tests (reportlab, python-docx, python-pptx)."""

from __future__ import annotations

import io
import zlib

from django.core.files.uploadedfile import SimpleUploadedFile


def pdf_bytes(pages: list[str], *, user_password: str | None = None) -> bytes:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(UnicodeCIDFont("MSung-Light"))  # Traditional Chinese, extractable as Unicode
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, invariant=1)
    for text in pages:
        pdf.setFont("MSung-Light", 11)
        y = 800
        for line in text.split("\n"):
            pdf.drawString(50, y, line)
            y -= 16
        pdf.showPage()
    pdf.save()
    data = buffer.getvalue()
    if user_password is not None:
        from pypdf import PdfReader, PdfWriter

        writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
        writer.encrypt(
            user_password=user_password, owner_password="owner-" + user_password, algorithm="AES-256"
        )
        out = io.BytesIO()
        writer.write(out)
        data = out.getvalue()
    return data


def docx_bytes(sections: list[tuple[str, list[str]]]) -> bytes:
    import docx

    document = docx.Document()
    for heading, paragraphs in sections:
        if heading:
            document.add_heading(heading, level=1)
        for text in paragraphs:
            document.add_paragraph(text)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def pptx_bytes(slides: list[tuple[str, list[str], str]]) -> bytes:
    """(title, bullets, speaker notes) per slide."""
    from pptx import Presentation

    presentation = Presentation()
    for title, bullets, notes in slides:
        slide = presentation.slides.add_slide(presentation.slide_layouts[1])
        slide.shapes.title.text = title
        frame = slide.placeholders[1].text_frame
        frame.text = bullets[0] if bullets else ""
        for line in bullets[1:]:
            frame.add_paragraph().text = line
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data)


def slow_single_page_pdf(operators: int = 60_000) -> bytes:
    """A crafted PDF: one page whose few kilobytes of compressed content expand to `operators`
    text-showing operators. pypdf's extract_text on that one page takes tens of seconds (it grows
    faster than linearly), so a deadline checked between pages cannot stop it."""
    stream = zlib.compress(
        b"BT /F1 12 Tf 72 720 Td " + b"(learning analytics ) Tj 0 -1 Td " * operators + b"ET", 9
    )
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()
