"""Real, small PDF / DOCX / PPTX files built in the tests (reportlab, python-docx, python-pptx)."""

from __future__ import annotations

import io

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
