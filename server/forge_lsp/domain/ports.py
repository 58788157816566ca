"""The ports the orchestrator receives: model, tools, templates, history."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from forge_lsp.domain.messages import AssistantReply, ChatMessage, Compaction, ToolCall, ToolResult


class ModelPort(Protocol):
    """One chat completion per call; raises domain.retry.ModelError on failure."""

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_text: Callable[[str], None],
        on_reasoning: Callable[[str], None] | None = None,
    ) -> AssistantReply: ...

    """on_text gets the streamed text, on_reasoning the streamed reasoning (reasoning_content)."""


class ToolPort(Protocol):
    """Runs tool calls; a failure is a ToolResult with is_error, never an exception."""

    def schemas(self) -> list[dict[str, Any]]: ...

    def names(self) -> list[str]: ...

    async def call(self, call: ToolCall) -> tuple[ToolResult, bool]: ...

    def pending_todos(self) -> list[dict[str, str]]: ...


class TemplatePort(Protocol):
    """Renders a template by file name."""

    def render(self, name: str, context: Mapping[str, Any]) -> str: ...


class HistoryPort(Protocol):
    """Where the conversation is kept, message by message."""

    def history(self, conversation_id: str) -> list[ChatMessage]: ...

    def append(self, conversation_id: str, turn_id: str | None, message: ChatMessage) -> int: ...

    def update(self, row_id: int, message: ChatMessage) -> None: ...

    def compactions(self, conversation_id: str) -> list[Compaction]: ...

    def add_compaction(self, conversation_id: str, compaction: Compaction) -> None: ...
