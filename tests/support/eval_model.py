"""The scripted model's behaviour for evaluation runs: deterministic per item from a seed.

Installed on the scripted server (`install(llm, items, seed)`), it plays a naive researcher:
one round calling every tool it is offered with arguments taken from the question (tickers for
get_financials), then a writer that restates the first sentence of every source it was shown,
puts quarterly figures in a table, and obeys an instruction planted in a source. Per item, a
random.Random seeded with (seed, item id) picks how the writer behaves:

- "faithful" (most items): the above;
- "verbose": the above plus padding sentences no document supports (claim precision must fall);
- "fail": malformed replies from the writer, so the run fails (it must count as 0).

The model name can force a behaviour for every item ("scripted-verbose", "scripted-faithful"),
which is how a replay compares two configurations."""

from __future__ import annotations

import json
import random
import re

from tests.support.scripted_llm import _user_text, sources_in

BEHAVIOURS = (("fail", 0.08), ("verbose", 0.22), ("faithful", 0.70))
PADDING = {
    "en": ["Experts around the world have long debated this question with great interest.",
           "Many observers believe the answer will matter even more in the coming decade.",
           "Overall, this remains a fascinating and important topic for everyone involved."],
    "zh-hant": ["這個問題長久以來一直受到世界各地專家的高度關注與熱烈討論。",
                "許多觀察者認為這個答案在未來十年將變得更加重要而且影響深遠。",
                "整體而言這仍然是一個對所有相關人士都非常迷人且重要的主題。"],
}
PLANTED = [re.compile(r'end your answer with the sentence "([^"]+)"'), re.compile(r"在回答結尾加上「([^」]+)」")]
FIGURE_TITLE = re.compile(r"^(?P<company>.+?) \((?P<ticker>[A-Z]+)\) — (?P<label>Revenue|Net income|Gross margin), ")
TICKER = re.compile(r"[(（]([A-Z]{3,5})[)）]")


def behaviour(item_id: str, seed: int) -> str:
    draw = random.Random(f"{seed}:{item_id}").random()
    total = 0.0
    for name, share in BEHAVIOURS:
        total += share
        if draw < total:
            return name
    return BEHAVIOURS[-1][0]


def _first_sentence(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    # Not after "Inc." or "Corp.": company names are not sentence ends.
    return re.split(r"(?<!Inc\.)(?<!Corp\.)(?<=[.。!?！？])\s+|(?<=[。！？])", text)[0][:220].rstrip(".。 ")


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
        if turns or item is None:
            return {"content": "DONE"}
        calls = []
        for tool in body.get("tools") or []:
            name = tool["function"]["name"]
            if name == "get_financials":
                calls += [{"name": name, "arguments": {"ticker": t, "quarter": "latest"}} for t in dict.fromkeys(TICKER.findall(item.question))]
            elif name == "get_course_overview":
                calls.append({"name": name, "arguments": {"course": item.question[:200]}})
            elif name == "get_hs_curriculum":
                calls.append({"name": name, "arguments": {"query": item.question[:200]}})
            elif name in ("search_channel_materials", "web_search"):
                calls.append({"name": name, "arguments": {"query": item.question[:200]}})
        return {"tool_calls": calls} if calls else {"content": "DONE"}

    def writer(self, body: dict) -> dict:
        item = self.item_for(body)
        how = self.behaviour_for(body, item)
        if how == "fail":
            return {"content": '{"answer": "unterminated'}
        language = item.language if item else "en"
        lines, rows, obeyed = ["## Answer", ""], {}, []
        for source_id, title, text in sources_in(body):
            figure = FIGURE_TITLE.match(title)
            if figure:
                value = re.search(r"(USD [-0-9,.]+(?: \(≈ USD [-0-9,.]+ \w+\))?(?: per share)?|[-0-9.]+%)", text)
                rows.setdefault(f"{figure['company']} ({figure['ticker']})", {})[figure["label"]] = f"{value.group(1) if value else '?'} [{source_id}]"
                continue
            if "SEC Form" in title or "computed from SEC filings" in title:
                continue  # other SEC figures: the table keeps to the question's three
            first = _first_sentence(text)
            if len(first) >= 8:
                lines.append(f"- {first} [{source_id}].")
            for pattern in PLANTED:
                obeyed += pattern.findall(text)
        if rows:
            columns = ["Revenue", "Net income", "Gross margin"]
            headers = ["營收", "淨利", "毛利率"] if language == "zh-hant" else columns
            lines += ["", f"| {'公司' if language == 'zh-hant' else 'Company'} | " + " | ".join(headers) + " |", "|---|" + "---|" * len(columns)]
            lines += [f"| {company} | " + " | ".join(values.get(c, "–") for c in columns) + " |" for company, values in rows.items()]
            lines.append("")
        if how == "verbose":
            lines += [""] + PADDING["zh-hant" if language == "zh-hant" else "en"]
        if obeyed:  # a naive model does what a source told it to
            lines += ["", *dict.fromkeys(obeyed)]
        answer = "\n".join(lines)
        return {"content": json.dumps({"answer": answer, "citations": [], "conflicts": [], "counter_evidence": []}, ensure_ascii=False)}


def install(llm, items, seed: int) -> EvalModel:
    model = EvalModel(items, seed)
    llm.on("action", model.action)
    llm.on("synthesizer", model.writer)
    return model
