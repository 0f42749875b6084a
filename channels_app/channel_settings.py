"""Channel settings, section 6 "Deep Research（深度研究模式）": the teacher's switches."""

from __future__ import annotations

import re

from django import forms
from django.utils.translation import gettext_lazy as _

from .models import Channel

SYSTEM_PROMPT_MAX_CHARS = 4000
MAX_DOMAINS = 200
COUNTRY = re.compile(r"^[a-z]{2}$")
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


def clean_domain_list(text: str) -> str:
    """One domain per line, as the web tools match them (the domain and its sub-domains):
    lower-cased, without a leading dot, each once. Anything that is not a bare domain name
    (a URL, a path, a wildcard, a space) is refused with the line named, so no rule is silently
    one that never matches."""
    domains: list[str] = []
    bad: list[str] = []
    for raw in (text or "").splitlines():
        line = raw.strip().lower().lstrip(".")
        if not line:
            continue
        try:
            ascii_name = line.encode("idna").decode("ascii")  # 臺大.tw and other IDNs are fine
        except UnicodeError:
            ascii_name = ""
        labels = ascii_name.split(".")
        if len(labels) < 2 or len(ascii_name) > 253 or not all(_LABEL.match(label) for label in labels):
            bad.append(raw.strip())
        elif line not in domains:
            domains.append(line)
    if bad:
        raise forms.ValidationError(
            _(
                "Not a domain name: %(lines)s. Write one domain per line, like example.edu (no https://, no path)."
            ),
            code="invalid_domain",
            params={"lines": ", ".join(bad[:5]) + ("…" if len(bad) > 5 else "")},
        )
    if len(domains) > MAX_DOMAINS:
        raise forms.ValidationError(
            _("At most %(n)d domains per list."), code="too_many_domains", params={"n": MAX_DOMAINS}
        )
    return "\n".join(domains)


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
        fields = [
            "deep_research_enabled",
            "web_tools_enabled",
            "web_allowed_domains",
            "web_denied_domains",
            "auto_suggest_threshold",
            "plan_review",
            "scholarly_extra_countries",
            "system_prompt",
        ]
        labels = {
            "deep_research_enabled": _("Enable Deep Research in this channel"),
            "web_tools_enabled": _("Allow web tools (search and fetch pages on the open web)"),
            "web_allowed_domains": _("Only these web domains"),
            "web_denied_domains": _("Never these web domains"),
            "plan_review": _("Plan review by the student"),
            "scholarly_extra_countries": _("Also search scholarly papers from these countries"),
        }
        help_texts = {
            "deep_research_enabled": _(
                "Students see the teal magnifier button in the chat box only when this is on."
            ),
            "web_tools_enabled": _(
                "Off: researches use the course materials, Uedu's data and scholarly sources only."
            ),
            "web_allowed_domains": _(
                "One domain per line, e.g. edu.tw; its sub-domains count too. Empty: any domain not denied below."
            ),
            "web_denied_domains": _(
                "One domain per line; web sources from these domains and their sub-domains are never used."
            ),
            "plan_review": _(
                "Whether students see the research plan's sub-questions and may edit them before the research gathers evidence."
            ),
        }
        widgets = {
            "web_allowed_domains": forms.Textarea(attrs={"rows": 3, "placeholder": "edu.tw\nopenalex.org"}),
            "web_denied_domains": forms.Textarea(attrs={"rows": 3}),
        }

    def clean_web_allowed_domains(self):
        return clean_domain_list(self.cleaned_data.get("web_allowed_domains", ""))

    def clean_scholarly_extra_countries(self):
        codes = [
            c.strip().lower()
            for c in (self.cleaned_data.get("scholarly_extra_countries") or "").split(",")
            if c.strip()
        ]
        bad = [c for c in codes if not COUNTRY.match(c)]
        if bad:
            raise forms.ValidationError(
                _("Not a two-letter country code: %(codes)s. Write codes like us, gb, separated by commas."),
                code="invalid_country",
                params={"codes": ", ".join(bad[:5])},
            )
        return ",".join(dict.fromkeys(codes))

    def clean_web_denied_domains(self):
        return clean_domain_list(self.cleaned_data.get("web_denied_domains", ""))
