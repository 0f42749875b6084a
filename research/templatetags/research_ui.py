"""Template helpers of the research pages and the chat page's research turns."""

from __future__ import annotations

import json

from django import template
from django.utils.html import json_script

from research import presentation
from research.rendering import render_markdown
from research.ui_strings import js_strings

register = template.Library()


@register.simple_tag(takes_context=True)
def answer_view(context, task):
    return presentation.answer_view(task, context["request"].user)


@register.simple_tag
def progress_limits():
    return presentation.progress_limits()


@register.simple_tag
def ui_strings():
    """The translated texts the page's scripts show, as a JSON data block (not executable)."""
    return json_script(js_strings(), "ui-strings")


@register.filter
def pretty_json(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


@register.filter
def markdown(text):
    """A model's Markdown as sanitised HTML (ClassroomGPT replies; answers go through answer_view)."""
    return render_markdown(text)
