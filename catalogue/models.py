"""The Uedu catalogue the research tools read.

Every row carries `is_demo`: invented sample data is loaded by `load_demo_data` for the demo and
must never pass for real Uedu data, so tools, admin and pages label it DEMO.

Each row has two addresses: `get_absolute_url()` (its page in this app, what a citation links to
when the row has no external URL of its own) and `catalogue_uri` (a stable `uedu://catalogue/…`
identifier built from natural keys, which survives a re-import where primary keys would not).
"""

from __future__ import annotations

import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, RegexValidator
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from .search import search_indexes

OPENALEX_AUTHOR_ID = re.compile(r"^A\d+$")
OPENALEX_WORK_ID = re.compile(r"^W\d+$")


def normalise_doi(value: str) -> str:
    """'https://doi.org/10.1/AbC' and 'doi:10.1/abc' are the same DOI: store '10.1/abc'.

    DOIs are case-insensitive by definition, so lower-casing makes them comparable."""
    doi = (value or "").strip().lower()
    for prefix in (
        "https://doi.org/",
        "http://doi.org/",
        "https://dx.doi.org/",
        "http://dx.doi.org/",
        "doi:",
    ):
        if doi.startswith(prefix):
            doi = doi[len(prefix) :]
    return doi.strip()


class CatalogueRow(models.Model):
    is_demo = models.BooleanField(
        _("demo row"),
        default=False,
        db_index=True,
        help_text=_("Invented sample data for demonstrations; labelled DEMO wherever it is shown."),
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        abstract = True

    @property
    def demo_mark(self) -> str:
        return " [DEMO]" if self.is_demo else ""


class University(CatalogueRow):
    slug = models.SlugField(_("slug"), max_length=60, unique=True)
    name = models.CharField(_("name"), max_length=200)
    name_en = models.CharField(_("English name"), max_length=200, blank=True)
    city = models.CharField(_("city"), max_length=80, blank=True)
    website = models.URLField(_("website"), blank=True)
    description = models.TextField(_("description"), blank=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("university")
        verbose_name_plural = _("universities")

    def __str__(self) -> str:
        return f"{self.name}{self.demo_mark}"

    def get_absolute_url(self) -> str:
        return reverse("catalogue:university", args=[self.slug])

    @property
    def catalogue_uri(self) -> str:
        return f"uedu://catalogue/university/{self.slug}"


class Course(CatalogueRow):
    class Level(models.TextChoices):
        UNDERGRADUATE = "undergraduate", _("Undergraduate")
        GRADUATE = "graduate", _("Graduate")
        GENERAL = "general", _("General education")

    university = models.ForeignKey(
        University, on_delete=models.CASCADE, related_name="courses", verbose_name=_("university")
    )
    # No slash: the code is part of the course page's URL.
    code = models.CharField(
        _("course code"),
        max_length=40,
        validators=[RegexValidator(r"^[^/]+$", _("A course code cannot contain '/'."))],
    )
    name = models.CharField(_("name"), max_length=200)
    name_en = models.CharField(_("English name"), max_length=200, blank=True)
    department = models.CharField(_("department"), max_length=200, blank=True)
    description = models.TextField(_("description"), blank=True)
    # One entry per week, in order: ["學習分析導論 Introduction to learning analytics", …].
    weekly_topics = models.JSONField(_("weekly topics"), default=list, blank=True)
    credits = models.PositiveSmallIntegerField(_("credits"), default=3, validators=[MaxValueValidator(20)])
    level = models.CharField(_("level"), max_length=16, choices=Level.choices, default=Level.UNDERGRADUATE)
    url = models.URLField(_("course page"), blank=True)

    class Meta:
        ordering = ["university__name", "code"]
        constraints = [
            models.UniqueConstraint(fields=["university", "code"], name="course_code_unique_per_university")
        ]
        verbose_name = _("course")
        verbose_name_plural = _("courses")

    def __str__(self) -> str:
        return f"{self.code} {self.name}{self.demo_mark}"

    def clean(self) -> None:
        topics = self.weekly_topics
        if not isinstance(topics, list) or not all(isinstance(t, str) and t.strip() for t in topics):
            raise ValidationError({"weekly_topics": _("Give a list of non-empty texts, one per week.")})

    def get_absolute_url(self) -> str:
        return reverse("catalogue:course", args=[self.university.slug, self.code])

    @property
    def catalogue_uri(self) -> str:
        return f"uedu://catalogue/course/{self.university.slug}/{self.code}"


class CurriculumTopic(CatalogueRow):
    """A topic of Taiwan's 12-year basic education curriculum (十二年國教課綱) for senior/junior high."""

    class Subject(models.TextChoices):
        MATH = "math", _("Mathematics")
        SCIENCE = "science", _("Natural science")
        INFORMATION_TECHNOLOGY = "information_technology", _("Information technology")

    class GradeBand(models.TextChoices):
        JUNIOR_HIGH = "7-9", _("Grades 7–9 (junior high)")
        SENIOR_HIGH = "10-12", _("Grades 10–12 (senior high)")

    curriculum_code = models.CharField(_("curriculum code"), max_length=40, unique=True)
    subject = models.CharField(_("subject"), max_length=32, choices=Subject.choices)
    grade_band = models.CharField(_("grade band"), max_length=8, choices=GradeBand.choices)
    topic = models.CharField(_("topic"), max_length=200)
    learning_goals = models.TextField(_("learning goals"))
    description = models.TextField(_("description"), blank=True)

    class Meta:
        ordering = ["subject", "grade_band", "curriculum_code"]
        verbose_name = _("high-school curriculum topic")
        verbose_name_plural = _("high-school curriculum topics")

    def __str__(self) -> str:
        return f"{self.curriculum_code} {self.topic}{self.demo_mark}"

    def get_absolute_url(self) -> str:
        return reverse("catalogue:curriculum", args=[self.curriculum_code])

    @property
    def catalogue_uri(self) -> str:
        return f"uedu://catalogue/curriculum/{self.curriculum_code}"


class ResearchCluster(CatalogueRow):
    slug = models.SlugField(_("slug"), max_length=60, unique=True)
    name = models.CharField(_("name"), max_length=200)
    name_en = models.CharField(_("English name"), max_length=200, blank=True)
    description = models.TextField(_("description"), blank=True)
    keywords = models.CharField(_("keywords"), max_length=400, blank=True, help_text=_("Comma-separated."))

    class Meta:
        ordering = ["name"]
        verbose_name = _("research cluster")
        verbose_name_plural = _("research clusters")

    def __str__(self) -> str:
        return f"{self.name}{self.demo_mark}"

    def get_absolute_url(self) -> str:
        return reverse("catalogue:cluster", args=[self.slug])

    @property
    def catalogue_uri(self) -> str:
        return f"uedu://catalogue/cluster/{self.slug}"


class Advisor(CatalogueRow):
    slug = models.SlugField(_("slug"), max_length=60, unique=True)
    name = models.CharField(_("name"), max_length=120)
    name_en = models.CharField(_("English name"), max_length=120, blank=True)
    title = models.CharField(_("position"), max_length=120, blank=True)
    university = models.ForeignKey(
        University,
        on_delete=models.PROTECT,
        related_name="advisors",
        null=True,
        blank=True,
        verbose_name=_("university"),
    )
    department = models.CharField(_("department"), max_length=200, blank=True)
    research_interests = models.TextField(_("research interests"), blank=True)
    profile_url = models.URLField(
        _("profile link"), blank=True, help_text=_("The advisor's official profile page.")
    )
    openalex_id = models.CharField(
        _("OpenAlex author id"),
        max_length=20,
        blank=True,
        validators=[RegexValidator(OPENALEX_AUTHOR_ID, _("An OpenAlex author id looks like A5023888391."))],
    )
    clusters = models.ManyToManyField(
        ResearchCluster, related_name="advisors", blank=True, verbose_name=_("research clusters")
    )

    class Meta:
        ordering = ["name"]
        verbose_name = _("advisor")
        verbose_name_plural = _("advisors")

    def __str__(self) -> str:
        return f"{self.name}{self.demo_mark}"

    def get_absolute_url(self) -> str:
        return reverse("catalogue:advisor", args=[self.slug])

    @property
    def link(self) -> str:
        """Where a citation of this advisor points: the official profile, else the page here."""
        return self.profile_url or self.get_absolute_url()

    @property
    def catalogue_uri(self) -> str:
        return f"uedu://catalogue/advisor/{self.slug}"


class PaperFields(CatalogueRow):
    title = models.CharField(_("title"), max_length=500)
    authors = models.TextField(_("authors"), blank=True, help_text=_("As printed, separated by semicolons."))
    year = models.PositiveSmallIntegerField(
        _("year"), null=True, blank=True, validators=[MaxValueValidator(2100)]
    )
    venue = models.CharField(_("venue"), max_length=300, blank=True)
    doi = models.CharField(
        _("DOI"), max_length=200, blank=True, help_text=_("Without the https://doi.org/ prefix.")
    )
    url = models.URLField(_("link"), max_length=500, blank=True)
    abstract = models.TextField(_("abstract"), blank=True)

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        self.doi = normalise_doi(self.doi)
        super().save(*args, **kwargs)

    @property
    def external_link(self) -> str:
        return self.url or (f"https://doi.org/{self.doi}" if self.doi else "")


class AdvisorPaper(PaperFields):
    advisor = models.ForeignKey(
        Advisor, on_delete=models.CASCADE, related_name="papers", verbose_name=_("advisor")
    )
    openalex_id = models.CharField(
        _("OpenAlex work id"),
        max_length=20,
        blank=True,
        validators=[RegexValidator(OPENALEX_WORK_ID, _("An OpenAlex work id looks like W2741809807."))],
    )
    cited_by_count = models.PositiveIntegerField(_("cited by"), null=True, blank=True)

    class Meta:
        ordering = ["-year", "title"]
        # The import is idempotent because of these: one row per advisor and OpenAlex work / DOI.
        constraints = [
            models.UniqueConstraint(
                fields=["advisor", "openalex_id"],
                condition=~Q(openalex_id=""),
                name="advisor_paper_unique_openalex",
            ),
            models.UniqueConstraint(
                fields=["advisor", "doi"], condition=~Q(doi=""), name="advisor_paper_unique_doi"
            ),
        ]
        verbose_name = _("advisor paper")
        verbose_name_plural = _("advisor papers")

    def __str__(self) -> str:
        return f"{self.title}{self.demo_mark}"

    def get_absolute_url(self) -> str:
        return reverse("catalogue:advisor", args=[self.advisor.slug]) + f"#paper-{self.pk}"

    @property
    def catalogue_uri(self) -> str:
        key = self.openalex_id or (f"doi:{self.doi}" if self.doi else str(self.pk))
        return f"uedu://catalogue/advisor/{self.advisor.slug}/paper/{key}"


class TeamPaper(PaperFields):
    """A paper by the Uedu team itself (about the platform and its research)."""

    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    keywords = models.CharField(_("keywords"), max_length=400, blank=True, help_text=_("Comma-separated."))

    class Meta:
        ordering = ["-year", "title"]
        # the fields selectors.team_papers searches
        indexes = search_indexes("cat_teampaper", ["title", "authors", "abstract", "keywords", "venue"])
        verbose_name = _("Uedu team paper")
        verbose_name_plural = _("Uedu team papers")

    def __str__(self) -> str:
        return f"{self.title}{self.demo_mark}"

    def get_absolute_url(self) -> str:
        return reverse("catalogue:team_paper", args=[self.slug])

    @property
    def catalogue_uri(self) -> str:
        return f"uedu://catalogue/team-paper/{self.slug}"


class PlatformDocument(CatalogueRow):
    """An internal platform document (guides, policies, course rules) for get_internal_docs.

    Who may read it is decided here, on the server, for every read: the tool, the page and the
    admin list all go through `selectors.documents_visible_to`."""

    class Visibility(models.TextChoices):
        PUBLIC = "public", _("Every signed-in user")
        CHANNEL = "channel", _("Members of one channel")
        STAFF = "staff", _("Platform staff only")

    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    title = models.CharField(_("title"), max_length=300)
    body = models.TextField(_("body"))
    visibility = models.CharField(
        _("visibility"), max_length=16, choices=Visibility.choices, default=Visibility.STAFF
    )
    channel = models.ForeignKey(
        "channels_app.Channel",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="platform_documents",
        verbose_name=_("channel"),
        help_text=_("Required when the visibility is one channel; empty otherwise."),
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, verbose_name=_("author")
    )

    class Meta:
        ordering = ["title"]
        # the fields selectors.search_documents searches
        indexes = search_indexes("cat_platformdoc", ["title", "body"])
        constraints = [
            # A channel document without a channel would be visible to nobody (or, worse, to a
            # query that forgot the channel); the database refuses it, not just the form.
            models.CheckConstraint(
                condition=(Q(visibility="channel") & Q(channel__isnull=False))
                | (~Q(visibility="channel") & Q(channel__isnull=True)),
                name="platform_document_channel_iff_channel_visibility",
            )
        ]
        verbose_name = _("platform document")
        verbose_name_plural = _("platform documents")

    def __str__(self) -> str:
        return f"{self.title}{self.demo_mark}"

    def clean(self) -> None:
        if self.visibility == self.Visibility.CHANNEL and self.channel_id is None:
            raise ValidationError({"channel": _("Choose the channel whose members may read this document.")})
        if self.visibility != self.Visibility.CHANNEL and self.channel_id is not None:
            raise ValidationError({"channel": _("Only documents visible to one channel name a channel.")})

    def get_absolute_url(self) -> str:
        return reverse("catalogue:document", args=[self.slug])

    @property
    def catalogue_uri(self) -> str:
        return f"uedu://catalogue/document/{self.slug}"
