"""Export requests and approvals; the pseudonym key leaves Study for a model no admin shows
(copied unchanged, so every existing pseudonym stays the same); Super TA NDAs move to
channels_app, one per channel: an existing per-user NDA is copied to each channel where that user
is a Super TA today (the agreement they signed covered the role they held)."""

import django.db.models.deletion
import governance.models
from django.conf import settings
from django.db import migrations, models


def copy_pseudonym_keys(apps, schema_editor):
    Study = apps.get_model("governance", "Study")
    StudyPseudonymKey = apps.get_model("governance", "StudyPseudonymKey")
    for study_id, key in Study.objects.values_list("pk", "pseudonym_key"):
        StudyPseudonymKey.objects.create(study_id=study_id, key=bytes(key))


def copy_ndas_per_channel(apps, schema_editor):
    OldNda = apps.get_model("governance", "SuperTaNda")
    NewNda = apps.get_model("channels_app", "SuperTaNda")
    Membership = apps.get_model("channels_app", "Membership")
    for nda in OldNda.objects.all():
        for channel_id in Membership.objects.filter(user_id=nda.user_id, role="super_ta").values_list("channel_id", flat=True):
            NewNda.objects.get_or_create(user_id=nda.user_id, channel_id=channel_id, defaults={"signed_on": nda.signed_on})


class Migration(migrations.Migration):

    dependencies = [
        ('channels_app', '0006_super_ta_nda_per_channel'),
        ('governance', '0002_append_only_audit_and_existing_consent'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='StudyPseudonymKey',
            fields=[
                ('study', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='pseudonym_secret', serialize=False, to='governance.study')),
                ('key', models.BinaryField(default=governance.models.new_pseudonym_key)),
            ],
        ),
        migrations.AlterModelOptions(
            name='exportaudit',
            options={'ordering': ['-requested_at'], 'verbose_name': 'export audit entry', 'verbose_name_plural': 'governance audit log'},
        ),
        migrations.RunPython(copy_pseudonym_keys, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name='study',
            name='pseudonym_key',
        ),
        migrations.AddField(
            model_name='consentwithdrawal',
            name='rejoined_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='re-joined at'),
        ),
        migrations.AddField(
            model_name='exportaudit',
            name='action',
            field=models.CharField(choices=[('export', 'Export'), ('request_filed', 'Export request filed'), ('request_approved', 'Export request approved'), ('request_refused', 'Export request refused'), ('consent_withdrawn', 'Consent withdrawn'), ('consent_rejoined', 'Consent given again')], default='export', max_length=24, verbose_name='action'),
        ),
        migrations.AddField(
            model_name='exportaudit',
            name='channel',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='channels_app.channel', verbose_name='channel'),
        ),
        migrations.AddField(
            model_name='exportaudit',
            name='note',
            field=models.TextField(blank=True, verbose_name='note'),
        ),
        migrations.AlterField(
            model_name='exportaudit',
            name='study',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='exports', to='governance.study', verbose_name='study'),
        ),
        migrations.CreateModel(
            name='ExportRequest',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('requested_at', models.DateTimeField(auto_now_add=True, verbose_name='requested at')),
                ('purpose', models.TextField(verbose_name='purpose')),
                ('tables', models.JSONField(default=list, verbose_name='tables')),
                ('date_from', models.DateField(verbose_name='from')),
                ('date_to', models.DateField(verbose_name='to')),
                ('consent_form_name', models.CharField(max_length=200, verbose_name='export consent form')),
                ('consent_form_sha256', models.CharField(max_length=64, verbose_name='SHA-256 of the consent form')),
                ('consent_form', models.BinaryField()),
                ('status', models.CharField(choices=[('pending', 'Waiting for approval'), ('approved', 'Approved'), ('refused', 'Refused'), ('exported', 'Exported')], default='pending', max_length=16, verbose_name='status')),
                ('decided_at', models.DateTimeField(blank=True, null=True, verbose_name='decided at')),
                ('decision_note', models.TextField(blank=True, verbose_name='decision note')),
                ('exported_at', models.DateTimeField(blank=True, null=True, verbose_name='exported at')),
                ('decided_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='decided by')),
                ('requested_by', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='requested by')),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='export_requests', to='governance.study', verbose_name='study')),
            ],
            options={
                'verbose_name': 'export request',
                'verbose_name_plural': 'export requests',
                'ordering': ['-requested_at'],
            },
        ),
        migrations.AddField(
            model_name='exportaudit',
            name='export_request',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='audit_entries', to='governance.exportrequest', verbose_name='export request'),
        ),
        migrations.RunPython(copy_ndas_per_channel, migrations.RunPython.noop),
        migrations.DeleteModel(
            name='SuperTaNda',
        ),
        migrations.AddConstraint(
            model_name='exportrequest',
            constraint=models.CheckConstraint(condition=models.Q(('date_to__gte', models.F('date_from'))), name='export_request_dates_in_order'),
        ),
    ]
