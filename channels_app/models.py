"""Uedu course channels (頻道): who is in them, what the teacher switched on, and the chat log."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from pgvector.django import VectorField


class Channel(models.Model):
    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    name = models.CharField(_("course name"), max_length=200)
    course_code = models.CharField(_("course code"), max_length=40, blank=True)
    description = models.TextField(_("description"), blank=True)
    syllabus = models.TextField(_("syllabus"), blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="owned_channels",
        verbose_name=_("owner (teacher)"),
    )

    # Channel settings, section 6 "Deep Research". Off until the teacher switches it on.
    deep_research_enabled = models.BooleanField(_("Deep Research enabled"), default=False)
    web_tools_enabled = models.BooleanField(_("web tools enabled"), default=False)
    auto_suggest_threshold = models.FloatField(
        _("auto-suggest threshold"),
        default=0.7,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text=_("Suggest Deep Research when the judge's confidence is at least this value (0–1)."),
    )

    class PlanReview(models.TextChoices):
        OFF = "off", _("Off: research starts right after planning")
        OPTIONAL = "optional", _("Optional: the student may edit the plan for a short while")
        REQUIRED = "required", _("Required: the research waits for the student to confirm the plan")

    plan_review = models.CharField(
        _("plan review"), max_length=12, choices=PlanReview.choices, default=PlanReview.OFF
    )
    web_allowed_domains = models.TextField(
        _("allowed web domains"),
        blank=True,
        help_text=_("One domain per line. When set, web sources from other domains are not used."),
    )
    web_denied_domains = models.TextField(
        _("denied web domains"),
        blank=True,
        help_text=_("One domain per line. Web sources from these domains are never used."),
    )
    scholarly_extra_countries = models.CharField(
        _("extra countries for scholarly search"),
        max_length=200,
        blank=True,
        help_text=_(
            "Two-letter country codes, separated by commas, searched besides the platform's default countries."
        ),
    )
    system_prompt = models.TextField(
        _("system prompt"),
        blank=True,
        help_text=_("Instructions for the channel's assistant, including any usage rules for students."),
    )

    # The languages its ready materials are written in ("en", "zh"), kept by indexing
    # (materials.bilingual.refresh_languages): a question in a language not alone here is
    # searched in the others too.
    material_languages = ArrayField(
        models.CharField(max_length=8), verbose_name=_("languages of its materials"), default=list, blank=True
    )

    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("channel")
        verbose_name_plural = _("channels")

    def __str__(self) -> str:
        return f"{self.name} ({self.slug})"

    @staticmethod
    def _domains(text: str) -> tuple[str, ...]:
        return tuple(line.strip().lower().lstrip(".") for line in text.splitlines() if line.strip())

    @property
    def allowed_domains(self) -> tuple[str, ...]:
        return self._domains(self.web_allowed_domains)

    @property
    def denied_domains(self) -> tuple[str, ...]:
        return self._domains(self.web_denied_domains)

    @property
    def extra_countries(self) -> tuple[str, ...]:
        codes = (c.strip().lower() for c in self.scholarly_extra_countries.replace("\n", ",").split(","))
        return tuple(dict.fromkeys(c for c in codes if len(c) == 2 and c.isalpha()))


class Membership(models.Model):
    class Role(models.TextChoices):
        TEACHER = "teacher", _("Teacher")
        TA = "ta", _("Teaching assistant")
        SUPER_TA = "super_ta", _("Super TA")
        STUDENT = "student", _("Student")

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(_("role"), max_length=16, choices=Role.choices, default=Role.STUDENT)
    joined_at = models.DateTimeField(_("joined"), auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "channel"], name="one_membership_per_channel")]
        indexes = [models.Index(fields=["channel", "role"])]
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")

    def __str__(self) -> str:
        return f"{self.user} @ {self.channel.slug} ({self.role})"


class SuperTaNda(models.Model):
    """The non-disclosure agreement a Super TA signed for one channel, kept on file by a platform
    admin (the IRB delegate). Only while a row exists for (user, channel) does that channel's
    Super TA membership open students' research content (channels_app.access); without it the
    Super TA is an ordinary TA there. Per channel, because the agreement names the course."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="super_ta_ndas",
        verbose_name=_("Super TA"),
    )
    channel = models.ForeignKey(
        Channel, on_delete=models.CASCADE, related_name="super_ta_ndas", verbose_name=_("channel")
    )
    signed_on = models.DateField(_("NDA signed on"))
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("recorded by"),
    )
    recorded_at = models.DateTimeField(_("recorded"), auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "channel"], name="one_super_ta_nda_per_channel")
        ]
        verbose_name = _("Super TA NDA")
        verbose_name_plural = _("Super TA NDAs")

    def __str__(self) -> str:
        return f"{self.user} @ {self.channel.slug} ({self.signed_on})"


