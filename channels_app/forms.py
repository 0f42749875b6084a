from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _


class MaterialUploadForm(forms.Form):
    # Empty files are accepted here on purpose: the service records them as failed materials with
    # a readable error, like every other file that cannot be indexed.
    file = forms.FileField(label=_("File"), allow_empty_file=True)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["file"].help_text = _("PDF, DOCX or PPTX, at most %(limit)s MB.") % {
            "limit": settings.UEDU_MATERIALS_MAX_UPLOAD_MB
        }
        self.fields["file"].widget.attrs["accept"] = ".pdf,.docx,.pptx"
