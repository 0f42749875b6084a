"""The password-reset form, which never writes a reset link where logs go.

A reset link takes over the account it was sent for. The console e-mail backend (development's
default; production refuses it unless UEDU_ALLOW_CONSOLE_EMAIL=1) writes every message to
stdout, which is the log. With that backend the form sends nothing and logs only that a reset
was asked for, naming the account by its id: whoever reads the logs cannot use it."""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth.forms import PasswordResetForm
from django.core.mail.backends.console import EmailBackend as ConsoleBackend
from django.utils.module_loading import import_string

log = logging.getLogger(__name__)


def mail_goes_to_the_logs() -> bool:
    """Whether the configured e-mail backend writes messages to stdout (the console backend or one
    built on it)."""
    return issubclass(import_string(settings.EMAIL_BACKEND), ConsoleBackend)


class LinkSafePasswordResetForm(PasswordResetForm):
    def send_mail(self, subject_template_name, email_template_name, context, from_email, to_email, **kwargs):
        if mail_goes_to_the_logs():
            user = context.get("user")
            log.warning(
                "password reset asked for user #%s: not sent, because EMAIL_BACKEND writes mail to the "
                "console and the reset link would end in the logs (configure a mail server; "
                "`manage.py changepassword` sets a password by hand)",
                getattr(user, "pk", "?"),
            )
            return
        super().send_mail(subject_template_name, email_template_name, context, from_email, to_email, **kwargs)
