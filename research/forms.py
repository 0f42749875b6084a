"""Forms of the research pages. Rules live in the services; a form carries the text back to the
page with the service's message when a rule refuses it."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

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


class DashboardDayForm(forms.Form):
    day = forms.DateField(label=_("Day"), required=False, input_formats=["%Y-%m-%d"])
