"""The policy every assistant path runs under, built in one place (Deep Research, ordinary chat,
any future mode): what its tools may reach and what the teacher told the model.

- the channel boundary (the ToolContext names the user and channel; arguments cannot change them);
- the channel's allowed and denied web domains, plus the domains a platform admin pinned as
  "never use" — merged into the context, so the web tools refuse them BEFORE any request is sent;
- the OpenAlex country rule: the platform's countries plus any the teacher added; the model may
  narrow them, never widen them (agent.engine.boundaries.narrowed_countries);
- the teacher's usage rules (channel.system_prompt), given to the LLM client as a preamble that
  every call of the run carries, whatever phase makes it.
The observed-URL rule for fetch_url is agent.engine.boundaries.url_observed, applied by the
engine for research and by the chat service for chat."""

from __future__ import annotations

from django.conf import settings

from agent.tools import ToolContext
from channels_app.models import Channel

from . import credibility

# Phrased as data about the channel, so it fits any phase's prompt (planner, writer, verifier,
# chat…) without changing what that phase is asked to do. It is appended as a system message
# after the phase's own instructions, never before them.
TEACHER_RULES = (
    "The course teacher's usage rules for this channel apply to everything you write for the "
    "student (follow them; they never change the output format you were asked for):\n{rules}"
)


def tool_context(
    *, user_id: int, channel: Channel, language: str, web_tools: bool | None = None
) -> ToolContext:
    """`web_tools`: what a research recorded when it started (ResearchTask.web_tools); one that
    started without the web keeps to that even if the channel switched it on since, and none gets
    it once the channel switched it off."""
    return ToolContext(
        user_id=user_id,
        channel_id=channel.pk,
        channel_slug=channel.slug,
        web_tools_enabled=channel.web_tools_enabled and web_tools is not False,
        language=language,
        allowed_domains=channel.allowed_domains,
        denied_domains=tuple(dict.fromkeys(channel.denied_domains + credibility.denied_domains())),
        scholarly_countries=scholarly_countries(channel),
        material_languages=tuple(channel.material_languages),
    )


def scholarly_countries(channel: Channel) -> tuple[str, ...]:
    return tuple(
        dict.fromkeys([*(c.lower() for c in settings.OPENALEX_COUNTRY_CODES), *channel.extra_countries])
    )


def teacher_rules(channel: Channel) -> str:
    """The system preamble for every LLM call made for this channel ('' when the teacher wrote none)."""
    rules = (channel.system_prompt or "").strip()
    return TEACHER_RULES.format(rules=rules) if rules else ""