class ChatLog(models.Model):
    """One row per message (source table `classroomgpt_my_log`).

    A Deep Research run writes a request row when it starts and a response row
    (type 'deep_research', linked to the task) when it ends, so the conversation
    reloads exactly as it was seen live."""

    class Kind(models.TextChoices):
        REQUEST = "request", _("Request")
        RESPONSE = "response", _("Response")

    class Type(models.TextChoices):
        CHAT = "chat", _("ClassroomGPT chat")
        DEEP_RESEARCH = "deep_research", _("Deep Research")

    class Bloom(models.TextChoices):
        REMEMBER = "remember", _("Remember")
        UNDERSTAND = "understand", _("Understand")
        APPLY = "apply", _("Apply")
        ANALYZE = "analyze", _("Analyze")
        EVALUATE = "evaluate", _("Evaluate")
        CREATE = "create", _("Create")

    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="chat_logs")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chat_logs")
    kind = models.CharField(_("kind"), max_length=16, choices=Kind.choices)
    type = models.CharField(_("type"), max_length=16, choices=Type.choices, default=Type.CHAT)
    content = models.TextField(_("content"))
    in_reply_to = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="replies",
        verbose_name=_("in reply to"),
    )
    deep_research_task = models.ForeignKey(
        "research.ResearchTask",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="chat_logs",
        db_column="deep_research_task_id",
    )
    bloom_level = models.CharField(_("Bloom level"), max_length=16, choices=Bloom.choices, blank=True)
    bloom_confidence = models.FloatField(_("Bloom confidence"), null=True, blank=True)
    bloom_rationale = models.TextField(_("Bloom rationale"), blank=True)
    bloom_attempts = models.PositiveSmallIntegerField(default=0)
    # An ordinary chat answer's numbered sources (the [N] of its text), in the shape of a research
    # answer's citations, so the bubble shows them the same way. Empty for answers without tools.
    citations_json = models.JSONField(_("citations"), default=list, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True, db_index=True)

    class Meta:
        db_table = "classroomgpt_my_log"
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["channel", "user", "created_at"])]
        verbose_name = _("chat log row")
        verbose_name_plural = _("chat log")

    def __str__(self) -> str:
        return f"{self.kind}/{self.type} #{self.pk} by {self.user_id}"


def material_upload_to(material: Material, filename: str) -> str:
    # Content-addressed per channel: a path never collides and is not guessable from the name.
    return f"materials/{material.channel_id}/{material.sha256}/{filename}"


