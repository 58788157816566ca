"""The tool port: dispatch, argument checks, timeouts, and failures as data."""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from forge_lsp.domain.messages import ToolCall, ToolResult
from forge_lsp.domain.tool_catalog import CATALOG, ToolFacts
from forge_lsp.patterns import UnsafePattern, guard_jsonschema, search
from forge_lsp.tools.base import CommandMark, Implementation, ToolContext, ToolDefinition, ToolFailure, ToolOutput
from forge_lsp.tools.workspace import PathOutsideWorkspace

log = logging.getLogger(__name__)


def builtin(facts: ToolFacts) -> ToolDefinition:
    """A built-in tool's definition: its catalog entry with the Implementation its module declares."""
    module, attribute = facts.implementation.rsplit(".", 1)
    implementation = getattr(importlib.import_module(f"forge_lsp.tools.{module}"), attribute)
    if not isinstance(implementation, Implementation):
        raise TypeError(f"forge_lsp.tools.{facts.implementation} is not a tool's Implementation")
    return ToolDefinition.builtin(facts, implementation)


ALL_TOOLS: tuple[ToolDefinition, ...] = tuple(builtin(facts) for facts in CATALOG)
"""The built-in tools, in the catalog's order (the order the model sees them)."""

MAX_REPORTED_ERRORS = 3
"""A call with many bad arguments is told its first few problems (enough to fix the call)."""
_LATE: set[asyncio.Future[None]] = set()
"""The looks at the disk after a call that was cancelled, running on (a reference keeps each task alive)."""
_VALIDATORS: dict[int, tuple[Mapping[str, Any], Any]] = {}
"""Compiled validators by schema object (a schema is checked once, then reused for every call)."""


def _validator(schema: Mapping[str, Any]) -> Any:
    cached = _VALIDATORS.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    from jsonschema.validators import validator_for  # imported on the first call: the server starts without it

    guard_jsonschema()  # an MCP server's pattern (^(a+)+$) would otherwise backtrack on the event loop
    cls = validator_for(schema)
    cls.check_schema(schema)
    if len(_VALIDATORS) > 1024:  # MCP servers' schemas come and go with their tool lists
        _VALIDATORS.clear()
    validator = cls(schema)
    _VALIDATORS[id(schema)] = (schema, validator)
    return validator


def _where(base: str, path: Iterable[Any]) -> str:
    out = base
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _describe(error: Any, where: str) -> str:
    """One jsonschema error as one clear line, in the words the model was given before."""
    at = _where(where, error.absolute_path)
    value, kind = error.instance, error.validator
    if kind == "type":
        expected = error.validator_value if isinstance(error.validator_value, str) else " or ".join(error.validator_value)
        return f"{at}: expected {expected}, got {type(value).__name__} {json.dumps(value, default=str)[:80]}"
    if kind == "required":
        missing = [k for k in error.validator_value if isinstance(value, dict) and k not in value]
        return f"{at}: missing required field(s) {', '.join(missing)}"
    if kind == "additionalProperties" and error.validator_value is False and isinstance(value, dict):
        allowed = list(error.schema.get("properties", {}))
        patterns = error.schema.get("patternProperties", {})
        extra = [k for k in value if k not in allowed and not any(_matches(p, k) for p in patterns)]
        return f"{at}: unknown field {extra[0]!r}; allowed: {', '.join(allowed) or 'none'}" if extra else f"{at}: {error.message}"
    if kind == "enum":
        return f"{at}: must be one of {', '.join(map(str, error.validator_value))}, got {value!r}"
    return f"{at}: {error.message[:300]}"


def _matches(pattern: str, text: str) -> bool:
    try:
        return search(pattern, text)
    except UnsafePattern:
        return True  # as the validator took it: not checked


