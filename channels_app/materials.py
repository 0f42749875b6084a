"""Channel materials: the business rules of uploading, indexing, re-indexing and re-embedding.

Invariants:
- one Material per (channel, content hash): uploading the same bytes again returns the existing row;
- a `failed` material has a readable `error` and no chunks; a file is never half indexed, because
  chunks are written in one transaction after extraction and embedding have all succeeded;
- refused uploads (wrong type, too large, empty) keep their row and error but not their bytes.
"""

from __future__ import annotations

import hashlib
import logging
import unicodedata
from pathlib import PurePath

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.template.defaultfilters import filesizeformat
from django.utils import timezone
from django.utils.translation import gettext as _

from materials import (
    bilingual,
    channel_text_index,
    embeddings,
    glossary,
    languages,
    lexical,
    retrieval,
    term_shares,
    vector_index,
)
from materials.chunking import chunk_units
from materials.extraction import MaterialError, ParserBusy, extract, kind_from_name, sniff
from uedu_dr import jobs

from .models import Channel, GlossaryTerm, Material, MaterialChunk

log = logging.getLogger(__name__)
# When every parse slot stayed taken (materials.extraction.ParserBusy), the job comes back after this.
BUSY_RETRY_SECONDS = 60


def _clean_name(name: str) -> str:
    """The file's own name: no directories, no control characters, at most 255 characters."""
    base = PurePath(name.replace("\\", "/")).name
    base = "".join(ch for ch in base if unicodedata.category(ch)[0] != "C").strip()
    if len(base) > 255:
        stem, dot, ext = base.rpartition(".")
        base = (stem[: 254 - len(ext)] + dot + ext) if dot else base[:255]
    return base or "upload"


def _read(uploaded_file, keep: bool) -> tuple[str, bytes]:
    """SHA-256 of the upload, and its bytes when `keep` (oversized files are hashed, not held)."""
    digest = hashlib.sha256()
    parts = []
    uploaded_file.seek(0)
    for part in uploaded_file.chunks():
        digest.update(part)
        if keep:
            parts.append(part)
    return digest.hexdigest(), b"".join(parts)


def material_upload(*, channel: Channel, user, uploaded_file, enqueue: bool = True) -> tuple[Material, bool]:
    """Store an uploaded file as a material of `channel` and queue its indexing.

    Returns (material, created). The same content already in the channel returns the existing
    material unchanged (created=False). A file that cannot be indexed (wrong or mismatching type,
    too large, empty) is recorded as `failed` with the reason, and its bytes are not kept."""
    name = _clean_name(uploaded_file.name or "")
    size = uploaded_file.size
    limit = settings.UEDU_MATERIALS_MAX_UPLOAD_BYTES
    sha256, data = _read(uploaded_file, keep=size <= limit)

    existing = Material.objects.filter(channel=channel, sha256=sha256).first()
    if existing is not None:
        return existing, False

    kind = kind_from_name(name)
    material = Material(
        channel=channel,
        uploaded_by=user if user is not None and user.is_authenticated else None,
        original_name=name,
        kind=kind if kind in Material.Kind.values else "",
        size_bytes=size,
        sha256=sha256,
    )
    try:
        if size > limit:
            raise MaterialError(
                "too_large",
                _("The file is %(size)s; the limit is %(limit)s.")
                % {"size": filesizeformat(size), "limit": filesizeformat(limit)},
            )
        material.kind = sniff(name, data)
    except MaterialError as exc:
        material.status = Material.Status.FAILED
        material.error_code, material.error = exc.code, exc.message
        data = b""

    try:
        with transaction.atomic():
            material.save()
            if data:
                material.file.save(name, ContentFile(data), save=True)
    except IntegrityError:
        # The same file arrived twice at once; the other upload won and is the material.
        if material.file:
            material.file.storage.delete(material.file.name)
        return Material.objects.get(channel=channel, sha256=sha256), False

    if enqueue and material.status == Material.Status.PENDING:
        _enqueue(material.pk)
    return material, True


def _enqueue(material_id: int) -> None:
    # After commit: the worker must find the row (and the file) it is asked to index.
    transaction.on_commit(lambda: jobs.send(jobs.INDEX_MATERIAL, material_id))


def material_reindex(material: Material) -> bool:
    """Queue a fresh extraction and embedding of a stored file. False when there is no file to
    index (an upload that was refused: upload a corrected file instead)."""
    if not material.file:
        return False
    Material.objects.filter(pk=material.pk).update(status=Material.Status.PENDING, error_code="", error="")
    material.refresh_from_db()
    _enqueue(material.pk)
    return True


