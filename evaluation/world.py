"""The world one evaluation item's research sees, and nothing else.

Course materials become real files (PDF through reportlab, DOCX through python-docx, PPTX through
python-pptx) built at run time and indexed by the product's materials pipeline; the research
searches them with the product's own search_channel_materials. Web pages, quarterly figures and
catalogue entries are frozen in the item: the research reaches them through tools with the
product's names and parameters (web_search, fetch_url, get_financials, get_course_overview,
get_hs_curriculum) that answer from the item instead of the network or the shared catalogue, so
two runs months apart see the same sources and a distractor is exactly where the item put it."""

from __future__ import annotations

import dataclasses
import io
import re
import textwrap

from agent.connectors import edgar
from agent.engine.types import Source, ToolResult
from agent.tools import REGISTRY
from agent.tools.registry import Tool, ToolContext, ToolRegistry

# The product's own renderers of a figure and a margin: the frozen get_financials must read to the
# model exactly as the live tool does.
from agent.tools.structured import _figure_source, _margin_source

from .dataset import Document, Item

FIGURE_LABELS = {m.key: (m.label, m.concepts[0], m.unit) for m in edgar.METRICS}
PRODUCT_TOOLS = ("search_channel_materials",)  # served by the real product over the item's channel


# --------------------------------------------------------------------------- files

_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")


def _wrap(text: str, width: int = 90) -> list[str]:
    """Lines that fit a PDF page: CJK characters count double."""
    if not _CJK.search(text):
        return textwrap.wrap(text, width) or [""]
    lines, line, size = [], "", 0
    for char in text:
        step = 2 if _CJK.match(char) else 1
        if size + step > width:
            lines.append(line)
            line, size = "", 0
        line += char
        size += step
    return lines + [line] if line else lines


def table_lines(table) -> list[str]:
    """A table as text lines: the caption, the header, one line per row, cells joined by " | "
    (the way the product's DOCX and PPTX extraction reads a table)."""
    return [table.caption, " | ".join(table.columns)] + [" | ".join(row) for row in table.rows]


def pdf_bytes(document: Document) -> bytes:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(UnicodeCIDFont("MSung-Light"))  # Traditional Chinese, extractable as Unicode
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, invariant=1)
    for page in document.pages:
        y = 800
        pdf.setFont("MSung-Light", 14)
        if page.title:
            pdf.drawString(50, y, page.title)
            y -= 28
        pdf.setFont("MSung-Light", 10)
        blocks = page.paragraphs + ["\n".join(table_lines(t)) for t in page.tables]
        for paragraph in blocks:
            for line in [w for part in paragraph.split("\n") for w in _wrap(part)]:
                if y < 50:  # a long page runs onto the next sheet, as a real handout would
                    pdf.showPage()
                    pdf.setFont("MSung-Light", 10)
                    y = 800
                pdf.drawString(50, y, line)
                y -= 14
            y -= 8
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def docx_bytes(document: Document) -> bytes:
    import docx

    file = docx.Document()
    for page in document.pages:
        if page.title:
            file.add_heading(page.title, level=1)
        for paragraph in page.paragraphs:
            file.add_paragraph(paragraph)
        for table in page.tables:
            file.add_paragraph(table.caption)
            grid = file.add_table(rows=len(table.rows) + 1, cols=len(table.columns))
            for cells, values in zip(grid.rows, [table.columns, *table.rows]):
                for target, text in zip(cells.cells, values):
                    target.text = text
    buffer = io.BytesIO()
    file.save(buffer)
    return buffer.getvalue()


