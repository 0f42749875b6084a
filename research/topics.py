"""Whether two short texts (questions, sub-questions) ask about the same thing, for grouping what
the course materials fail to answer into topics (research.services.material_coverage).

Two measures, because the product's local embedding model (all-MiniLM-L6-v2) was trained on
English only: it cannot tell Chinese questions apart by meaning.

- **Embeddings**: the cosine of the two texts' channels_app vectors, when the model understands
  both texts' language: English with the local model; any language with a remote one
  (UEDU_EMBEDDING_BACKEND=openai, assumed multilingual), and only between vectors of one model.
- **Wording**: the cosine of the texts' terms, each weighted by how rare it is among the channel's
  topics (inverse document frequency), so that a course's own subject ("學習分析" in a learning
  analytics course) weighs little and what a question is specifically about weighs much. Chinese
  has no spaces: its terms are character bigrams ("學習分析" → 學習, 習分, 分析), the usual unit
  of Chinese search without a segmenter; Latin script counts words. Question words (什麼, 如何,
  what, how…) are left out. Used for every pair the embeddings cannot judge, and for texts stored
  without a vector (the embedding service was down).

A text joins the topic whose first text it is most similar to, if that similarity reaches its
measure's threshold; otherwise it starts a topic of its own. Grouping by bigrams is approximate
(a paraphrase that shares few characters stays apart); tests/research/test_topics.py pins what
it joins and what it keeps apart, in both languages.

No Django here: plain functions and one small index the tests call directly (numpy, which
pgvector's client already brings, for the vectors)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_RUNS = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+|[A-Za-z0-9]+")

# Cosine of two embeddings from which they ask the same thing. all-MiniLM-L6-v2 puts paraphrases
# of a question at 0.82-0.96, two questions on one subject asking different things ("What is
# learning analytics?" / "What ethical issues does it raise?") at 0.72, unrelated ones below 0.3,
# and any two Chinese questions at 0.7-0.75 (it reads no Chinese): tests/research/test_topics.py.
EMBEDDING_THRESHOLD = 0.78
# Weighted cosine of two texts' terms from which they ask the same thing.
WORDING_THRESHOLD = 0.3

# Words that say a text is a question, not what it asks about: Chinese phrases are cut out of the
# text before it is cut into bigrams (so "什麼是學習分析" gives no "是學"), English words are dropped.
_QUESTION_PHRASES = re.compile(
    "|".join(
        sorted(
            "什麼是 是什麼 為什麼 有哪些 有什麼 甚麼 什麼 如何 為何 哪些 哪個 是否 有何 怎麼 怎樣 多少 嗎 呢".split(),
            key=len,
            reverse=True,
        )
    )
)
_QUESTION_WORDS = frozenset(
    """
    what which who whom whose when where why how is are was were do does did can could should would
    the a an of in on for to and or with about between from by as at be it its this that these those
    """.split()
)


def language_of(text: str) -> str:
    """'zh' when the text holds Chinese characters, else 'en' (the two languages of the product)."""
    return "zh" if _CJK.search(text or "") else "en"


def terms(text: str) -> frozenset[str]:
    """A text's terms: character bigrams of its Chinese runs (a lone character counts as itself),
    lower-cased words of its Latin runs; question words left out."""
    found: set[str] = set()
    for run in _RUNS.findall(_QUESTION_PHRASES.sub(" ", text or "")):
        if _CJK.match(run):
            found.update([run] if len(run) == 1 else (run[i : i + 2] for i in range(len(run) - 1)))
        elif run.lower() not in _QUESTION_WORDS:
            found.add(run.lower())
    return frozenset(found)


@dataclass(frozen=True)
class Text:
    """One text to group: `key` names it for the caller (a row id)."""

    key: int
    text: str
    vector: Sequence[float] | None = None
    model: str = ""  # the embedding model that made `vector`

    @property
    def language(self) -> str:
        return language_of(self.text)

    @property
    def terms(self) -> frozenset[str]:
        return terms(self.text)


class TopicIndex:
    """The first text of each topic so far; `match` finds the topic a new text belongs to.
    `local_model`: the embeddings come from the English-only local model. A channel's topics
    number in the hundreds or thousands over a term, so the embeddings are compared as one matrix
    product per model (numpy), not pair by pair."""

    def __init__(self, firsts: Sequence[Text] = (), *, local_model: bool):
        self.local_model = local_model
        self.firsts: list[Text] = []
        self._terms: list[frozenset[str]] = []
        self._frequency: Counter[str] = Counter()
        # model -> (positions in self.firsts, their unit vectors as rows)
        self._vectors: dict[str, tuple[list[int], np.ndarray]] = {}
        for text in firsts:
            self.add(text)

    def add(self, text: Text) -> None:
        """`text` starts a topic."""
        position = len(self.firsts)
        self.firsts.append(text)
        self._terms.append(text.terms)
        self._frequency.update(text.terms)
        if self._understood(text):
            unit = _unit(text.vector)
            positions, matrix = self._vectors.get(text.model, ([], np.empty((0, unit.size))))
            if matrix.shape[1] == unit.size:
                self._vectors[text.model] = (positions + [position], np.vstack([matrix, unit]))

    def _weight(self, term: str) -> float:
        n = len(self.firsts)
        return math.log((1 + n) / (1 + self._frequency[term])) + 1

    def wording(self, a: frozenset[str], b: frozenset[str]) -> float:
        """Cosine of the two term sets, each term weighted by its rarity among the topics."""
        if not a or not b:
            return 0.0
        weight = {t: self._weight(t) ** 2 for t in a | b}
        shared = sum(weight[t] for t in a & b)
        return shared / math.sqrt(sum(weight[t] for t in a) * sum(weight[t] for t in b))

    def _understood(self, text: Text) -> bool:
        return text.vector is not None and (not self.local_model or text.language == "en")

    def margins(self, text: Text) -> list[float]:
        """For each topic, how far above its threshold the suited measure puts `text` and the
        topic's first text (below 0: another topic)."""
        by_embedding: dict[int, float] = {}
        if self._understood(text) and text.model in self._vectors:
            positions, matrix = self._vectors[text.model]
            unit = _unit(text.vector)
            if unit.size == matrix.shape[1]:
                by_embedding = dict(zip(positions, (matrix @ unit - EMBEDDING_THRESHOLD).tolist()))
        terms_ = text.terms
        return [
            by_embedding[i] if i in by_embedding else self.wording(terms_, first_terms) - WORDING_THRESHOLD
            for i, first_terms in enumerate(self._terms)
        ]

    def match(self, text: Text) -> int | None:
        """The key of the first text of the topic `text` belongs to, or None (a topic of its own)."""
        margins = self.margins(text)
        if not margins:
            return None
        best = max(range(len(margins)), key=margins.__getitem__)
        return self.firsts[best].key if margins[best] >= 0 else None


def _unit(vector: Sequence[float]) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array