def material_delete(material: Material) -> None:
    """Delete the material; its chunks go with it (FK cascade), its file after commit (signals)."""
    channel_id = material.channel_id
    material.delete()
    _refresh_term_shares(channel_id)
    bilingual.refresh_languages(channel_id)


# --------------------------------------------------------------------------- indexing (the Celery job)


def _fail(material_id: int, code: str, message: str) -> None:
    with transaction.atomic():
        updated = Material.objects.filter(pk=material_id).update(
            status=Material.Status.FAILED, error_code=code, error=message, chunk_count=0, unit_count=0
        )
        if updated:
            MaterialChunk.objects.filter(material_id=material_id).delete()
            GlossaryTerm.objects.filter(material_id=material_id).delete()


def index_material(material_id: int) -> Material | None:
    """Extract, chunk, embed and store one material. Safe to call twice or for a deleted row.

    Only a `pending` material is claimed (a conditional UPDATE), so two workers never index the
    same file at once. Returns the material as stored, or None when there was nothing to do."""
    claimed = Material.objects.filter(pk=material_id, status=Material.Status.PENDING).update(
        status=Material.Status.PROCESSING
    )
    if not claimed:
        log.info("material %s is gone or not pending; nothing to index", material_id)
        return None
    material = Material.objects.filter(pk=material_id).first()
    if material is None:
        return None
    try:
        try:
            with material.file.open("rb") as handle:
                data = handle.read()
        except (FileNotFoundError, ValueError):
            raise MaterialError("missing_file", _("The stored file is missing; upload it again.")) from None
        units = extract(material.kind, data)
        chunks = chunk_units(
            units,
            max_tokens=settings.UEDU_MATERIALS_CHUNK_TOKENS,
            overlap_tokens=settings.UEDU_MATERIALS_CHUNK_OVERLAP_TOKENS,
        )
        if len(chunks) > settings.UEDU_MATERIALS_MAX_CHUNKS:
            raise MaterialError(
                "too_many_chunks",
                _(
                    "The file holds too much text (%(count)s passages; the limit is %(limit)s). Split it into smaller files."
                )
                % {"count": len(chunks), "limit": settings.UEDU_MATERIALS_MAX_CHUNKS},
            )
        try:
            vectors = embeddings.embed_texts([chunk.text for chunk in chunks])
        except embeddings.EmbeddingError as exc:
            raise MaterialError("embedding", _("Embedding failed: %(detail)s") % {"detail": exc}) from exc
    except ParserBusy:
        # Nothing is wrong with the file: every parse slot stayed taken. Back in the queue.
        Material.objects.filter(pk=material_id, status=Material.Status.PROCESSING).update(
            status=Material.Status.PENDING
        )
        jobs.send(jobs.INDEX_MATERIAL, material_id, countdown=BUSY_RETRY_SECONDS)
        log.warning(
            "material %s waits for a parse slot; indexing again in %ss", material_id, BUSY_RETRY_SECONDS
        )
        return Material.objects.filter(pk=material_id).first()
    except MaterialError as exc:
        _fail(material_id, exc.code, exc.message)
        bilingual.refresh_languages(material.channel_id)  # a re-index that failed took its passages
        return Material.objects.filter(pk=material_id).first()
    except Exception as exc:  # a bug or an outage: record it rather than leave the row "processing"
        log.exception("indexing material %s failed", material_id)
        _fail(
            material_id,
            "internal",
            _("Indexing failed unexpectedly (%(detail)s). Try re-indexing.") % {"detail": type(exc).__name__},
        )
        return Material.objects.filter(pk=material_id).first()

    # The file's own bilingual term pairs, read from the extracted pages, whose line breaks
    # still set titles and list items apart (chunking joins lines).
    terms = {(t.zh, t.en.lower()): t for unit in units for t in glossary.mine(unit.text)}
    model, dim = embeddings.model_name(), embeddings.dimension()
    with transaction.atomic():
        # Lock the row: if it was deleted or queued again while we worked, our result is stale.
        current = (
            Material.objects.select_for_update()
            .filter(pk=material_id, status=Material.Status.PROCESSING)
            .first()
        )
        if current is None:
            return None
        MaterialChunk.objects.filter(material_id=material_id).delete()
        MaterialChunk.objects.bulk_create(
            [
                MaterialChunk(
                    material_id=material_id,
                    channel_id=current.channel_id,
                    ordinal=ordinal,
                    page=chunk.page,
                    text=chunk.text,
                    search_text=lexical.search_text(chunk.text),
                    embedding=vector,
                    embedding_model=model,
                    embedding_dim=dim,
                    languages=languages.languages_of(chunk.text),
                )
                for ordinal, (chunk, vector) in enumerate(zip(chunks, vectors))
            ],
            batch_size=500,
        )
        GlossaryTerm.objects.filter(material_id=material_id).delete()
        GlossaryTerm.objects.bulk_create(
            [
                GlossaryTerm(material_id=material_id, channel_id=current.channel_id, zh=t.zh, en=t.en)
                for t in list(terms.values())[: glossary.MAX_TERMS]
            ]
        )
        bilingual.refresh_languages(current.channel_id)
        current.status = Material.Status.READY
        current.error_code, current.error = "", ""
        current.unit_count = len({chunk.page for chunk in chunks})
        current.chunk_count = len(chunks)
        current.embedding_model = model
        current.indexed_at = timezone.now()
        current.save(
            update_fields=[
                "status",
                "error_code",
                "error",
                "unit_count",
                "chunk_count",
                "embedding_model",
                "indexed_at",
            ]
        )
    _ensure_channel_index(dim, current.channel_id)
    _refresh_term_shares(current.channel_id)
    return current


