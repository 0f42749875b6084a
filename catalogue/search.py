"""Text search over catalogue rows on PostgreSQL, for Chinese and English alike.

PostgreSQL's full-text parser has no Chinese word segmentation: '教育資料科學' is one token, so a
query for '資料科學' would never match it. We therefore match Chinese/Japanese/Korean text by
overlapping character bigrams (ILIKE), the classic CJK search technique, and Latin words both by
ILIKE and by English full-text search (which adds stemming: 'analytics' finds 'analytic').
A row's score is the number of query terms it contains plus its full-text rank.

The match is written so that indexes can answer it (`search_indexes`; the embedded PostgreSQL has
no pg_trgm): CJK bigrams through a GIN index on the array of the row's bigrams
(`uedu_cjk_bigrams`, a SQL function of migration catalogue 0002), Latin words through a GIN
index on the English full-text vector. A Latin word therefore matches a whole word (stemmed),
not a piece of a longer one."""

from __future__ import annotations

import operator
import re
from functools import reduce

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector, SearchVectorField
from django.db.models import (
    BooleanField,
    CharField,
    ExpressionWrapper,
    F,
    FloatField,
    Func,
    Q,
    QuerySet,
    TextField,
    Value,
)
from django.db.models.functions import Cast, Coalesce

# Han (incl. extension A and compatibility), kana and hangul.
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]+")
_WORD = re.compile(r"[^\W_]+")
MAX_TERMS = 24  # a long question must not become a hundred-clause query
# The full-text configuration of the index, the query's vector and the query itself: they must agree.
FTS_CONFIG = "english"

# Output fields shared by every query, as Django's own expressions share theirs (class attributes):
# a field built per expression is ~25 us, and a ranked query over six fields built ~50 of them
# (measured: docs/bench-history.md). `EMPTY` is the Value("") Django would build, typed up front.
TEXT = TextField()
EMPTY = Value("", output_field=CharField())
_BOOLEAN = BooleanField()


class _JoinedText(Func):
    """The fields joined as text, exactly as SearchVector joins them (each coalesced to '', a
    non-text field cast), so that an index expression and a query's expression agree."""

    arg_joiner = " || ' ' || "

    def _as_text(self) -> Func:
        clone = self.copy()
        clone.set_source_expressions(
            [
                Coalesce(e if isinstance(e.output_field, (CharField, TextField)) else Cast(e, TEXT), EMPTY)
                for e in clone.get_source_expressions()
            ]
        )
        return clone


class CJKBigrams(_JoinedText):
    """uedu_cjk_bigrams(f1 || ' ' || f2 …): the distinct CJK character pairs of the fields."""

    function = "uedu_cjk_bigrams"
    output_field = ArrayField(TextField())

    def as_sql(self, compiler, connection, **extra):
        return Func.as_sql(self._as_text(), compiler, connection, **extra)


class TermHits(_JoinedText):
    """How many of `terms` occur (case-insensitively) in any of the fields: one array parameter
    and one subquery, so that the SQL (and the ORM's work to build it) does not grow with
    terms × fields. A term never holds a space, so it cannot match across two joined fields."""

    output_field = FloatField()

    def __init__(self, *fields, terms: list[str]):
        super().__init__(*fields)
        self.terms = [t.lower() for t in terms]

    def as_sql(self, compiler, connection, **extra):
        haystack, params = Func.as_sql(
            self._as_text(), compiler, connection, template="%(expressions)s", **extra
        )
        sql = f"(SELECT count(*) FROM unnest(%s::text[]) AS term WHERE strpos(lower({haystack}), term) > 0)::float"
        return sql, [self.terms, *params]


class TextVector(_JoinedText):
    """to_tsvector('english', f1 || ' ' || f2 …): the SQL of Django's SearchVector(*fields,
    config="english"), which the full-text index is built on, so the index still answers it
    (`tests/catalogue/test_search_index.py`). SearchVector builds a new output field for every
    empty string and cast of every compile (a ranked query compiles it twice); this one shares
    them (measured: docs/bench-history.md)."""

    output_field = SearchVectorField()

    def as_sql(self, compiler, connection, **extra):
        text, params = Func.as_sql(self._as_text(), compiler, connection, template="%(expressions)s")
        return f"to_tsvector(%s::regconfig, {text})", [FTS_CONFIG, *params]


def search_indexes(prefix: str, fields: list[str]) -> list[GinIndex]:
    """The two GIN indexes that answer `ranked(…, fields)` on one table: the CJK bigram array and
    the English full-text vector, both over the very expressions the query builds."""
    return [
        GinIndex(CJKBigrams(*fields), name=f"{prefix}_cjk"[:30]),
        GinIndex(SearchVector(*fields, config=FTS_CONFIG), name=f"{prefix}_fts"[:30]),
    ]


def search_terms(query: str) -> tuple[list[str], list[str]]:
    """(all terms, Latin words) of a query. CJK runs become bigrams, a single character stays."""
    terms: list[str] = []
    for run in _CJK_RUN.findall(query):
        terms += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
    words = [w.lower() for w in _WORD.findall(_CJK_RUN.sub(" ", query)) if len(w) > 1 or w.isdigit()]
    terms += words
    unique = list(dict.fromkeys(terms))[:MAX_TERMS]
    return unique, [w for w in dict.fromkeys(words) if w in unique]


def ranked(queryset: QuerySet, query: str, fields: list[str], *, first: Q | None = None) -> QuerySet:
    """Rows of `queryset` matching `query` in any of `fields`, best first (annotated `score`).

    `first`: rows that also match this condition are included whether or not they match the
    query, and come before every other row (annotated `first`, True or False), so that a caller's
    exact match and the ranked ones are one statement.

    An empty query (no searchable term) matches nothing but `first`; callers list everything
    instead. The bigram array and the text vector are aliases, not annotations: the WHERE clause
    uses them (and their indexes), and no row brings them back to be parsed into Python."""
    terms, words = search_terms(query)
    if not terms:
        if first is None:
            return queryset.none()
        return queryset.filter(first).annotate(first=Value(True), score=Value(0.0)).order_by("pk")

    def contains(term: str) -> Q:
        return reduce(operator.or_, (Q(**{f"{field}__icontains": term}) for field in fields))

    hits = TermHits(*fields, terms=terms)
    bigrams = [t for t in terms if _CJK_RUN.fullmatch(t) and len(t) == 2]
    single = [t for t in terms if _CJK_RUN.fullmatch(t) and len(t) == 1]  # rare; no index serves it
    alternatives = [contains(term) for term in single]
    if bigrams:
        queryset = queryset.alias(_bigrams=CJKBigrams(*fields))
        # One array parameter, not ARRAY[%s, %s, …] of a Value (and a new output field) per bigram.
        alternatives.append(Q(_bigrams__overlap=Value(bigrams, output_field=CJKBigrams.output_field)))
    if words:
        vector = TextVector(*fields)
        fts = SearchQuery(" OR ".join(words), search_type="websearch", config=FTS_CONFIG)
        queryset = queryset.alias(_fts=vector, _rank=SearchRank(vector, fts))
        alternatives.append(Q(_fts=fts))
        score = hits + F("_rank")
    else:
        score = hits
    matches = reduce(operator.or_, alternatives)
    if first is None:
        return queryset.annotate(score=score).filter(matches).order_by("-score", "pk")
    flagged = queryset.annotate(first=ExpressionWrapper(first, output_field=_BOOLEAN), score=score)
    return flagged.filter(first | matches).order_by("-first", "-score", "pk")
