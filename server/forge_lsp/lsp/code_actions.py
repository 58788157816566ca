"""Code actions: "Forge: Fix <message>" on any diagnostic the client sends (a compiler's, a linter's, a test
runner's), "Forge: Explain" and "Forge: Edit selection…" on a selection.

The list is cheap: no model call, no document or disk read, only the request's own diagnostics and range.
codeAction/resolve builds the command: forge.run (an ordinary turn) with a prompt that carries the file, the
range, the diagnostic and the code around it; or forge.editSelection, which the client implements (it asks
the user for an instruction, then sends forge.run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types as t
from pygls.exceptions import JsonRpcInvalidParams

from forge_lsp.lsp import convert
from forge_lsp.lsp.language_server import ForgeLanguageServer, uri_to_path
from forge_lsp.lsp.selection import document_lines, lines_label

KINDS = [t.CodeActionKind.QuickFix, t.CodeActionKind.RefactorRewrite]
OPTIONS = t.CodeActionOptions(code_action_kinds=KINDS, resolve_provider=True)
EDIT_SELECTION = "forge.editSelection"
"""A client-side command (the VS Code extension, the Neovim plugin): asks for an instruction, then runs forge.run."""
TITLE_CHARS = 60
"""Of a diagnostic's message in a Fix title."""
MAX_FIXES = 10
"""Fix actions in one list, at most (one per diagnostic)."""
AROUND = 5
"""Lines of code shown before and after a diagnostic's lines."""
MAX_AROUND_CHARS = 8_000
MAX_MESSAGE_CHARS = 8_000
"""Of a diagnostic's message in a Fix prompt (a test runner may report pages)."""
EXPLAIN_PROMPT = "Explain the selected code: what it does and why, and anything surprising in it."
TAG = "forge"
"""The key in a Forge action's data (another server's action never has it)."""


def one_line(text: str, limit: int = TITLE_CHARS) -> str:
    """A message's first line, at most limit characters (an ellipsis where it was cut)."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    flat = " ".join(first.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def wanted(kind: str | None, only: list[str] | None) -> bool:
    """Whether the client asked for actions of this kind (context.only: a kind or a parent of it)."""
    if not only:
        return True
    return kind is not None and any(kind == o or kind.startswith(o + ".") for o in only)


def is_own(diag: t.Diagnostic) -> bool:
    """Forge's own diagnostics (a failed tool call, an interrupt, a config problem): no Fix for them."""
    return diag.source is not None and (diag.source == convert.SOURCE or diag.source.startswith(convert.SOURCE + "."))


def code_actions(params: t.CodeActionParams, roots: list[Path] | None = None) -> list[t.CodeAction]:
    """The Forge actions for a range: one Fix per foreign diagnostic, Explain and Edit on a selection.

    roots: the workspace folders; a file in none of them gets no action (a turn runs in a folder)."""
    uri = params.text_document.uri
    if not uri.startswith("file:"):
        return []
    if roots is not None:
        try:
            path = uri_to_path(uri)
        except JsonRpcInvalidParams:
            return []
        if not any(path.is_relative_to(root) for root in roots):
            return []
    only = [str(k) for k in params.context.only] if params.context.only else None
    found: list[t.CodeAction] = []
    if wanted(t.CodeActionKind.QuickFix, only):
        for diag in params.context.diagnostics:
            if len(found) >= MAX_FIXES:
                break
            if is_own(diag) or not diag.message.strip():
                continue
            found.append(
                t.CodeAction(
                    title=f"Forge: Fix {one_line(diag.message)}",
                    kind=t.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    data={TAG: "fix", "uri": uri},
                )
            )
    start, end = params.range.start, params.range.end
    if (start.line, start.character) != (end.line, end.character):
        if wanted(None, only):
            found.append(t.CodeAction(title="Forge: Explain", data={TAG: "explain", "uri": uri}))
        if wanted(t.CodeActionKind.RefactorRewrite, only):
            found.append(
                t.CodeAction(
                    title="Forge: Edit selection…", kind=t.CodeActionKind.RefactorRewrite, data={TAG: "edit", "uri": uri}
                )
            )
    for action in found:
        assert isinstance(action.data, dict)
        action.data["range"] = range_dict(params.range)
    return found


