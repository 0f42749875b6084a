"""Scanners that separate the AI's words from the rest of a rendering, the way a reader's eye (or
a test) can: on a page, every element marked `data-by="model"` (which must carry its visible
label); in a text rendering (Markdown, terminal, e-mail, chat log), every blockquote headed by the
label. What is left is facts, metadata and product text: no string the model wrote may be there."""

from __future__ import annotations

from lxml import html as lxml_html

# The label in each language (research/report_wording.MODEL_LABEL and its zh-Hant translation).
EN_LABEL = "Written by the AI — not the sources' words"
ZH_LABEL = "AI 撰寫（非來源原文）"


def _norm(text: str) -> str:
    return " ".join(text.split())


def page_outside_model(page: str) -> str:
    """The page's text and attribute values outside every data-by="model" element."""
    tree = lxml_html.fromstring(page)
    for element in tree.xpath('//*[@data-by="model"]'):
        element.drop_tree()
    for element in tree.xpath("//script|//style"):
        element.drop_tree()
    attributes = " ".join(
        " ".join(str(v) for v in el.attrib.values()) for el in tree.iter() if isinstance(el.tag, str)
    )
    return _norm(tree.text_content() + " " + attributes)


def page_model_blocks(page: str) -> list[str]:
    """The text of every data-by="model" element (outermost ones)."""
    tree = lxml_html.fromstring(page)
    return [
        _norm(el.text_content())
        for el in tree.xpath('//*[@data-by="model"][not(ancestor::*[@data-by="model"])]')
    ]


def check_page(page: str, model_words: list[str], label: str | None = None) -> None:
    """Every model string is inside a labelled data-by="model" element, and none is outside."""
    label = _norm(label or EN_LABEL)
    blocks = page_model_blocks(page)
    assert all(label in block for block in blocks), [b for b in blocks if label not in b]
    outside = page_outside_model(page)
    leaked = [w for w in model_words if _norm(w) in outside]
    assert not leaked, leaked
    inside = " ".join(blocks)
    missing = [w for w in model_words if _norm(w) not in inside]
    assert not missing, missing


def text_outside_model(text: str, label: str | None = None) -> list[str]:
    """A text rendering's lines without its labelled blockquotes (the label line and the quote's
    lines), Markdown escapes undone."""
    label = label or EN_LABEL
    kept, quoting = [], False
    for line in text.splitlines():
        body = line.lstrip()
        if body.startswith(">") and label in body:
            quoting = True
            continue
        if quoting and body.startswith(">"):
            continue
        quoting = False
        kept.append(line.replace("\\", ""))
    return kept


def check_text(
    text: str, model_words: list[str], label: str | None = None, shown: list[str] | None = None
) -> None:
    """No model string is outside a labelled blockquote and no other blockquote is written; every
    string of `shown` (default: all of them) is there, inside one."""
    lines = text_outside_model(text, label)
    outside = _norm(" ".join(lines))
    leaked = [w for w in model_words if _norm(w) in outside]
    assert not leaked, leaked
    assert not [line for line in lines if line.lstrip().startswith(">")], "an unlabelled quote"
    flat = _norm(text.replace("\\", ""))
    missing = [w for w in (model_words if shown is None else shown) if _norm(w) not in flat]
    assert not missing, missing
