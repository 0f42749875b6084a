"""Each chunk records its languages, each channel the set its materials hold, and each material
the bilingual term pairs it writes (docs/retrieval.md).

The backfill reads every chunk once, in batches: its languages by script, and the term pairs of
its text. Pairs of a title and the first sentence of its page are mined at indexing from the
extracted pages; from stored chunks (whose lines are joined) fewer of them are found: re-index a
material to get them all."""

import django.contrib.postgres.fields
import django.db.models.deletion
from django.db import migrations, models


BATCH = 2000


def backfill(apps, schema_editor):
    # The rules of today's code: a backfill that used a frozen copy would record what search no
    # longer reads.
    from materials import glossary, languages

    Chunk = apps.get_model("channels_app", "MaterialChunk")
    Channel = apps.get_model("channels_app", "Channel")
    GlossaryTerm = apps.get_model("channels_app", "GlossaryTerm")
    held: dict[int, set] = {}
    terms: dict[int, dict] = {}  # material id -> {(zh, en lower): (channel id, zh, en)}
    last = 0
    while True:
        batch = list(Chunk.objects.filter(pk__gt=last).order_by("pk").only("pk", "text", "channel_id", "material_id")[:BATCH])
        if not batch:
            break
        for chunk in batch:
            chunk.languages = languages.languages_of(chunk.text)
            held.setdefault(chunk.channel_id, set()).update(chunk.languages)
            found = terms.setdefault(chunk.material_id, {})
            for term in glossary.mine(chunk.text):
                if len(found) < glossary.MAX_TERMS:
                    found.setdefault((term.zh, term.en.lower()), (chunk.channel_id, term.zh, term.en))
        Chunk.objects.bulk_update(batch, ["languages"])
        last = batch[-1].pk
    for channel_id, codes in held.items():
        Channel.objects.filter(pk=channel_id).update(material_languages=sorted(codes))
    GlossaryTerm.objects.bulk_create(
        [
            GlossaryTerm(material_id=material_id, channel_id=channel_id, zh=zh, en=en)
            for material_id, found in terms.items()
            for channel_id, zh, en in found.values()
        ],
        batch_size=1000,
        ignore_conflicts=True,
    )


class Migration(migrations.Migration):

    dependencies = [
        ('channels_app', '0009_chunk_vectors_inline'),
    ]

    operations = [
        migrations.AddField(
            model_name='channel',
            name='material_languages',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=8), blank=True, default=list, size=None, verbose_name='languages of its materials'),
        ),
        migrations.AddField(
            model_name='materialchunk',
            name='languages',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=8), blank=True, default=list, size=None),
        ),
        migrations.CreateModel(
            name='GlossaryTerm',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('zh', models.CharField(max_length=40, verbose_name='Chinese')),
                ('en', models.CharField(max_length=120, verbose_name='English')),
                ('channel', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='channels_app.channel')),
                ('material', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='glossary_terms', to='channels_app.material')),
            ],
            options={
                'verbose_name': 'glossary term',
                'verbose_name_plural': 'glossary terms',
                'ordering': ['material', 'id'],
                'indexes': [models.Index(fields=['channel', 'zh'], name='glossary_channel')],
                'constraints': [models.UniqueConstraint(fields=('material', 'zh', 'en'), name='one_glossary_term_per_material')],
            },
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop, elidable=True),
    ]
