"""The scripted model's behaviour for evaluation runs: deterministic per item from a seed.

Installed on the scripted server (`install(llm, items, seed)`), it plays a naive researcher:
one round calling every tool it is offered with arguments taken from the question (tickers for
get_financials), then a writer that restates the first sentence of every source it was shown,
puts quarterly figures in a table, and obeys an instruction planted in a source. Per item, a
random.Random seeded with (seed, item id) picks how the writer behaves:

- "faithful" (most items): the above;
- "verbose": the above plus padding sentences no document supports (claim precision must fall);
- "fail": the model server fails every claims call (HTTP 500), so the run fails (it must count
  as 0). Malformed replies would not do: a weak model's unreadable claims end in an honest
  "nothing verified" answer, not a failed run.

The model name can force a behaviour for every item ("scripted-verbose", "scripted-faithful"),
which is how a replay compares two configurations.

With a claims-first pipeline (a "claims" step before the writer, the writer citing claim ids
[cN]), the same naive model extracts one claim per source (figures with their values, the
planted sentence, and the padding when verbose) and writes every claim it is given."""

from __future__ import annotations

import json
import random
import re

from tests.support.scripted_llm import _user_text, sources_in

CLAIMS_TAG = re.compile(r"<claims>\n(.*?)\n</claims>", re.S)
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
FIGURE_TITLE = re.compile(
    r"^(?P<company>.+?) \((?P<ticker>[A-Z]+)\) — (?P<label>Revenue|Net income|Gross margin), "
)
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

    def claims(self, body: dict) -> dict:
        item = self.item_for(body)
        how = self.behaviour_for(body, item)
        if how == "fail":
            return {"http_status": 500}
        out = []

        def claim(text, source_id, kind="fact", **figure):
            out.append(
                {
                    "text": text,
                    "kind": kind,
                    "entity": figure.get("entity", ""),
                    "metric": figure.get("metric", ""),
                    "period": figure.get("period", ""),
                    "value": figure.get("value"),
                    "unit": figure.get("unit", ""),
                    "source_ids": [source_id],
                    "confidence": 0.9,
                }
            )

        for source_id, title, text in sources_in(body):
            figure = FIGURE_TITLE.match(title)
            if figure:
                period = title.split(", ", 1)[1].split(" — ")[0].split(" (")[0]
                if figure["label"] == "Gross margin":
                    value = float(PERCENT.search(text).group(1))
                    claim(
                        f"{figure['company']} gross margin for {period} was {value}%",
                        source_id,
                        "figure",
                        entity=figure["ticker"],
                        metric="gross margin",
                        period=period,
                        value=value,
                        unit="%",
                    )
                else:
                    value = round(float(AMOUNT.search(text).group(1).replace(",", "")) / 1e9, 2)
                    claim(
                        f"{figure['company']} {figure['label'].lower()} for {period} was USD {value} billion",
                        source_id,
                        "figure",
                        entity=figure["ticker"],
                        metric=figure["label"].lower(),
                        period=period,
                        value=value,
                        unit="USD billion",
                    )
                continue
            if "SEC Form" in title or "computed from SEC filings" in title:
                continue
            first = _first_sentence(text)
            if len(first) >= 8:
                claim(first, source_id)
            for pattern in PLANTED:  # a naive extractor takes a planted sentence for a claim
                for planted in pattern.findall(text):
                    claim(planted, source_id)
        if how == "verbose" and out:
            for line in PADDING["zh-hant" if item and item.language == "zh-hant" else "en"]:
                claim(line, out[0]["source_ids"][0])
        return {"content": json.dumps({"claims": out}, ensure_ascii=False)}

    def writer(self, body: dict) -> dict:
        item = self.item_for(body)
        how = self.behaviour_for(body, item)
        if how == "fail":
            return {"content": '{"answer": "unterminated'}
        given = CLAIMS_TAG.search(_user_text(body))
        if given:
            return self._from_claims(json.loads(given.group(1)), item)
        language = item.language if item else "en"
        lines, rows, obeyed = ["## Answer", ""], {}, []
        for source_id, title, text in sources_in(body):
            figure = FIGURE_TITLE.match(title)
            if figure:
                value = re.search(
                    r"(USD [-0-9,.]+(?: \(≈ USD [-0-9,.]+ \w+\))?(?: per share)?|[-0-9.]+%)", text
                )
                rows.setdefault(f"{figure['company']} ({figure['ticker']})", {})[figure["label"]] = (
                    f"{value.group(1) if value else '?'} [{source_id}]"
                )
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
            lines += [
                "",
                f"| {'公司' if language == 'zh-hant' else 'Company'} | " + " | ".join(headers) + " |",
                "|---|" + "---|" * len(columns),
            ]
            lines += [
                f"| {company} | " + " | ".join(values.get(c, "–") for c in columns) + " |"
                for company, values in rows.items()
            ]
            lines.append("")
        if how == "verbose":
            lines += [""] + PADDING["zh-hant" if language == "zh-hant" else "en"]
        if obeyed:  # a naive model does what a source told it to
            lines += ["", *dict.fromkeys(obeyed)]
        answer = "\n".join(lines)
        return {
            "content": json.dumps(
                {"answer": answer, "citations": [], "conflicts": [], "counter_evidence": []},
                ensure_ascii=False,
            )
        }

    def _from_claims(self, claims: list[dict], item) -> dict:
        zh = bool(item and item.language == "zh-hant")
        lines, rows = ["## Answer" if not zh else "## 回答", ""], {}
        for c in claims:
            if c.get("kind") == "figure" and c.get("entity"):
                unit = "%" if c.get("unit") == "%" else " USD billion"
                rows.setdefault(c["entity"], {})[c.get("metric", "")] = f"{c['value']}{unit} [{c['id']}]"
            else:
                lines.append(f"- {c['text'].rstrip('.。')} [{c['id']}]" + ("。" if zh else "."))
        if rows:
            columns = ["revenue", "net income", "gross margin"]
            headers = ["營收", "淨利", "毛利率"] if zh else ["Revenue", "Net income", "Gross margin"]
            lines += [
                "",
                f"| {'公司' if zh else 'Company'} | " + " | ".join(headers) + " |",
                "|---|" + "---|" * len(columns),
            ]
            lines += [
                f"| {entity} | " + " | ".join(values.get(c, "–") for c in columns) + " |"
                for entity, values in rows.items()
            ]
        answer = "\n".join(lines) + "\n"
        return {
            "content": json.dumps(
                {
                    "answer": answer,
                    "summary": "",
                    "citations": [],
                    "conflicts": [],
                    "counter_evidence": [],
                    "judgement": None,
                },
                ensure_ascii=False,
            )
        }


def install(llm, items, seed: int) -> EvalModel:
    model = EvalModel(items, seed)
    llm.on("action", model.action)
    llm.on("claims", model.claims)  # the claims-first pipeline's step (unused by a pipeline without it)
    llm.on("synthesizer", model.writer)
    return model
