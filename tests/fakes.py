"""Test doubles for the orchestrator's ports (the real tools and templates are used)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forge_lsp.core.orchestrator import Orchestrator, TurnRequest
from forge_lsp.core.runtime import BoundTools
from forge_lsp.core.user_hooks import UserHooks
from forge_lsp.domain.agents import Agent
from forge_lsp.domain.config import ForgeConfig
from forge_lsp.domain.events import Event
from forge_lsp.domain.messages import AssistantReply, ToolCall
from forge_lsp.domain.retry import ModelError
from forge_lsp.state.store import StateStore
from forge_lsp.templates import TemplateEngine
from forge_lsp.tools.base import ToolContext
from forge_lsp.tools.registry import ToolRegistry
from forge_lsp.tools.workspace import Workspace


def call(name: str, _id: str | None = None, **args: Any) -> ToolCall:
    return ToolCall(_id or f"id-{name}-{json.dumps(args, sort_keys=True)}", name, json.dumps(args))


def tools(*calls: ToolCall, text: str = "") -> AssistantReply:
    return AssistantReply(text, tuple(calls), "tool_calls")


def answer(text: str) -> AssistantReply:
    return AssistantReply(text, (), "stop")


@dataclass
class FakeModel:
    """Replies in order; records every request's messages."""

    replies: list[AssistantReply | ModelError | float]
    requests: list[list[dict[str, Any]]] = field(default_factory=list)
    offered: list[list[str]] = field(default_factory=list)
    """The names of the tools each request offered."""

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_text: Callable[[str], None],
        on_reasoning: Callable[[str], None] | None = None,
    ) -> AssistantReply:
        self.requests.append(json.loads(json.dumps(messages)))
        self.offered.append([t["function"]["name"] for t in tools])
        item = self.replies.pop(0) if self.replies else answer("done")
        while isinstance(item, float):  # a pause, for cancel tests
            await asyncio.sleep(item)
            item = self.replies.pop(0) if self.replies else answer("done")
        if isinstance(item, ModelError):
            raise item
        if item.reasoning and on_reasoning is not None:
            on_reasoning(item.reasoning)
        if item.text:
            on_text(item.text)
        return item


@dataclass
class Harness:
    root: Path
    model: FakeModel
    config: ForgeConfig = field(default_factory=ForgeConfig)
    events: list[Event] = field(default_factory=list)
    sleeps: list[float] = field(default_factory=list)
    agent: Agent | None = None
    hooks: Any = None
    """The turn's UserHooks (core/user_hooks.py), made from the config's [[hooks]] when it has some."""

    def orchestrator(self) -> Orchestrator:
        ctx = ToolContext(Workspace(self.root), self.config)

        async def sleep(s: float) -> None:
            self.sleeps.append(s)

        self.store = StateStore(self.root)
        if self.hooks is None and self.config.hooks:
            self.hooks = UserHooks(
                self.config.hooks,
                root=self.root,
                turn_id="t1",
                conversation_id=self.store.current_conversation(),
                max_stop_blocks=self.config.hook_settings.max_stop_blocks,
            )
        return Orchestrator(
            self.config,
            self.model,
            BoundTools(ToolRegistry(), ctx, agent=self.agent),
            TemplateEngine(self.root),
            self.store,
            sleep=sleep,
            user_hooks=self.hooks,
        )

    async def run(self, prompt: str = "do it") -> Any:
        orch = self.orchestrator()
        cid = self.store.current_conversation()
        return await orch.run(TurnRequest("t1", cid, prompt), self.events.append)

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]
