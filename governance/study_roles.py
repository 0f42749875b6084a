"""Who holds a study role (channels_app.roles: the researcher, listed on a study). Registered with
channels_app.access when governance is ready, so `can(user, permission, study)` answers for the
study permissions without channels_app importing this app."""

from __future__ import annotations

from channels_app.roles import RESEARCHER

from .models import StudyResearcher


def study_roles_held(user, roles: frozenset, study=None) -> bool:
    """Whether the user holds one of `roles` in `study` (in any study when it is None)."""
    if RESEARCHER not in roles:
        return False
    listed = StudyResearcher.objects.filter(user=user)
    if study is not None:
        listed = listed.filter(study=study)
    return listed.exists()
