"""Forms of the research pages. Rules live in the services; a form carries the text back to the
page with the service's message when a rule refuses it."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from channels_app.models import ChatLog
from research.channel_dashboard import UNCLASSIFIED
from research.services import review


class ReviewNoteForm(forms.Form):
    # No length or emptiness rule here: review.add_review_note owns them and says why it refuses.
    note = forms.CharField(
        label=_("Reviewer note"),
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 4, "maxlength": review.MAX_NOTE}),
        help_text=_("Everyone who can see this research sees the note, with your name and the time."),
    )


class ReviewQueueFilter(forms.Form):
    reviewed = forms.BooleanField(label=_("Include researches already reviewed"), required=False)


class DashboardFilter(forms.Form):
    """The channel dashboard's period, Bloom filter and page (and its CSV's table)."""

    period = forms.ChoiceField(
        label=_("Period"),
        required=False,
        choices=[("7", _("Last 7 days")), ("30", _("Last 30 days")), ("term", _("This term"))],
    )
    bloom = forms.ChoiceField(
        label=_("Bloom level"),
        required=False,
        choices=[("", _("All levels")), *ChatLog.Bloom.choices, (UNCLASSIFIED, _("Not classified"))],
    )
    page = forms.IntegerField(required=False, min_value=1)
    table = forms.ChoiceField(
        required=False, choices=[("questions", _("Questions")), ("topics", _("What the materials miss"))]
    )
