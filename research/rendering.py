"""Model-written Markdown → HTML that is safe to put on a page.

The text comes from a model that read untrusted tool output, so: markdown-it-py parses with
Markdown links limited to http/https and Markdown images shown as their alt text, then nh3
sanitises the whole result against a short allow-list. Raw HTML in the text is stripped there:
no <script> (nor its content), no <img>, no style or event attributes, no javascript: or data:
URLs. Citation markers [N] become links to the answer's citation list."""

from __future__ import annotations

import re

import nh3
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.token import Token

from agent.engine.answer import MARKER

ALLOWED_TAGS = {
    "p",
    "br",
    "hr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "strong",
    "em",
    "del",
    "s",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "a",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
# Tags whose content is dropped along with them (text inside <script> is code, not prose).
DROPPED_WITH_CONTENT = {"script", "style", "iframe", "object", "embed", "template", "noscript", "svg", "math"}

_WEB_LINK = re.compile(r"^https?://", re.I)
CITATION_HREF = re.compile(r"^#cite-[0-9a-f]+-\d+$")


def _is_web_link(url: str) -> bool:
    return bool(_WEB_LINK.match(url.strip()))


def _keep_href(element: str, attribute: str, value: str) -> str | None:
    """nh3 attribute filter: a link goes to the web (http/https) or to a citation of this page;
    relative paths (/accounts/…), javascript:, data: and the like are dropped."""
    if attribute == "href" and not (_is_web_link(value) or CITATION_HREF.match(value)):
        return None
    return value


def _image_as_text(self, tokens, idx, options, env) -> str:
    # An image in an answer could phone home when displayed: show its alt text instead.
    alt = self.renderInlineAsText(tokens[idx].children or [], options, env)
    return escape(f"[{alt}]") if alt else ""


def _unlink_unsafe(state) -> None:
    """Core rule: a Markdown link to anything but http/https keeps its text and loses the link."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children, dropped = [], []
        for token in block.children:
            if token.type == "link_open":
                unsafe = not _is_web_link(str(token.attrGet("href") or ""))
                dropped.append(unsafe)
                if unsafe:
                    continue
            elif token.type == "link_close" and dropped and dropped.pop():
                continue
            children.append(token)
        block.children = children


def _link_citations(state) -> None:
    """Core rule: [N] in plain text (not in code, not inside a link) → link to citation N."""
    anchor = state.env.get("citation_anchor")
    known = state.env.get("citation_numbers") or set()
    if not anchor or not known:
        return
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children, depth = [], 0
        for token in block.children:
            if token.type == "link_open":
                depth += 1
            elif token.type == "link_close":
                depth -= 1
            if token.type != "text" or depth > 0 or "[" not in token.content:
                children.append(token)
                continue
            children.extend(_split_markers(token.content, anchor, known))
        block.children = children


def _split_markers(text: str, anchor: str, known: set[int]) -> list[Token]:
    out: list[Token] = []
    position = 0
    for match in MARKER.finditer(text):
        numbers = [int(n) for n in re.split(r"[,，、;；]", match.group(1))]
        if not any(n in known for n in numbers):
            continue
        out.append(_text(text[position : match.start()]))
        for number in numbers:
            if number in known:
                link = Token("link_open", "a", 1)
                link.attrs = {"href": f"#{anchor}-{number}"}
                out.extend([link, _text(f"[{number}]"), Token("link_close", "a", -1)])
            else:
                out.append(_text(f"[{number}]"))
        position = match.end()
    out.append(_text(text[position:]))
    return [t for t in out if t.type != "text" or t.content]


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    # Parse every link target, then drop the unsafe ones (their text stays, without the URL).
    md.validateLink = lambda url: True
    md.add_render_rule("image", _image_as_text)
    md.core.ruler.push("uedu_unsafe_links", _unlink_unsafe)
    md.core.ruler.push("uedu_citations", _link_citations)
    return md


_MD = _parser()


def sanitise(html: str) -> str:
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        clean_content_tags=DROPPED_WITH_CONTENT,
        attributes=ALLOWED_ATTRIBUTES,
        attribute_filter=_keep_href,
        url_schemes={"http", "https"},
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )


def render_markdown(text: str, *, citation_anchor: str = "", citation_numbers=()) -> SafeString:
    """HTML for a model's Markdown. With an anchor, [N] for each known N links to `#<anchor>-N`."""
    env = {"citation_anchor": citation_anchor, "citation_numbers": set(citation_numbers)}
    return mark_safe(sanitise(_MD.render(text or "", env)))  # noqa: S308 - sanitised just above