def range_dict(rng: t.Range) -> dict[str, Any]:
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


def relative(ls: ForgeLanguageServer, uri: str) -> str:
    """uri as a path relative to its workspace folder (the whole path when it is in none)."""
    path = uri_to_path(uri)
    for root in sorted(ls.roots(), key=lambda r: len(r.parts), reverse=True):
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            continue
    return str(path)


async def fix_prompt(ls: ForgeLanguageServer, uri: str, diag: t.Diagnostic) -> str:
    """The prompt of a Fix: the file, the range, the diagnostic (message, source, code) and the code around it."""
    rel = relative(ls, uri)
    first, last = diag.range.start.line, diag.range.end.line
    if last > first and diag.range.end.character == 0:
        last -= 1
    about = [f"source: {diag.source}" if diag.source else "source: not given"]
    if diag.code is not None and diag.code != "":
        about.append(f"code: {diag.code}")
    if diag.severity is not None:
        about.append(f"severity: {t.DiagnosticSeverity(diag.severity).name.lower()}")
    place = f"{lines_label(first, last)}, column {diag.range.start.character + 1}"
    message = diag.message.strip()
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[:MAX_MESSAGE_CHARS] + " … (cut)"
    prompt = f"Fix this problem in {rel} at {place} ({', '.join(about)}):\n\n{message}"
    lines = await document_lines(ls, uri, uri_to_path(uri), rel)
    if lines:
        lo, hi = max(0, first - AROUND), min(len(lines) - 1, last + AROUND)
        width = len(str(hi + 1))
        numbered = []
        for n in range(lo, hi + 1):
            mark = ">" if first <= n <= last else " "
            numbered.append(f"{mark} {n + 1:>{width}} | {lines[n].rstrip()}")
        code = "\n".join(numbered)[:MAX_AROUND_CHARS]
        fence = "```"
        while fence in code:
            fence += "`"
        prompt += (
            f"\n\nThe code around it ({lines_label(lo, hi)} of {rel}; > marks the problem's lines):\n{fence}\n{code}\n{fence}"
        )
    return prompt


async def resolve(ls: ForgeLanguageServer, action: t.CodeAction) -> t.CodeAction:
    """codeAction/resolve: a Forge action gets its command; any other comes back as it was."""
    data = action.data
    if not isinstance(data, dict) or data.get(TAG) not in ("fix", "explain", "edit"):
        return action
    uri, rng, kind = data.get("uri"), data.get("range"), data[TAG]
    if kind == "fix" and not action.diagnostics:
        raise JsonRpcInvalidParams("codeAction/resolve: a Forge Fix needs its diagnostic: list the actions again")
    if not isinstance(uri, str) or not isinstance(rng, dict):
        raise JsonRpcInvalidParams("codeAction/resolve: a Forge action needs data {uri, range}: list the actions again")
    if kind == "fix":
        assert action.diagnostics is not None
        diag = action.diagnostics[0]
        try:
            prompt = await fix_prompt(ls, uri, diag)
        except (OSError, ValueError) as exc:
            raise JsonRpcInvalidParams(f"codeAction/resolve: cannot read {uri}: {exc}") from None
        arg = {"prompt": prompt, "uri": uri, "range": range_dict(diag.range)}
        action.command = t.Command(title=action.title, command="forge.run", arguments=[arg])
    elif kind == "explain":
        action.command = t.Command(
            title=action.title, command="forge.run", arguments=[{"prompt": EXPLAIN_PROMPT, "uri": uri, "range": rng}]
        )
    else:
        action.command = t.Command(title=action.title, command=EDIT_SELECTION, arguments=[{"uri": uri, "range": rng}])
    return action