class Material(models.Model):
    """A file a teacher uploaded to a channel (PDF, DOCX or PPTX), indexed into MaterialChunk rows.

    One row per (channel, content hash): uploading the same bytes again returns this row.
    A material is searchable only when `ready`; a `failed` one has a readable `error` and no chunks."""

    class Kind(models.TextChoices):
        PDF = "pdf", "PDF"
        DOCX = "docx", "DOCX"
        PPTX = "pptx", "PPTX"

    class Status(models.TextChoices):
        PENDING = "pending", _("Waiting to be indexed")
        PROCESSING = "processing", _("Indexing")
        READY = "ready", _("Ready")
        FAILED = "failed", _("Failed")

    class ErrorCode(models.TextChoices):
        WRONG_TYPE = "wrong_type", _("Unsupported or mismatching file type")
        TOO_LARGE = "too_large", _("File too large")
        EMPTY = "empty", _("No extractable text")
        ENCRYPTED = "encrypted", _("Password-protected file")
        CORRUPT = "corrupt", _("Damaged or unreadable file")
        TOO_MANY_CHUNKS = "too_many_chunks", _("Too much text")
        EMBEDDING = "embedding", _("Embedding service failed")
        MISSING_FILE = "missing_file", _("Stored file missing")
        INTERNAL = "internal", _("Unexpected indexing error")

    channel = models.ForeignKey(
        Channel, on_delete=models.CASCADE, related_name="materials", verbose_name=_("channel")
    )
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("uploaded by"),
    )
    # Refused uploads keep their row (with the error) but not their bytes.
    file = models.FileField(_("file"), upload_to=material_upload_to, max_length=400, blank=True)
    original_name = models.CharField(_("file name"), max_length=255)
    kind = models.CharField(_("type"), max_length=8, choices=Kind.choices, blank=True)
    size_bytes = models.BigIntegerField(_("size (bytes)"))
    sha256 = models.CharField(_("SHA-256"), max_length=64)

    status = models.CharField(
        _("status"), max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    error_code = models.CharField(_("error type"), max_length=20, choices=ErrorCode.choices, blank=True)
    error = models.TextField(_("error"), blank=True)
    # Pages (PDF), slides (PPTX) or heading sections (DOCX) that held text.
    unit_count = models.PositiveIntegerField(_("pages / slides / sections"), default=0)
    chunk_count = models.PositiveIntegerField(_("chunks"), default=0)
    embedding_model = models.CharField(_("embedding model"), max_length=200, blank=True)

    created_at = models.DateTimeField(_("uploaded"), auto_now_add=True)
    indexed_at = models.DateTimeField(_("indexed"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["channel", "sha256"], name="one_material_per_content_per_channel")
        ]
        verbose_name = _("material")
        verbose_name_plural = _("materials")

    def __str__(self) -> str:
        return f"{self.original_name} ({self.channel.slug if self.channel_id else '?'})"

    @property
    def unit_label(self) -> str:
        """How a location inside this file is written: 'p.' (PDF), 'slide' (PPTX), '§' (DOCX section)."""
        return {self.Kind.PPTX: "slide", self.Kind.DOCX: "§"}.get(self.kind, "p.")

    def locator(self, page: int) -> str:
        return f"{self.original_name} {self.unit_label} {page}"


class MaterialChunk(models.Model):
    """A passage of a material with its page (slide, section) number, its embedding and its lexical form.

    `channel` is denormalised from the material so that every search filters on one column of
    this table. The embedding column is an untyped `vector`: its dimension follows the backend
    (`embedding_dim`), and each dimension in use gets its own partial HNSW expression index
    (see materials.vector_index)."""

    material = models.ForeignKey(Material, on_delete=models.CASCADE, related_name="chunks")
    # No index of its own: (channel, embedding_dim) below serves every lookup by channel.
    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="+", db_index=False)
    ordinal = models.PositiveIntegerField(_("position"))
    page = models.PositiveIntegerField(_("page / slide / section"))
    text = models.TextField(_("text"))
    # The text as PostgreSQL's full-text parser should see it: CJK runs rewritten as overlapping
    # character bigrams (the parser would otherwise keep a whole Chinese sentence as one word).
    search_text = models.TextField()
    search_vector = models.GeneratedField(
        expression=SearchVector("search_text", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    embedding = VectorField()
    embedding_model = models.CharField(max_length=200)
    embedding_dim = models.PositiveSmallIntegerField()
    # The languages the passage is written in, by script (materials.languages).
    languages = ArrayField(models.CharField(max_length=8), default=list, blank=True)

    class Meta:
        ordering = ["material", "ordinal"]
        constraints = [models.UniqueConstraint(fields=["material", "ordinal"], name="one_chunk_per_position")]
        indexes = [
            models.Index(fields=["channel", "embedding_dim"], name="chunk_channel_dim"),
            GinIndex(fields=["search_vector"], name="chunk_search_vector_gin"),
        ]
        verbose_name = _("material chunk")
        verbose_name_plural = _("material chunks")

    def __str__(self) -> str:
        return f"{self.material_id}#{self.ordinal} p.{self.page}"


class ChannelTermShare(models.Model):
    """For a big channel: the share of its chunks that hold each lexeme (above a floor of 0.1 %).

    Retrieval's common-terms rule reads these instead of the platform-wide statistics: a course
    about music theory holds "counterpoint" in a third of its passages although the platform as
    a whole hardly does, and a lexical side selecting on it would rank thousands of the channel's
    passages per query. Rewritten whole by `materials.term_shares.refresh` when a material of
    the channel is indexed or deleted; channels below UEDU_RETRIEVAL_CHANNEL_TERMS_MIN_ROWS have
    none and use the platform-wide statistics."""

    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="+", db_index=False)
    lexeme = models.TextField()
    share = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["channel", "lexeme"], name="one_share_per_channel_lexeme")
        ]
        verbose_name = _("channel term share")
        verbose_name_plural = _("channel term shares")

    def __str__(self) -> str:
        return f"{self.channel_id}:{self.lexeme}={self.share:.3f}"


class GlossaryTerm(models.Model):
    """A term one of the channel's materials writes in both languages (學習分析（learning
    analytics）), mined by code when the material is indexed (materials.glossary). A search
    whose query has no model translation carries it into the materials' other language with
    these. Deleted with its material."""

    material = models.ForeignKey(Material, on_delete=models.CASCADE, related_name="glossary_terms")
    # No index of its own: (channel, …) below serves every lookup by channel.
    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="+", db_index=False)
    zh = models.CharField(_("Chinese"), max_length=40)
    en = models.CharField(_("English"), max_length=120)

    class Meta:
        ordering = ["material", "id"]
        constraints = [
            models.UniqueConstraint(fields=["material", "zh", "en"], name="one_glossary_term_per_material")
        ]
        indexes = [models.Index(fields=["channel", "zh"], name="glossary_channel")]
        verbose_name = _("glossary term")
        verbose_name_plural = _("glossary terms")

    def __str__(self) -> str:
        return f"{self.zh} = {self.en}"
