"""Channel settings, section 6 "Deep Research（深度研究模式）": the teacher's switches."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from .models import Channel

SYSTEM_PROMPT_MAX_CHARS = 4000


class DeepResearchSettingsForm(forms.ModelForm):
    auto_suggest_threshold = forms.FloatField(
        label=_("Auto-suggest threshold"),
        min_value=0.0,
        max_value=1.0,
        widget=forms.NumberInput(attrs={"step": "0.05", "min": "0", "max": "1"}),
        help_text=_("Suggest Deep Research when the judge's confidence is at least this value (0–1)."),
        error_messages={
            "invalid": _("Enter a number between 0 and 1, e.g. 0.7."),
            "required": _("Enter a number between 0 and 1, e.g. 0.7."),
            "min_value": _("The threshold cannot be below 0."),
            "max_value": _("The threshold cannot be above 1."),
        },
    )
    system_prompt = forms.CharField(
        label=_("System prompt and usage note"),
        required=False,
        max_length=SYSTEM_PROMPT_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text=_("Instructions for the channel's assistant, including any usage rules for students."),
    )

    class Meta:
        model = Channel
        fields = ["deep_research_enabled", "web_tools_enabled", "auto_suggest_threshold", "system_prompt"]
        labels = {
            "deep_research_enabled": _("Enable Deep Research in this channel"),
            "web_tools_enabled": _("Allow web tools (search and fetch pages on the open web)"),
        }
        help_texts = {
            "deep_research_enabled": _("Students see the teal magnifier button in the chat box only when this is on."),
            "web_tools_enabled": _("Off: researches use the course materials, Uedu's data and scholarly sources only."),
        }
