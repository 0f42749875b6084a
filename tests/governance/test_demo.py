from datetime import date

from django.core.management import call_command

from channels_app.models import SuperTaNda
from governance.models import ChannelConsent, Study, StudyPseudonymKey, StudyResearcher


def test_the_demo_study_is_loaded_once_with_a_signed_researcher_and_keeps_its_key(db, settings):
    settings.DEBUG = True
    call_command("load_demo_data")
    key = StudyPseudonymKey.key_of(Study.objects.get())
    call_command("load_demo_data")

    study = Study.objects.get()
    assert study.protocol_number == "NTU-REC 202507EM058" and study.status == "active"
    assert study.approved_from <= date.today() <= study.approved_to
    assert list(study.channels.values_list("slug", flat=True)) == ["demo-course"]
    assert StudyResearcher.objects.get().user.username == "researcher"
    assert StudyResearcher.objects.get().agreement_signed_on is not None
    nda = SuperTaNda.objects.get()
    assert nda.user.username == "superta" and nda.channel.slug == "demo-course"
    assert StudyPseudonymKey.key_of(study) == key  # pseudonyms stay stable across reloads
    # The demo course has Deep Research on, so its consent period is open; the other is off.
    assert ChannelConsent.objects.filter(channel__slug="demo-course", ended_at__isnull=True).count() == 1
    assert not ChannelConsent.objects.filter(channel__slug="demo-course-off").exists()
