"""The channel dashboard (`/deep_research/channel/<slug>/dashboard`) and its CSV: for who may read
the channel's results (its teacher, its Super TAs with an NDA, admins; everyone else gets 404 on
both, selectors.dashboard_channel). The reads are research.channel_dashboard's."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.utils.translation import gettext, pgettext
from django.views.decorators.http import require_GET

from channels_app.access import can
from channels_app.models import ChatLog
from channels_app.roles import STUDENTS_NAMED
from research import channel_dashboard as D
from research import selectors, trend_chart
from research.forms import DashboardFilter
from research.models import ResearchTask


@dataclass
class QuestionRow:
    task_uuid: str
    asked_at: datetime
    student: str
    question: str
    bloom: str
    bloom_label: str
    status: str
    status_label: str
    limit_hit: bool
    parts: int | None
    answered: int | None


def _student(channel, names: bool, user_id: int, username: str) -> str:
    if names:
        return username
    return gettext("Student %(code)s") % {"code": D.student_label(channel, user_id)}


def _question_rows(channel, tasks, names: bool) -> list[QuestionRow]:
    blooms = dict(ChatLog.Bloom.choices)
    return [
        QuestionRow(
            task_uuid=str(t.task_uuid),
            asked_at=t.created_at,
            student=_student(channel, names, t.user_id, t.username),
            question=t.user_question,
            bloom=t.bloom or "",
            bloom_label=str(blooms.get(t.bloom, "")),
            status=t.status,
            status_label=str(ResearchTask.Status(t.status).label),
            limit_hit=bool(t.limit_hit),
            parts=t.parts or None,  # 0: a report with nothing to count
            answered=t.answered if t.parts else None,
        )
        for t in tasks
    ]


def _page_label(unit: str, page: str) -> str:
    """A material's page as its kind calls it (Material.unit_label: 'p.', 'slide', '§')."""
    if unit == "slide":
        return gettext("slide %(n)s") % {"n": page}
    if unit == "§":
        return gettext("section %(n)s") % {"n": page}
    return gettext("p. %(n)s") % {"n": page}


def _chart(trend: list[dict]) -> trend_chart.TrendChart:
    days = [row["day"] for row in trend]
    return trend_chart.layout(
        days,
        [
            ("researches", gettext("Researches asked"), [row["researches"] for row in trend]),
            ("completed", gettext("Completed"), [row["completed"] for row in trend]),
            ("limit_hits", gettext("Finished at a limit"), [row["limit_hits"] for row in trend]),
        ],
    )


def _filters(request, slug: str):
    """The channel (404 for who may not read its results), the valid filter, or the form with
    its errors."""
    channel = selectors.dashboard_channel(request.user, slug)
    form = DashboardFilter(request.GET)
    return channel, form, form.is_valid()


@login_required
@require_GET
def channel_dashboard(request, slug):
    channel, form, valid = _filters(request, slug)
    if not valid:
        return render(
            request, "research/channel_dashboard.html", {"channel": channel, "form": form}, status=400
        )
    period = D.period(form.cleaned_data["period"] or "7")
    bloom = form.cleaned_data["bloom"]
    names = can(request.user, STUDENTS_NAMED, channel)
    page = Paginator(D.questions(channel, period, bloom=bloom), D.QUESTIONS_PER_PAGE).get_page(
        form.cleaned_data["page"] or 1
    )
    trend = D.trend(channel, period)
    conflicts, conflict_count = D.unresolved_conflicts(channel, period)
    topics, topic_count = D.gap_topics(channel, period)
    materials = D.cited_materials(channel, period)
    for material in materials:
        material.page_labels = [
            (page_no, _page_label(material.unit, page_no), n) for page_no, n in material.pages
        ]
    query = {"period": period.key, "bloom": bloom}
    context = {
        "channel": channel,
        "form": form,
        "period": period,
        "periods": [(key, label) for key, label in form.fields["period"].choices],
        "bloom": bloom,
        "blooms": D.bloom_counts(channel, period),
        "figures": D.figures(channel, period),
        "trend": trend,
        "chart": _chart(trend),
        "page": page,
        "rows": _question_rows(channel, page.object_list, names),
        "names": names,
        "conflicts": conflicts,
        "conflict_count": conflict_count,
        "topics": topics,
        "topic_count": topic_count,
        "materials": materials,
        "query": urlencode(query),
        "period_query": urlencode({"period": period.key}),
        "csv_url": reverse("research_channel_dashboard_csv", args=[channel.slug]) + "?" + urlencode(query),
    }
    return render(request, "research/channel_dashboard.html", context)


