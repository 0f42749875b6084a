"""The judge model: does a set of passages entail a statement? (ALCE-style NLI by an LLM.)"""

from __future__ import annotations

from agent.engine.llm import LLMClient
from agent.engine.prompts import UNTRUSTED_RULES, as_json

JUDGE_PROMPT = """You judge whether the passages entail the statement: answer true only if a careful reader
would accept the statement as stated from the passages alone (not from your own knowledge); a
statement that only partly follows, or goes beyond the passages, is false.

""" + UNTRUSTED_RULES

SCHEMA = {
    "type": "object",
    "properties": {
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "entailed": {"type": "boolean"}},
                "required": ["id", "entailed"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["results"],
    "additionalProperties": False,
}

BATCH = 8


class Judge:
    def __init__(self, client: LLMClient):
        self.client = client
        self.calls = 0

    def entails(self, pairs: list[tuple[str, list[str]]]) -> list[bool]:
        """For each (statement, passages): do the passages entail it? Empty passages never do."""
        verdicts = [False] * len(pairs)
        wanted = [(i, s, p) for i, (s, p) in enumerate(pairs) if p and any(x.strip() for x in p)]
        for start in range(0, len(wanted), BATCH):
            batch = wanted[start : start + BATCH]
            payload = [{"id": i, "statement": s, "passages": [x[:3000] for x in p]} for i, s, p in batch]
            data = self.client.structured(
                "judge",
                [{"role": "system", "content": JUDGE_PROMPT}, {"role": "user", "content": "<observations>\n" + as_json(payload) + "\n</observations>"}],
                SCHEMA,
                "entailment",
                max_tokens=1500,
            )
            self.calls += 1
            asked = {i for i, _, _ in batch}
            for result in data["results"]:
                if result["id"] in asked:
                    verdicts[result["id"]] = bool(result["entailed"])
        return verdicts
