"""Every field holding a status, a mode or a kind declares its values (choices): the admin shows
their labels and filters by them, forms refuse a value the code never writes, and a reader of the
model sees every value in one place."""

from __future__ import annotations

import re
from pathlib import Path

from django.apps import apps
from django.db import models

ROOT = Path(__file__).resolve().parents[1]

STATUS_LIKE = re.compile(r"(status|mode|kind)$|^(status|mode|kind)_")


def status_like_fields() -> list[models.Field]:
    return [
        field
        for model in apps.get_models()
        if Path(model._meta.app_config.path).is_relative_to(ROOT)
        and ".venv" not in Path(model._meta.app_config.path).parts
        for field in model._meta.concrete_fields
        if isinstance(field, models.CharField) and STATUS_LIKE.search(field.name)
    ]


def test_every_status_mode_or_kind_field_declares_its_choices():
    fields = status_like_fields()
    named = {f"{f.model._meta.label}.{f.name}" for f in fields}
    assert {
        "research.ResearchTask.status",
        "research.ResearchTask.plan_review_mode",
        "research.ResearchStep.status",
        "research.ResearchClaim.kind",
        "research.SourceReport.kind",
        "channels_app.Material.status",
    } <= named
    assert sorted(f"{f.model._meta.label}.{f.name}" for f in fields if not f.choices) == []


def test_defaults_are_among_the_choices():
    for field in status_like_fields():
        if field.has_default():
            assert field.get_default() in {value for value, _ in field.flatchoices}, field