# --------------------------------------------------------------------------- CSV


def _cell(value) -> str:
    """A value as a spreadsheet cell that cannot be read as a formula (a student's question may
    begin with '=', '+', '-' or '@'; governance/export.py does the same for IRB exports)."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


@login_required
@require_GET
def channel_dashboard_csv(request, slug):
    """The dashboard's rows as CSV (UTF-8 with a byte-order mark, so spreadsheet programs read the
    Chinese): every question of the period under the page's Bloom filter, or (?table=topics) every
    gap of the period with its topic. Same permission and pseudonyms as the page."""
    channel, form, valid = _filters(request, slug)
    if not valid:
        return render(
            request, "research/channel_dashboard.html", {"channel": channel, "form": form}, status=400
        )
    period = D.period(form.cleaned_data["period"] or "7")
    names = can(request.user, STUDENTS_NAMED, channel)
    table = form.cleaned_data["table"] or "questions"
    # One reverse() for all rows: the result page's address with each uuid put in.
    placeholder = "00000000-0000-0000-0000-000000000000"
    result_url = f"{request.scheme}://{request.get_host()}" + reverse("research_result", args=[placeholder])

    def result(task_uuid) -> str:
        return result_url.replace(placeholder, str(task_uuid))

    if table == "topics":
        by = {True: gettext("the AI"), False: gettext("the student")}
        header = [
            gettext("Topic"),
            gettext("Topic's first wording"),
            gettext("Sub-question or question"),
            gettext("Written by"),
            gettext("Asked"),
            gettext("Result page"),
        ]
        rows = (
            [topic, topic_text, text, by[by_model], timezone.localtime(asked_at), result(task_uuid)]
            for topic, topic_text, text, by_model, asked_at, task_uuid in D.csv_gap_rows(channel, period)
        )
    else:
        blooms = {level: str(label) for level, label in ChatLog.Bloom.choices}
        statuses = {status: str(label) for status, label in ResearchTask.Status.choices}
        yes, no = pgettext("yes or no", "yes"), pgettext("yes or no", "no")
        header = [
            gettext("Asked"),
            gettext("Student"),
            gettext("Question"),
            gettext("Bloom level"),
            gettext("Status"),
            gettext("Reached a limit"),
            gettext("Sub-questions"),
            gettext("Answered by the course materials"),
            gettext("Result page"),
        ]
        rows = (
            [
                timezone.localtime(asked_at),
                _student(channel, names, user_id, username),
                question,
                blooms.get(bloom or "", ""),
                statuses.get(status, status),
                yes if limit_hit else no,
                parts or "",
                answered if parts else "",
                result(task_uuid),
            ]
            for asked_at, user_id, username, question, bloom, status, limit_hit, parts, answered, task_uuid in (
                D.csv_question_rows(channel, period, bloom=form.cleaned_data["bloom"])
            )
        )
    out = io.StringIO()
    writer = csv.writer(out)

    def stream():
        """The rows in chunks of a few hundred (a chunk per row would be thousands of them)."""
        out.write("\ufeff")
        writer.writerow([_cell(v) for v in header])
        for n, row in enumerate(rows, 1):
            writer.writerow([_cell(v) for v in row])
            if n % 500 == 0:
                yield out.getvalue()
                out.seek(0)
                out.truncate()
        yield out.getvalue()

    response = StreamingHttpResponse(stream(), content_type="text/csv; charset=utf-8")
    name = f"{channel.slug}-{table}-{period.key}-{timezone.localdate().isoformat()}.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