def pptx_bytes(document: Document) -> bytes:
    """One slide per page: its first paragraphs as bullets, the rest as speaker notes, a table as a
    table shape under its caption."""
    from pptx import Presentation
    from pptx.util import Inches, Pt

    presentation = Presentation()
    for page in document.pages:
        slide = presentation.slides.add_slide(presentation.slide_layouts[1])
        slide.shapes.title.text = page.title or document.name
        bullets, notes = page.paragraphs[:3], page.paragraphs[3:]
        frame = slide.placeholders[1].text_frame
        frame.text = bullets[0] if bullets else ""
        for line in bullets[1:]:
            frame.add_paragraph().text = line
        if notes:
            slide.notes_slide.notes_text_frame.text = "\n".join(notes)
        for table in page.tables:
            caption = slide.shapes.add_textbox(Inches(0.5), Inches(4.6), Inches(9), Inches(0.4))
            caption.text_frame.text = table.caption
            shape = slide.shapes.add_table(
                len(table.rows) + 1, len(table.columns), Inches(0.5), Inches(5.0), Inches(9), Inches(2)
            )
            for r, values in enumerate([table.columns, *table.rows]):
                for c, text in enumerate(values):
                    shape.table.cell(r, c).text = text
                    shape.table.cell(r, c).text_frame.paragraphs[0].font.size = Pt(11)
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()


BUILDERS = {"pdf": pdf_bytes, "docx": docx_bytes, "pptx": pptx_bytes}


def file_name(document: Document) -> str:
    suffix = f".{document.format}"
    return document.name if document.name.lower().endswith(suffix) else f"{document.name}{suffix}"


def material_bytes(document: Document) -> bytes:
    return BUILDERS[document.format](document)


# --------------------------------------------------------------------------- frozen sources


def _financials(document: Document) -> edgar.Financials:
    f = document.financials
    filing = edgar.Filing(
        accession=f["accession"],
        form=f["form"],
        filed=f["filed"],
        url=f"https://www.sec.gov/Archives/edgar/data/{f.get('cik', 0)}/{f['accession'].replace('-', '')}/",
    )
    figures = {}
    for key, value in f["figures"].items():
        label, concept, unit = FIGURE_LABELS[key]
        figures[key] = edgar.Figure(
            key=key,
            label=label,
            value=float(value),
            unit=unit,
            concept=concept,
            start=f["start"],
            end=f["end"],
            filings=[filing],
        )
    margins = {}
    revenue = figures.get("revenue")
    for key, label, numerator_key in edgar.MARGINS:
        numerator = figures.get(numerator_key)
        if revenue and numerator and revenue.value:
            margins[key] = {
                "label": label,
                "value": numerator.value / revenue.value,
                "formula": f"{numerator.label} / {revenue.label}",
                "numerator": numerator_key,
            }
    return edgar.Financials(
        ticker=f["ticker"],
        cik=int(f.get("cik", 0)),
        company=f["company"],
        period=f["period"],
        start=f["start"],
        end=f["end"],
        figures=figures,
        margins=margins,
    )


def financial_sources(document: Document) -> list[Source]:
    """The sources the product's get_financials would return for these figures, word for word."""
    report = _financials(document)
    sources = [_figure_source(report, figure) for figure in report.figures.values()]
    return sources + [_margin_source(report, key, margin) for key, margin in report.margins.items()]


def _page_text(document: Document) -> str:
    return "\n\n".join(
        p
        for page in document.pages
        for p in ([page.title] if page.title else [])
        + page.paragraphs
        + ["\n".join(table_lines(t)) for t in page.tables]
    )


def web_source(document: Document) -> Source:
    text = _page_text(document)
    host = re.sub(r"^https?://([^/]+).*", r"\1", document.url)
    return Source(
        title=document.title or document.name,
        snippet=text[:300],
        text=text,
        tier="web",
        url=document.url,
        locator=host,
        meta={"external": True, "eval_document": document.name},
    )


def catalogue_source(document: Document) -> Source:
    text = _page_text(document)
    return Source(
        title=document.title or document.name,
        snippet=text[:300],
        text=text,
        tier="internal",
        url=f"/catalogue/{re.sub(r'[^A-Za-z0-9]+', '-', document.name).strip('-').lower()}",
        locator=document.name,
        meta={"eval_document": document.name},
    )


def passages(document: Document) -> list[str]:
    """What a judge reads to decide whether this document supports a statement."""
    if document.kind == "financials":
        return [s.text for s in financial_sources(document)]
    return [
        p
        for page in document.pages
        for p in ([page.title] if page.title else [])
        + page.paragraphs
        + [cell for t in page.tables for cell in t.cells()]  # each with its caption, row and column
        if p.strip()
    ]


# --------------------------------------------------------------------------- frozen tools

