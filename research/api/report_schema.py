"""The report's JSON Schema in the OpenAPI document.

agent.engine.report.REPORT_SCHEMA is JSON Schema 2020-12 (the engine validates every report
against it); the OpenAPI document is 3.0, which says "nullable" instead of a type list and "enum"
instead of "const". This turns one into the other, so the API publishes the very same shape."""

from __future__ import annotations

from agent.engine.report import REPORT_SCHEMA, SCHEMA_VERSION

_DROPPED = {"$schema", "$id"}


def to_openapi(schema):
    if isinstance(schema, list):
        return [to_openapi(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key in _DROPPED:
            continue
        if key == "const":
            out["enum"] = [value]
        elif key == "type" and isinstance(value, list):
            kinds = [v for v in value if v != "null"]
            out["type"] = kinds[0]
            if "null" in value:
                out["nullable"] = True
        elif key == "anyOf" and {"type": "null"} in value:
            rest = [v for v in value if v != {"type": "null"}]
            converted = to_openapi(rest[0]) if len(rest) == 1 else {"anyOf": to_openapi(rest)}
            out.update(converted)
            out["nullable"] = True
        elif key in ("properties",):
            out[key] = {name: to_openapi(sub) for name, sub in value.items()}
        else:
            out[key] = to_openapi(value)
    return out


REPORT_OPENAPI = {
    **to_openapi(REPORT_SCHEMA),
    "description": f"Deep Research report, schema version {SCHEMA_VERSION} (JSON Schema: agent/engine/report.py).",
}


# The task's stored citations (GET …/task/<uuid> "citations"): the report's citation entries, named
# by their display `number` instead of `id` (agent.engine.types.Citation). Tasks finished before
# citations carried their quote (report schema 1.0) have none: quote and location are optional here.
_REPORT_CITATION = REPORT_OPENAPI["properties"]["citations"]["items"]
CITATIONS_OPENAPI = {
    "type": "array",
    "items": {
        "type": "object",
        "required": [
            "number",
            *(k for k in _REPORT_CITATION["required"] if k not in ("id", "quote", "location")),
        ],
        "properties": {
            "number": {"type": "integer", "description": "the number shown as [N]"},
            **{k: v for k, v in _REPORT_CITATION["properties"].items() if k not in ("id", "flagged")},
        },
    },
}
