"""Model-written Markdown on the page: nothing executable, nothing that calls another host."""

from __future__ import annotations

import pytest

from research.rendering import render_markdown


def html(text, **kwargs) -> str:
    return str(render_markdown(text, **kwargs))


@pytest.mark.parametrize(
    "text",
    [
        "before <script>alert('x')</script> after",
        "<script>\nalert('x')\n</script>\n\nafter",
        "<SCRIPT SRC=https://evil.example/x.js></SCRIPT>",
    ],
)
def test_script_tags_and_their_content_are_removed(text):
    out = html(text)
    assert "<script" not in out.lower() and "alert" not in out and "evil.example" not in out


@pytest.mark.parametrize(
    "text",
    [
        "[click](javascript:alert(1))",
        "[click](JaVaScRiPt:alert(1))",
        '<a href="javascript:alert(1)">click</a>',
        "[click](data:text/html;base64,PHNjcmlwdD4=)",
        "[click](vbscript:msgbox)",
        "[click](/accounts/logout/)",
    ],
)
def test_only_http_and_https_links_survive(text):
    out = html(text)
    assert "click" in out
    assert (
        "javascript:" not in out.lower()
        and "data:" not in out
        and "vbscript" not in out
        and 'href="/' not in out
    )


def test_web_links_are_kept_and_marked_nofollow():
    out = html("[the paper](https://papers.example/rag)")
    assert '<a href="https://papers.example/rag" rel="noopener noreferrer nofollow">the paper</a>' in out


@pytest.mark.parametrize(
    "text",
    [
        "![pixel](https://tracker.example/p.png)",
        '<img src="https://tracker.example/p.png">',
        '<img src=x onerror="alert(1)">',
        '<picture><source srcset="https://tracker.example/p.png"></picture>',
        '<svg><image href="https://tracker.example/p.png"/></svg>',
    ],
)
def test_images_never_reach_the_page(text):
    out = html(text)
    assert "<img" not in out and "tracker.example" not in out and "onerror" not in out and "<svg" not in out


def test_a_markdown_image_leaves_its_alt_text():
    assert "[pixel]" in html("![pixel](https://tracker.example/p.png)")


@pytest.mark.parametrize(
    "text, kept",
    [
        ('<div onclick="steal()" style="position:fixed">hello</div>', "hello"),
        ('<iframe src="https://evil.example"></iframe>tail', "tail"),
        ('<form action="https://evil.example"><input name=x></form>tail', "tail"),
        ("<b>bold</b> <u>under</u>", "bold"),
        ('<a href="https://ok.example" onmouseover="x()">ok</a>', "ok"),
        ("<!-- hidden comment -->visible", "visible"),
    ],
)
def test_raw_html_is_stripped_to_its_text(text, kept):
    out = html(text)
    assert kept in out
    for bad in (
        "onclick",
        "style=",
        "<div",
        "<iframe",
        "<form",
        "<input",
        "<b>",
        "<u>",
        "onmouseover",
        "hidden comment",
    ):
        assert bad not in out


def test_markdown_structure_is_kept():
    out = html("## Heading\n\n- **one**\n- `two`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> quote")
    for tag in (
        "<h2>",
        "<ul>",
        "<strong>one</strong>",
        "<code>two</code>",
        "<table>",
        "<td>1</td>",
        "<blockquote>",
    ):
        assert tag in out


def test_citation_markers_link_to_known_citations_only():
    out = html("Claim [1][2]. Other [7]. Listed [1, 2].", citation_anchor="cite-ab", citation_numbers={1, 2})
    assert out.count('href="#cite-ab-1"') == 2 and out.count('href="#cite-ab-2"') == 2
    assert "[7]" in out and "#cite-ab-7" not in out


def test_markers_in_code_and_inside_links_stay_text():
    out = html("`a[1]` and [see [1]](https://x.example)", citation_anchor="cite-ab", citation_numbers={1})
    assert "#cite-ab-1" not in out and "<code>a[1]</code>" in out


def test_raw_html_links_to_pages_of_this_site_are_dropped():
    out = html(
        '<a href="/accounts/logout/">out</a> <a href="#cite-ab-1">[1]</a> <a href="//evil.example/x">x</a>'
    )
    assert 'href="/accounts' not in out and "evil.example" not in out and 'href="#cite-ab-1"' in out


def test_the_output_carries_no_class_or_id_a_model_could_use_to_pose_as_the_page():
    out = html('<p class="disclaimer" id="composer">x</p> <a class="cite-ref" href="https://a.example">y</a>')
    assert "class=" not in out and "id=" not in out
