"""The export audit log is append-only in the database itself, whatever code runs; and channels
that already had Deep Research on when governance arrived get a consent period from now."""

from django.conf import settings
from django.db import migrations
from django.utils import timezone

APPEND_ONLY = """
CREATE OR REPLACE FUNCTION governance_exportaudit_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'governance_exportaudit is append-only (% refused)', TG_OP;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER governance_exportaudit_append_only
    BEFORE UPDATE OR DELETE ON governance_exportaudit
    FOR EACH ROW EXECUTE FUNCTION governance_exportaudit_append_only();
"""

DROP = """
DROP TRIGGER IF EXISTS governance_exportaudit_append_only ON governance_exportaudit;
DROP FUNCTION IF EXISTS governance_exportaudit_append_only();
"""


def open_consent_for_enabled_channels(apps, schema_editor):
    # Consent starts when it is recorded: data written before this moment is not claimed as
    # covered, so exports leave it out (the conservative reading).
    Channel = apps.get_model("channels_app", "Channel")
    ChannelConsent = apps.get_model("governance", "ChannelConsent")
    now = timezone.now()
    ChannelConsent.objects.bulk_create(
        [
            ChannelConsent(channel_id=pk, framework=settings.UEDU_RESEARCH_CONSENT_FRAMEWORK, started_at=now)
            for pk in Channel.objects.filter(deep_research_enabled=True).values_list("pk", flat=True)
        ],
        ignore_conflicts=True,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("governance", "0001_initial"),
        ("channels_app", "0002_initial"),
    ]

    operations = [
        migrations.RunSQL(APPEND_ONLY, DROP),
        migrations.RunPython(open_consent_for_enabled_channels, migrations.RunPython.noop),
    ]