def check_arguments(value: Any, schema: Mapping[str, Any], where: str = "arguments") -> None:
    """Check a call's arguments against its tool's JSON Schema (the jsonschema library); ToolFailure names what is wrong."""
    try:
        validator = _validator(schema)
    except Exception as exc:  # an MCP server's schema that is not a valid schema: the server checks its own input
        log.warning("input schema cannot be used (%s); arguments are not checked", str(exc).splitlines()[0])
        return
    try:
        errors = sorted(validator.iter_errors(value), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    except Exception as exc:  # a $ref that cannot be resolved (nothing is fetched): the server checks its own input
        log.warning("input schema cannot be checked (%s); arguments are not checked", str(exc).splitlines()[0][:200])
        return
    if errors:
        # jsonschema reports each missing field as an error of its own, and each is described with all of them:
        # said once, so that the next wrong thing (a field named `path`, not `file_path`) is not cut off.
        said = list(dict.fromkeys(_describe(e, where) for e in errors))
        raise ToolFailure("; ".join(said[:MAX_REPORTED_ERRORS]))


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
        """Run one call: its result, and whether the turn must yield after it.

        A call that may change any file (the shell, an MCP tool that is not read-only) is followed by a look
        at the disk: the editor's open documents it changed follow it before the next call (ToolContext)."""
        ctx.notes.clear()
        tool = self.tools.get(call.name)
        mark = await self._command_started(ctx) if tool is not None and tool.changes_files and tool.path_arg is None else None
        try:
            output: ToolOutput | ToolResult = await self._output(call, ctx)
        except asyncio.CancelledError:
            if mark is not None:  # the command was stopped: what it changed still reaches the editor
                task = asyncio.ensure_future(self._command_ended(ctx, mark, call.name))
                _LATE.add(task)
                task.add_done_callback(_LATE.discard)
            raise
        if mark is not None:
            await self._command_ended(ctx, mark, call.name)
        if isinstance(output, ToolResult):
            if ctx.notes:
                output = replace(output, output="\n\n".join([output.output, *ctx.notes]))
            return output, False
        text = "\n\n".join([output.text, *ctx.notes])  # an edit that stayed in the editor's buffer: the model knows
        return ToolResult(call.id, call.name, text, path=output.path), output.yields

    @staticmethod
    async def _command_started(ctx: ToolContext) -> CommandMark | None:
        try:
            return await ctx.command_started()
        except Exception:  # a bug here must not stop the call: its changes are then not followed
            log.exception("cannot note the open documents before the call")
            return None

    @staticmethod
    async def _command_ended(ctx: ToolContext, mark: CommandMark, tool: str) -> None:
        try:
            await ctx.command_ended(mark, tool)
        except Exception:
            log.exception("cannot follow what the call changed on disk")

    async def _output(self, call: ToolCall, ctx: ToolContext) -> ToolOutput | ToolResult:
        """The call's output, or its failure as the result the model gets."""
        try:
            return await self._run(call, ctx)
        except ToolFailure as exc:
            return ToolResult(call.id, call.name, str(exc), is_error=True, path=exc.path)
        except PathOutsideWorkspace as exc:
            return ToolResult(call.id, call.name, f"path refused: {exc}", is_error=True)
        except PermissionError as exc:
            return ToolResult(call.id, call.name, f"permission denied: {exc.filename or exc}", is_error=True)
        except OSError as exc:
            return ToolResult(call.id, call.name, f"I/O error: {exc.strerror or exc} ({exc.filename})", is_error=True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in a tool must not end the turn, let alone the server
            log.exception("tool %s crashed", call.name)
            return ToolResult(
                call.id, call.name, f"internal error in tool {call.name}: {type(exc).__name__}: {exc}", is_error=True
            )

    async def _run(self, call: ToolCall, ctx: ToolContext) -> ToolOutput:
        tool = self.tools.get(call.name)
        if tool is None:
            raise ToolFailure(f"unknown tool {call.name!r}; available tools: {', '.join(self.tools)}")
        args = call.arguments
        if args is None:
            raise ToolFailure(f"arguments are not a JSON object: {call.arguments_json[:200]!r}")
        check_arguments(args, tool.parameters)
        timeout = tool.timeout(ctx.config) if tool.timeout is not None else ctx.config.tool_timeout_secs
        try:
            # asyncio.timeout, not wait_for: no extra task, so a tool that never blocks never yields.
            async with asyncio.timeout(timeout):
                return await tool.run(args, ctx)
        except TimeoutError:
            raise ToolFailure(f"{call.name} timed out after {timeout} s (tool_timeout_secs)") from None
