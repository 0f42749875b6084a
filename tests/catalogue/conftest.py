from __future__ import annotations

import pytest

from agent.tools import REGISTRY, ToolContext
from catalogue.demo import load_demo_catalogue


def call(tool: str, ctx: ToolContext | None = None, **args):
    """Through the bound registry, as the engine calls tools."""
    return REGISTRY.bind(ctx or ToolContext(user_id=1, channel_id=1)).call(tool, args)


@pytest.fixture
def demo_catalogue(db):
    load_demo_catalogue()
