from django.contrib import admin
from django.db import models
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from channels_app.admin_scoping import GuardedModelAdmin

from .models import (
    Advisor,
    AdvisorPaper,
    Course,
    CurriculumTopic,
    PlatformDocument,
    ResearchCluster,
    TeamPaper,
    University,
)


class CatalogueAdmin(GuardedModelAdmin):
    """Demo rows stand out in every list: a DEMO badge column and an is_demo filter."""

    readonly_fields = ["created_at", "updated_at"]
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}  # Django 6's default, today

    @admin.display(description=_("demo"), ordering="is_demo")
    def demo_badge(self, obj):
        if not obj.is_demo:
            return ""
        return format_html(
            '<strong style="color:#fff;background:#b45309;padding:1px 6px;border-radius:3px">{}</strong>',
            "DEMO",
        )


@admin.register(University)
class UniversityAdmin(CatalogueAdmin):
    list_display = ["name", "name_en", "slug", "city", "demo_badge"]
    list_filter = ["is_demo", "city"]
    search_fields = ["name", "name_en", "slug"]
    prepopulated_fields = {"slug": ["name_en"]}


@admin.register(Course)
class CourseAdmin(CatalogueAdmin):
    list_display = ["code", "name", "university", "department", "credits", "level", "demo_badge"]
    list_filter = ["is_demo", "level", "university", "credits"]
    search_fields = ["code", "name", "name_en", "department", "description"]
    list_select_related = ["university"]


@admin.register(CurriculumTopic)
class CurriculumTopicAdmin(CatalogueAdmin):
    list_display = ["curriculum_code", "topic", "subject", "grade_band", "demo_badge"]
    list_filter = ["is_demo", "subject", "grade_band"]
    search_fields = ["curriculum_code", "topic", "learning_goals"]


class AdvisorInline(admin.TabularInline):
    model = Advisor.clusters.through
    extra = 0
    verbose_name = _("advisor")
    verbose_name_plural = _("advisors")


@admin.register(ResearchCluster)
class ResearchClusterAdmin(CatalogueAdmin):
    list_display = ["name", "name_en", "slug", "demo_badge"]
    list_filter = ["is_demo"]
    search_fields = ["name", "name_en", "keywords", "description"]
    inlines = [AdvisorInline]


class AdvisorPaperInline(admin.TabularInline):
    model = AdvisorPaper
    extra = 0
    fields = ["title", "year", "venue", "doi", "openalex_id", "is_demo"]
    show_change_link = True


@admin.register(Advisor)
class AdvisorAdmin(CatalogueAdmin):
    list_display = ["name", "name_en", "university", "department", "profile_url", "openalex_id", "demo_badge"]
    list_filter = ["is_demo", "university", "clusters"]
    search_fields = ["name", "name_en", "slug", "research_interests", "openalex_id"]
    filter_horizontal = ["clusters"]
    list_select_related = ["university"]
    inlines = [AdvisorPaperInline]


@admin.register(AdvisorPaper)
class AdvisorPaperAdmin(CatalogueAdmin):
    list_display = ["title", "advisor", "year", "venue", "doi", "openalex_id", "cited_by_count", "demo_badge"]
    list_filter = ["is_demo", "year", "advisor"]
    search_fields = ["title", "authors", "doi", "openalex_id", "advisor__name"]
    list_select_related = ["advisor"]
    autocomplete_fields = ["advisor"]


@admin.register(TeamPaper)
class TeamPaperAdmin(CatalogueAdmin):
    list_display = ["title", "authors", "year", "venue", "doi", "demo_badge"]
    list_filter = ["is_demo", "year"]
    search_fields = ["title", "authors", "doi", "keywords"]
    prepopulated_fields = {"slug": ["title"]}


@admin.register(PlatformDocument)
class PlatformDocumentAdmin(CatalogueAdmin):
    list_display = ["title", "visibility", "channel", "author", "updated_at", "demo_badge"]
    list_filter = ["is_demo", "visibility", "channel"]
    search_fields = ["title", "body", "slug"]
    list_select_related = ["channel", "author"]
    autocomplete_fields = ["author"]
    prepopulated_fields = {"slug": ["title"]}
