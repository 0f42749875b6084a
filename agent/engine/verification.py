"""The codes and detail phrases of the 1.x reports (claims with quotes, checked drafts), which
stored reports and ledger rows still carry: the page words them in the reader's language
(research/presentation.py). The engine does not write them: a 2.x report speaks only the codes
of agent/engine/vocabulary.py."""

from __future__ import annotations

# Reasons decided by the engine (the page words them in the reader's language).
NO_CITATION = "no_citation"
FABRICATED = "fabricated_citation"
UNSUPPORTED = "unsupported"
FIGURE_MISMATCH = "figure_mismatch"
QUOTE_NOT_FOUND = "quote_not_found"
INSTRUCTION = "instruction_in_source"
UNVERIFIED = "unverified"
NOT_IN_CLAIMS = "not_in_claims"  # words that no claim the unit cites states (code)
SUPERSEDED = "superseded"  # states the losing side of a conflict the engine settled
INSTRUCTION_TEXT = "instruction found in source"
# A heading that repeats the question or a sub-question: structure, passed by code, not a fact.
PLAN_HEADING = "plan"
# What code writes as a check's detail (the page words each in the reader's language:
# research/presentation.py, DETAIL_LABELS); a detail the verifier model writes is its own.
NO_VERDICT_TEXT = "the verifier gave no verdict"
QUOTES_NOTHING_TEXT = "the claim quotes nothing"
QUOTE_MISSING_TEXT = "quote {n} is not in source {source}"
FIGURE_NOT_QUOTED_TEXT = "its quotes do not state this figure"
PERIOD_NOT_QUOTED_TEXT = "its quotes and sources do not name this period"
ENTITY_NOT_QUOTED_TEXT = "its quotes and sources do not name this entity"
OPPOSITE_DIRECTION_TEXT = "its quotes say the opposite direction"
RESTATES_QUOTE_TEXT = "restates_quote"
NO_CITATION_TEXT = "no claim or source cited"
SUPERSEDED_TEXT = "states a side that lost a settled conflict"
NO_CLAIM_SAYS_TEXT = "no verified claim says this"
FIGURE_MISMATCH_TEXT = "the figure differs from the verified claims it cites"
NOT_IN_CLAIMS_TEXT = "words no cited claim states: "  # followed by the words
CLAIMS_DO_NOT_SAY_TEXT = "the verified claims it cites do not say this"
PARTLY_SUPPORTED_TEXT = "partly supported by the claims it cites"
# The inline marks the opt-in `mark` policy of 1.x wrote into a stored answer (plain text, no
# emphasis); the evaluation's reader of stored answers takes them out again (evaluation/observed.py).
MARKS = {
    "unverified": {"en": " ⚠ (not supported by the cited sources)", "zh": "⚠（此句未獲引用來源支持）"},
    "uncited": {"en": " ⚠ (no source cited)", "zh": "⚠（此句未附來源）"},
}
