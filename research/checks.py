"""`manage.py check --deploy`: a student's quota must fit in their share of the daily cap.

A research's reservation counts against its user's share of the cap (quotas.services.reserve_cost)
and a research may cost its whole reservation. A student who runs their quota one research after
another must therefore find quota x worst case within the share, or the share, not the quota, is
what stops them (in the worst case)."""

from __future__ import annotations

from django.conf import settings
from django.core import checks

from channels_app.roles import QUOTA_STUDENT as STUDENT
from quotas.services import user_share_usd
from research.services.settlement import worst_case_cost


@checks.register(checks.Tags.security, deploy=True)
def student_quota_fits_the_share(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    quota = settings.UEDU_DEEP_RESEARCH_QUOTA[STUDENT]
    if quota is None:
        return []
    needed, share = quota * worst_case_cost(), user_share_usd()
    if needed <= share:
        return []
    return [
        checks.Warning(
            f"A student's {quota} researches may cost ${needed:.2f} at their worst case, more than one user's "
            f"share of the daily cap (${share:.2f}): the share may stop a student before their quota does.",
            hint=(
                "Raise UEDU_DEEP_RESEARCH_DAILY_CAP_USD or UEDU_USER_DAILY_CAP_SHARE, or lower "
                "UEDU_DR_QUOTA_STUDENT or UEDU_DR_WORST_CASE_USD (docs/security.md, 'Cost defences')."
            ),
            id="research.W001",
        )
    ]
