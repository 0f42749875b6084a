"""How many tokens a text can cost, counted per script, for the bounds reserved before a model or
embedding call (agent/llm_factory.py, materials/embeddings.py).

A fixed "about 3 characters a token" holds for English and undercounts Chinese several times: a
Han character is one token at best and two or three in byte-level vocabularies (cl100k splits
most Traditional characters into two or three bytes-pieces), so a reservation sized on English
let a long Chinese prompt settle above what it reserved, past the cap. The rates below are upper
bounds per character, per script, taken above the published counts for the tokenizers of the
OpenAI-compatible models the platform runs against (o200k_base and cl100k_base; Llama 3 and
Qwen 2 count fewer). `tests/test_token_estimate.py` pins them against texts of each script;
`CostReservation` rows keep both sides (reserved and spent), so a deployment can see how far
above its own model's counts the bound sits:

| script | typical | bound used |
|---|---|---|
| Han, kana, Hangul, CJK punctuation and full-width forms | 0.7–1.6 tokens a character | 2.0 |
| ASCII letters, digits, spaces, punctuation | 4 characters a token (0.25) | 0.4 (2.5 characters a token: code, URLs, numbers) |
| anything else (Greek, Cyrillic, emoji, …) | 0.5–2 | 2.0 |

A bound, not an estimate of the bill: what is settled is what the server reports. The bound only
has to be at least that, so that the cap's reservation is never passed."""

from __future__ import annotations

import math

CJK_TOKENS_PER_CHAR = 2.0
LATIN_TOKENS_PER_CHAR = 0.4
OTHER_TOKENS_PER_CHAR = 2.0
# Chat Completions wraps each message in a few tokens of its own (role, separators).
TOKENS_PER_MESSAGE = 8

_CJK_RANGES = (
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3000, 0x30FF),  # CJK symbols and punctuation, Hiragana, Katakana
    (0x3100, 0x31FF),  # Bopomofo (注音), Hangul compatibility jamo, Katakana extensions
    (0x3200, 0x4DBF),  # enclosed CJK, compatibility, extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFE30, 0xFE4F),  # CJK compatibility forms
    (0xFF00, 0xFFEF),  # half-width and full-width forms (，。！？ and full-width Latin)
    (0x20000, 0x3FFFF),  # extensions B and later
)


def _is_cjk(code: int) -> bool:
    return any(low <= code <= high for low, high in _CJK_RANGES)


def script_counts(text: str) -> tuple[int, int, int]:
    """(CJK, Latin/ASCII, other) characters of `text`."""
    cjk = latin = other = 0
    for char in text:
        code = ord(char)
        if code < 0x80:
            latin += 1
        elif _is_cjk(code):
            cjk += 1
        else:
            other += 1
    return cjk, latin, other


def token_bound(text: str) -> int:
    """At most how many tokens `text` is, counted per script (see the module's table)."""
    cjk, latin, other = script_counts(text)
    return math.ceil(
        cjk * CJK_TOKENS_PER_CHAR + latin * LATIN_TOKENS_PER_CHAR + other * OTHER_TOKENS_PER_CHAR
    )


def messages_token_bound(messages: list[dict]) -> int:
    """The bound of a Chat Completions prompt: every message's text and its wrapping."""
    total = 0
    for message in messages:
        content = message.get("content") or ""
        total += TOKENS_PER_MESSAGE + token_bound(content if isinstance(content, str) else str(content))
    return total
