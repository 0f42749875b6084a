"""The tool registry shared by Deep Research and ordinary chat (the source's chat_tools.py).

A tool is a function `fn(ctx, **params) -> ToolResult` decorated with `@tool(...)`. Its JSON
Schema is built from the type hints and the docstring's `Args:` section; a missing hint or
description fails at import, not at the first call. Its traits (the tier of its sources, whether
it is a search, whether its figures are filed figures) are arguments of the same decorator, with
no defaults: a tool declared without them fails at import too, and the engine learns them only
from here (ToolTraits, through the toolbox), never from a tool's name. Every call receives a ToolContext (the user
and channel of the research) that arguments cannot change: a tool never takes a channel or user
as a parameter.

This module imports no Django, so the engine's tests and the terminal can use it as it is.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import jsonschema

from agent.engine.types import TIERS, ToolResult, ToolTraits


class ToolDefinitionError(Exception):
    """A tool whose schema cannot be derived: raised at import time."""


@dataclass(frozen=True)
class ToolContext:
    """Who is asking and where. Frozen: no tool can widen it."""

    user_id: int
    channel_id: int
    web_tools_enabled: bool = False
    channel_slug: str = ""  # for links to the channel's materials; looked up when not given
    language: str = "zh-hant"
    # Per-channel web domain rules (lower-case host names); empty allow-list = all not denied.
    allowed_domains: tuple[str, ...] = ()
    denied_domains: tuple[str, ...] = ()
    # The countries search_external_papers may search (the course rule, which a teacher's channel
    # setting may widen); the model may narrow them, never widen them. Empty = the platform default.
    scholarly_countries: tuple[str, ...] = ()
    # The languages of the channel's materials, read with the channel (None: looked up per search).
    material_languages: tuple[str, ...] | None = None


@dataclass
class Tool:
    name: str
    description: str
    parameters: dict
    fn: Callable[..., ToolResult]
    traits: ToolTraits
    needs_web: bool = False
    # Arguments that must be a URL this research has already seen (a search result, a source) or
    # one the student wrote: a page's text cannot send the tool to an address of its choosing.
    observed_url_params: tuple[str, ...] = ()

    def spec(self) -> dict:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def validator(self):
        """The arguments' validator, built once: `jsonschema.validate` checks the schema itself and
        builds a validator on every call, which cost more CPU than the tool call's own work."""
        cached = self.__dict__.get("_validator")
        if cached is None:
            cached = self.__dict__["_validator"] = jsonschema.validators.validator_for(self.parameters)(
                self.parameters
            )
        return cached


