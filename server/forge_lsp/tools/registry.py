"""The tool port: dispatch, argument checks, timeouts, and failures as data."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from forge_lsp.domain.messages import ToolCall, ToolResult
from forge_lsp.tools import fetch, followup, fs_search, patch, read, remove, shell, todo, undo, write
from forge_lsp.tools.base import ToolContext, ToolDefinition, ToolFailure, ToolOutput
from forge_lsp.tools.workspace import PathOutsideWorkspace

log = logging.getLogger(__name__)

ALL_TOOLS: tuple[ToolDefinition, ...] = (
    read.TOOL,
    write.TOOL,
    patch.PATCH,
    patch.MULTI_PATCH,
    remove.TOOL,
    undo.TOOL,
    fs_search.TOOL,
    shell.TOOL,
    fetch.TOOL,
    todo.TODO_WRITE,
    todo.TODO_READ,
    followup.TOOL,
)

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def check_arguments(value: Any, schema: Mapping[str, Any], where: str = "arguments") -> None:
    """Check a value against the small JSON-schema subset the tool schemas use."""
    kind = schema.get("type")
    if kind is not None:
        types = _JSON_TYPES[kind]
        bad_bool = isinstance(value, bool) and kind in ("integer", "number")
        if not isinstance(value, types) or bad_bool:
            raise ToolFailure(f"{where}: expected {kind}, got {type(value).__name__} {json.dumps(value, default=str)[:80]}")
    if "enum" in schema and value not in schema["enum"]:
        raise ToolFailure(f"{where}: must be one of {', '.join(map(str, schema['enum']))}, got {value!r}")
    if kind == "object":
        props: Mapping[str, Any] = schema.get("properties", {})
        missing = [k for k in schema.get("required", ()) if k not in value]
        if missing:
            raise ToolFailure(f"{where}: missing required field(s) {', '.join(missing)}")
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                check_arguments(item, props[key], f"{where}.{key}")
            elif extra is False:
                raise ToolFailure(f"{where}: unknown field {key!r}; allowed: {', '.join(props) or 'none'}")
            elif isinstance(extra, Mapping):
                check_arguments(item, extra, f"{where}.{key}")
    if kind == "array" and "items" in schema:
        for i, item in enumerate(value):
            check_arguments(item, schema["items"], f"{where}[{i}]")


class ToolRegistry:
    """Runs tool calls. Never raises for a bad call: every failure becomes a ToolResult with is_error."""

    def __init__(self, tools: Iterable[ToolDefinition] = ALL_TOOLS) -> None:
        self.tools = {t.name: t for t in tools}

    def schemas(self) -> list[dict[str, Any]]:
        """The tool schemas the model is given."""
        return [t.schema() for t in self.tools.values()]

    def names(self) -> list[str]:
        """The tool names, in the order the model sees them."""
        return list(self.tools)

    async def call(self, call: ToolCall, ctx: ToolContext) -> tuple[ToolResult, bool]:
        """Run one call: its result, and whether the turn must yield after it."""
        try:
            output = await self._run(call, ctx)
        except ToolFailure as exc:
            return ToolResult(call.id, call.name, str(exc), is_error=True, path=exc.path), False
        except PathOutsideWorkspace as exc:
            return ToolResult(call.id, call.name, f"path refused: {exc}", is_error=True), False
        except PermissionError as exc:
            return ToolResult(call.id, call.name, f"permission denied: {exc.filename or exc}", is_error=True), False
        except OSError as exc:
            return ToolResult(call.id, call.name, f"I/O error: {exc.strerror or exc} ({exc.filename})", is_error=True), False
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in a tool must not end the turn, let alone the server
            log.exception("tool %s crashed", call.name)
            return ToolResult(
                call.id, call.name, f"internal error in tool {call.name}: {type(exc).__name__}: {exc}", is_error=True
            ), False
        return ToolResult(call.id, call.name, output.text, path=output.path), output.yields

    async def _run(self, call: ToolCall, ctx: ToolContext) -> ToolOutput:
        tool = self.tools.get(call.name)
        if tool is None:
            raise ToolFailure(f"unknown tool {call.name!r}; available tools: {', '.join(self.tools)}")
        args = call.arguments
        if args is None:
            raise ToolFailure(f"arguments are not a JSON object: {call.arguments_json[:200]!r}")
        check_arguments(args, tool.parameters)
        timeout = ctx.config.tool_timeout_secs
        if tool.name == "shell":
            timeout = ctx.config.shell_timeout() + 10  # the shell tool times out (and kills) first
        try:
            # asyncio.timeout, not wait_for: no extra task, so a tool that never blocks never yields.
            async with asyncio.timeout(timeout):
                return await tool.run(args, ctx)
        except TimeoutError:
            raise ToolFailure(f"{call.name} timed out after {timeout} s (tool_timeout_secs)") from None