def _refresh_term_shares(channel_id: int) -> None:
    """The channel's own lexeme shares (materials.term_shares) follow its materials. Searches
    work without them (on the platform's statistics), so a failure is logged, not raised."""
    try:
        term_shares.refresh(channel_id)
    except Exception:
        log.exception("could not refresh the term shares of channel %s", channel_id)


def _ensure_channel_index(dim: int, channel_id: int) -> None:
    """A channel that has grown past UEDU_RETRIEVAL_CHANNEL_INDEX_MIN_ROWS gets its own HNSW and GIN
    indexes (docs/retrieval.md). Searches work without it (through the shared index), so a failure is
    logged, not raised: the next indexed material tries again."""
    try:
        if vector_index.ensure_channel_index(dim, channel_id):
            retrieval.forget_strategies()
    except Exception:
        log.exception("could not create the HNSW index of channel %s", channel_id)
    # Its own full-text index too (materials.channel_text_index); without it the lexical side
    # reads the platform-wide one, slower but correct.
    try:
        channel_text_index.ensure(channel_id)
    except Exception:
        log.exception("could not create the full-text index of channel %s", channel_id)


# --------------------------------------------------------------------------- re-embedding (backend change)


def reembed_materials(*, force: bool = False, log_line=lambda line: None) -> dict:
    """Re-embed the chunks of every ready material with the configured backend.

    Each material is re-embedded as a whole and written in one transaction; one that fails keeps
    its previous vectors and is reported. Then the HNSW index for the new dimension is created and
    indexes of dimensions no chunk uses any more are dropped."""
    model, dim = embeddings.model_name(), embeddings.dimension()
    done, skipped, failed = 0, 0, []
    for material in Material.objects.filter(status=Material.Status.READY).order_by("pk").iterator():
        chunks = list(
            MaterialChunk.objects.filter(material=material)
            .order_by("ordinal")
            .only("pk", "text", "embedding_model", "embedding_dim")
        )
        if not force and all(c.embedding_model == model and c.embedding_dim == dim for c in chunks):
            skipped += 1
            continue
        try:
            vectors = embeddings.embed_texts([c.text for c in chunks])
        except embeddings.EmbeddingError as exc:
            failed.append((material.pk, str(exc)))
            log_line(f"material {material.pk} ({material.original_name}): {exc}")
            continue
        for chunk, vector in zip(chunks, vectors):
            chunk.embedding, chunk.embedding_model, chunk.embedding_dim = vector, model, dim
        with transaction.atomic():
            MaterialChunk.objects.bulk_update(
                chunks, ["embedding", "embedding_model", "embedding_dim"], batch_size=500
            )
            Material.objects.filter(pk=material.pk).update(embedding_model=model)
        done += 1
        log_line(f"material {material.pk} ({material.original_name}): {len(chunks)} chunks re-embedded")
    created = vector_index.ensure_index(dim)
    for index_dim, channel_id in vector_index.channels_needing_own_index():
        _ensure_channel_index(index_dim, channel_id)
    dropped = vector_index.drop_unused_indexes(keep=dim) if not failed else []
    return {
        "model": model,
        "dimension": dim,
        "reembedded": done,
        "skipped": skipped,
        "failed": failed,
        "index_created": created,
        "indexes_dropped": dropped,
    }