_PRIMITIVES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _json_type(hint: Any, where: str) -> tuple[dict, bool]:
    """JSON Schema for a type hint; the bool says whether None is allowed."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) != 1:
            raise ToolDefinitionError(f"{where}: only Optional[X] unions are supported")
        schema, _ = _json_type(rest[0], where)
        return schema, True
    if origin is Literal:
        values = list(args)
        kinds = {_PRIMITIVES.get(type(v)) for v in values}
        if len(kinds) != 1 or None in kinds:
            raise ToolDefinitionError(f"{where}: Literal values must share one primitive type")
        return {"type": kinds.pop(), "enum": values}, False
    if origin in (list, tuple) or hint in (list, tuple):
        if not args:
            raise ToolDefinitionError(f"{where}: give the item type, e.g. list[str]")
        item, _ = _json_type(args[0], where)
        return {"type": "array", "items": item}, False
    if hint in _PRIMITIVES:
        return {"type": _PRIMITIVES[hint]}, False
    raise ToolDefinitionError(f"{where}: unsupported type {hint!r}")


def _parse_docstring(doc: str, where: str) -> tuple[str, dict[str, str]]:
    if not doc or not doc.strip():
        raise ToolDefinitionError(f"{where}: a tool needs a docstring (it is the description the LLM reads)")
    doc = inspect.cleandoc(doc)
    summary, _, rest = doc.partition("\nArgs:")
    descriptions: dict[str, str] = {}
    current = None
    for line in rest.splitlines():
        match = re.match(r"^\s{2,}(\w+)\s*:\s*(.+)$", line)
        if match:
            current = match.group(1)
            descriptions[current] = match.group(2).strip()
        elif current and line.strip() and not re.match(r"^\S", line):
            descriptions[current] += " " + line.strip()
        elif line.strip() and re.match(r"^\S", line):
            break  # another section (Returns:, …)
    return summary.strip(), descriptions


_UNDECLARED: Any = object()  # a trait left out: the sentinel, so the error can name what is missing


def _traits(where: str, *, tier: Any, search: Any, exact_figures: Any, bilingual: bool = False) -> ToolTraits:
    given = {"tier": tier, "search": search, "exact_figures": exact_figures}
    missing = [name for name, value in given.items() if value is _UNDECLARED]
    if missing:
        raise ToolDefinitionError(
            f"{where}: declare the tool's traits {missing} at its registration "
            "(tier=…, search=True/False, exact_figures=True/False)"
        )
    if tier not in TIERS:
        raise ToolDefinitionError(f"{where}: tier must be one of {sorted(TIERS)}, not {tier!r}")
    for name in ("search", "exact_figures"):
        if not isinstance(given[name], bool):
            raise ToolDefinitionError(f"{where}: {name} must be True or False")
    if not isinstance(bilingual, bool):
        raise ToolDefinitionError(f"{where}: bilingual must be True or False")
    return ToolTraits(tier=tier, search=search, exact_figures=exact_figures, bilingual=bilingual)


# The parameter the engine fills for a bilingual tool: never in the schema the model reads.
TRANSLATIONS = "translations"


def build_tool(
    fn: Callable,
    *,
    tier: str = _UNDECLARED,
    search: bool = _UNDECLARED,
    exact_figures: bool = _UNDECLARED,
    bilingual: bool = False,
    needs_web: bool = False,
    name: str | None = None,
    observed_url_params: tuple[str, ...] = (),
) -> Tool:
    where = f"tool {fn.__module__}.{fn.__name__}"
    traits = _traits(where, tier=tier, search=search, exact_figures=exact_figures, bilingual=bilingual)
    description, arg_docs = _parse_docstring(fn.__doc__ or "", where)
    hints = typing.get_type_hints(fn, include_extras=False)
    params = list(inspect.signature(fn).parameters.values())
    if not params or params[0].name != "ctx":
        raise ToolDefinitionError(f"{where}: the first parameter must be `ctx` (the ToolContext)")
    engine_param = next((p for p in params[1:] if p.name == TRANSLATIONS), None)
    if bilingual and (
        engine_param is None
        or engine_param.kind != engine_param.KEYWORD_ONLY
        or engine_param.default is not None
    ):
        raise ToolDefinitionError(
            f"{where}: a bilingual tool takes the engine's `*, {TRANSLATIONS}=None` (keyword only)"
        )
    properties, required = {}, []
    for param in params[1:]:
        if bilingual and param is engine_param:
            continue  # filled by the engine, not the model
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise ToolDefinitionError(f"{where}: *args/**kwargs are not allowed")
        if param.name not in hints:
            raise ToolDefinitionError(f"{where}: parameter {param.name!r} has no type hint")
        if param.name not in arg_docs:
            raise ToolDefinitionError(
                f"{where}: parameter {param.name!r} is not described in the docstring's Args:"
            )
        schema, nullable = _json_type(hints[param.name], f"{where}.{param.name}")
        schema = dict(schema, description=arg_docs[param.name])
        if param.default is inspect.Parameter.empty and not nullable:
            required.append(param.name)
        elif param.default is not inspect.Parameter.empty and param.default is not None:
            schema["default"] = param.default
        properties[param.name] = schema
    unknown = set(arg_docs) - set(properties)
    if unknown:
        raise ToolDefinitionError(f"{where}: the docstring describes unknown parameters {sorted(unknown)}")
    parameters = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    missing = set(observed_url_params) - set(properties)
    if missing:
        raise ToolDefinitionError(f"{where}: observed_url_params names unknown parameters {sorted(missing)}")
    return Tool(
        name=name or fn.__name__,
        description=description,
        parameters=parameters,
        fn=fn,
        traits=traits,
        needs_web=needs_web,
        observed_url_params=tuple(observed_url_params),
    )


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def register(self, tool: Tool) -> Tool:
        if tool.name in self._tools:
            raise ToolDefinitionError(f"tool {tool.name!r} is registered twice")
        self._tools[tool.name] = tool
        return tool

    def tool(
        self,
        *,
        tier: str = _UNDECLARED,
        search: bool = _UNDECLARED,
        exact_figures: bool = _UNDECLARED,
        bilingual: bool = False,
        needs_web: bool = False,
        name: str | None = None,
        observed_url_params: tuple[str, ...] = (),
    ):
        """Decorator: `@registry.tool(tier="internal", search=True, exact_figures=False)`."""

        def decorate(fn):
            self.register(
                build_tool(
                    fn,
                    tier=tier,
                    search=search,
                    exact_figures=exact_figures,
                    bilingual=bilingual,
                    needs_web=needs_web,
                    name=name,
                    observed_url_params=observed_url_params,
                )
            )
            return fn

        return decorate

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def all(self) -> list[Tool]:
        return list(self._tools.values())

    def available(self, ctx: ToolContext) -> list[Tool]:
        return [t for t in self._tools.values() if ctx.web_tools_enabled or not t.needs_web]

    def bind(self, ctx: ToolContext, *, after_call: Callable[[], None] | None = None) -> BoundToolbox:
        return BoundToolbox(self, ctx, after_call=after_call)


@dataclass
class BoundToolbox:
    """The registry as one research sees it: one user, one channel, only the tools allowed there."""

    registry: ToolRegistry
    ctx: ToolContext
    after_call: Callable[[], None] | None = None
    _tools: dict[str, Tool] = field(init=False)

    def __post_init__(self) -> None:
        self._tools = {t.name: t for t in self.registry.available(self.ctx)}

    def specs(self) -> list[dict]:
        return [t.spec() for t in self._tools.values()]

    def names(self) -> set[str]:
        return set(self._tools)

    def observed_url_params(self, name: str) -> tuple[str, ...]:
        tool = self._tools.get(name)
        return tool.observed_url_params if tool else ()

    def traits(self, name: str) -> ToolTraits | None:
        tool = self._tools.get(name)
        return tool.traits if tool else None

    def call(self, name: str, args: dict, *, translations: list[dict] | None = None) -> ToolResult:
        """`translations` reach a bilingual tool only, and only from the engine: the model's
        arguments are checked against the schema, which has no such parameter."""
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult(error=f"unknown tool {name!r}")
        error = jsonschema.exceptions.best_match(tool.validator().iter_errors(args))
        if error is not None:
            return ToolResult(error=f"invalid arguments for {name}: {error.message[:200]}")
        engine = {TRANSLATIONS: translations} if tool.traits.bilingual and translations is not None else {}
        try:
            result = tool.fn(self.ctx, **args, **engine)
        finally:
            if self.after_call is not None:
                self.after_call()
        declared = tool.traits.tier
        for source in result.sources:
            source.source_tool = name  # the registry names the tool; a tool cannot claim another's name
            # Nor a tier above the one it was registered with (a tool may say a source is less
            # reliable than its usual, e.g. a course material quoting a web page).
            claimed = TIERS.get(source.tier)
            if claimed is None or (source.tier != declared and claimed.rank <= TIERS[declared].rank):
                source.tier = declared
        return result