_WORD = re.compile(r"[a-z0-9]{2,}|[\u3400-\u9fff]")


def _relevance(query: str, text: str) -> int:
    wanted = set(_WORD.findall(query.lower()))
    return len(wanted & set(_WORD.findall(text.lower())))


def _ranked(documents: list[Document], query: str) -> list[Document]:
    # Every frozen document is returned (the item decided what this research can find); the
    # ranking only decides the order, as a search engine would.
    return sorted(documents, key=lambda d: -_relevance(query, d.title + " " + _page_text(d)))


def _frozen(name: str, answer) -> Tool:
    """The product's tool `name` (its description, schema and traits, as the research sees them)
    answering from the item: `answer(args)` gets the call's arguments with the schema's defaults
    filled in, so no tool's parameters are declared a second time here."""
    product = REGISTRY.get(name)
    defaults = {k: v["default"] for k, v in product.parameters["properties"].items() if "default" in v}

    def fn(ctx: ToolContext, **args) -> ToolResult:
        return answer({**defaults, **args})

    return dataclasses.replace(product, fn=fn, needs_web=False)


def registry_for(item: Item) -> ToolRegistry:
    registry = ToolRegistry()
    for name in PRODUCT_TOOLS:
        registry.register(REGISTRY.get(name))
    web = [d for d in item.documents if d.kind == "web"]
    figures = [d for d in item.documents if d.kind == "financials"]
    catalogue = [d for d in item.documents if d.kind == "catalogue"]

    if web:

        def web_search(args: dict) -> ToolResult:
            hits = _ranked(web, args["query"])[: max(1, min(10, args["limit"]))]
            return ToolResult(
                sources=[web_source(d) for d in hits],
                data={"results": [{"title": d.title, "url": d.url} for d in hits]},
            )

        def fetch_url(args: dict) -> ToolResult:
            url = args["url"]
            page = next((d for d in web if d.url.rstrip("/") == url.rstrip("/")), None)
            if page is None:
                return ToolResult(error=f"{url} could not be fetched")
            return ToolResult(sources=[web_source(page)], data={"url": page.url, "title": page.title})

        registry.register(_frozen("web_search", web_search))
        registry.register(_frozen("fetch_url", fetch_url))

    if figures:

        def get_financials(args: dict) -> ToolResult:
            ticker, quarter = args["ticker"], args["quarter"]
            symbol = ticker.strip().upper()
            mine = [d for d in figures if d.financials["ticker"] == symbol]
            if not mine:
                return ToolResult(error=f"unknown ticker {ticker!r}")
            wanted = re.sub(r"[^0-9Q]", "", quarter.upper())
            chosen = next(
                (
                    d
                    for d in mine
                    if wanted and wanted in re.sub(r"[^0-9Q]", "", d.financials.get("quarter", "").upper())
                ),
                None,
            )
            if chosen is None:  # "latest" (or a quarter not in the item): the newest period
                chosen = max(mine, key=lambda d: d.financials["end"])
            f = chosen.financials
            return ToolResult(
                sources=financial_sources(chosen),
                data={
                    "company": f["company"],
                    "ticker": f["ticker"],
                    "period": f["period"],
                    "period_start": f["start"],
                    "period_end": f["end"],
                    "figures": f["figures"],
                },
            )

        registry.register(_frozen("get_financials", get_financials))

    if catalogue:

        def lookup(tool: str, query: str) -> ToolResult:
            entries = [d for d in catalogue if d.tool == tool]
            if not entries:
                return ToolResult(error=f"no catalogue entry matches {query!r}")
            return ToolResult(
                sources=[catalogue_source(d) for d in _ranked(entries, query)],
                data={"results": [d.title for d in entries]},
            )

        def get_course_overview(args: dict) -> ToolResult:
            return lookup("get_course_overview", f"{args['course']} {args.get('university') or ''}")

        def get_hs_curriculum(args: dict) -> ToolResult:
            wanted = (args.get(k) or "" for k in ("subject", "grade_band", "query"))
            return lookup("get_hs_curriculum", " ".join(wanted))

        registry.register(_frozen("get_course_overview", get_course_overview))
        registry.register(_frozen("get_hs_curriculum", get_hs_curriculum))
    return registry
