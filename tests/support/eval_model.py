"""The scripted model's behaviour for evaluation runs: deterministic per item from a seed.

Installed on the scripted server (`install(llm, items, seed)`), it plays a naive researcher:
one round calling every tool it is offered with arguments taken from the question (tickers for
get_financials), then a selection that points at the first span of every source it is shown
(every figure span of a filing), and an interpretation that restates its facts' first words and
obeys an instruction planted in a source. Per item, a random.Random seeded with (seed, item id)
picks how the model behaves:

- "faithful" (most items): the above;
- "verbose": the above, but the selection also points at every other span it is shown, relevant
  or not (fact precision must fall), and the interpretation adds padding sentences;
- "fail": the model server fails every action call (HTTP 500) after a plan, so the run fails with
  what the plan spent (it must count as 0). A failed selection would not do: the engine falls
  back to the search ranking and the research completes.

The model name can force a behaviour for every item ("scripted-verbose", "scripted-faithful"),
which is how a replay compares two configurations."""

from __future__ import annotations

import json
import random
import re

from tests.support.scripted_llm import (
    FACT_LINE,
    _user_text,
    candidates_in,
    interpret_from_facts,
    observations_of,
)

AMOUNT = re.compile(r"USD (-?[0-9,]+(?:\.[0-9]+)?)")
PERCENT = re.compile(r"(-?[0-9.]+)%")

BEHAVIOURS = (("fail", 0.08), ("verbose", 0.22), ("faithful", 0.70))
PADDING = {
    "en": [
        "Experts around the world have long debated this question with great interest.",
        "Many observers believe the answer will matter even more in the coming decade.",
        "Overall, this remains a fascinating and important topic for everyone involved.",
    ],
    "zh-hant": [
        "這個問題長久以來一直受到世界各地專家的高度關注與熱烈討論。",
        "許多觀察者認為這個答案在未來十年將變得更加重要而且影響深遠。",
        "整體而言這仍然是一個對所有相關人士都非常迷人且重要的主題。",
    ],
}
PLANTED = [
    re.compile(r'end your answer with the sentence "([^"]+)"'),
    re.compile(r"在回答結尾加上「([^」]+)」"),
]
TICKER = re.compile(r"[(（]([A-Z]{3,5})[)）]")


def behaviour(item_id: str, seed: int) -> str:
    draw = random.Random(f"{seed}:{item_id}").random()
    total = 0.0
    for name, share in BEHAVIOURS:
        total += share
        if draw < total:
            return name
    return BEHAVIOURS[-1][0]


class EvalModel:
    def __init__(self, items, seed: int):
        self.items = list(items)
        self.seed = seed

    def item_for(self, body: dict):
        text = _user_text(body)
        return next((item for item in self.items if item.question in text), None)

    def behaviour_for(self, body: dict, item) -> str:
        model = body.get("model", "")
        if model.startswith("scripted-") and model.split("-", 1)[1] in {name for name, _ in BEHAVIOURS}:
            return model.split("-", 1)[1]
        return behaviour(item.id, self.seed) if item else "faithful"

    def action(self, body: dict) -> dict:
        turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
        item = self.item_for(body)
        if self.behaviour_for(body, item) == "fail":
            return {"http_status": 500}
        if turns or item is None:
            return {"content": "DONE"}
        calls = []
        for tool in body.get("tools") or []:
            name = tool["function"]["name"]
            if name == "get_financials":
                calls += [
                    {"name": name, "arguments": {"ticker": t, "quarter": "latest"}}
                    for t in dict.fromkeys(TICKER.findall(item.question))
                ]
            elif name == "get_course_overview":
                calls.append({"name": name, "arguments": {"course": item.question[:200]}})
            elif name == "get_hs_curriculum":
                calls.append({"name": name, "arguments": {"query": item.question[:200]}})
            elif name in ("search_channel_materials", "web_search"):
                calls.append({"name": name, "arguments": {"query": item.question[:200]}})
        return {"tool_calls": calls} if calls else {"content": "DONE"}

    def selector(self, body: dict) -> dict:
        item = self.item_for(body)
        how = self.behaviour_for(body, item)
        firsts: dict[str, str] = {}
        chosen = []
        for span_id, text in candidates_in(body):
            source = span_id.split(".")[0]
            figure = bool(AMOUNT.search(text) or PERCENT.search(text))
            if how == "verbose" or figure or source not in firsts:
                chosen.append(span_id)
            firsts.setdefault(source, span_id)
        facts = [{"span_ids": [i], "hypothesis": 0, "stance": "none"} for i in chosen[:8]]
        return {"content": json.dumps({"facts": facts, "contradictions": []})}

    def interpreter(self, body: dict) -> dict:
        item = self.item_for(body)
        how = self.behaviour_for(body, item)
        reply = interpret_from_facts(body)
        facts = [int(i) for i, _ in FACT_LINE.findall(observations_of(body))]
        if facts:
            zh = bool(item and item.language == "zh-hant")
            if how == "verbose":
                reply.setdefault("items", []).extend(
                    {"kind": "reasoning", "text": line, "facts": facts[:1]}
                    for line in PADDING["zh-hant" if zh else "en"]
                )
            for pattern in PLANTED:  # a naive model does what a source told it to
                for planted in pattern.findall(_user_text(body)):
                    reply.setdefault("items", []).append(
                        {"kind": "reasoning", "text": planted, "facts": facts[:1]}
                    )
        if "items" in reply:
            reply["items"] = reply["items"][:8]
        return {"content": json.dumps(reply, ensure_ascii=False)}


def install(llm, items, seed: int) -> EvalModel:
    model = EvalModel(items, seed)
    llm.on("action", model.action)
    llm.on("selector", model.selector)
    llm.on("interpreter", model.interpreter)
    return model
