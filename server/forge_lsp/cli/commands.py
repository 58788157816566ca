"""forge-lsp trust, conversations and undo: the user's trust decisions, the workspace's stored conversations,
and undoing a turn's file changes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from forge_lsp.render import say


def trust_command(folder: Path, revoke: bool, status: bool, out: TextIO) -> int:
    """forge-lsp trust DIR [--revoke | --status]: the user's decision, in the user's state folder."""
    from forge_lsp.trust import CHANGED, TRUSTED, TrustStore, trust_files

    store = TrustStore()
    root = folder.resolve()
    if status:
        state = store.state(root)
        words = {TRUSTED: "trusted", CHANGED: "not trusted (its files changed since you trusted it)"}
        revoked = "not trusted (revoked: an editor's own trust does not count until you trust it again)"
        say(out, f"{root}: {words.get(state, revoked if store.revoked(root) else 'not trusted')}")
        return 0 if state == TRUSTED else 1
    if revoke:
        known = store.revoke(root)
        # Recorded either way: no editor's own trust (VS Code's Workspace Trust, Neovim's :trust) brings it back.
        said = "no longer trusted" if known else "was not trusted"
        say(out, f"{root}: {said}, and an editor's own trust will not count for it until you trust it again")
        return 0
    store.trust(root)
    present = [p.relative_to(root).as_posix() if p.is_relative_to(root) else str(p) for p in trust_files(root) if p.exists()]
    covered = ", ".join(present) if present else "no .forge.toml or .forge/templates yet"
    say(out, f"{root}: trusted ({covered}); a change to these files asks again. Recorded in {store.path}")
    # What the trusted config will say at every run, said now: a typo, a file that does not parse.
    from forge_lsp.cli.headless import say_problems
    from forge_lsp.config import ConfigLoader

    say_problems(ConfigLoader(root).load(trusted=True).problems)
    return 0


def conversations_command(workspace: Path, as_json: bool, out: TextIO) -> int:
    """forge-lsp conversations: the workspace's stored conversations, the latest first."""
    import json

    from forge_lsp.core.runtime import WorkspaceRuntime
    from forge_lsp.state.dirs import stored_state_file

    if stored_state_file(workspace) is None:  # nothing stored, in .forge/ or the fallback: listing creates no .forge/
        say(out, "[]" if as_json else f"no conversations in {workspace.resolve()} yet")
        return 0
    runtime = WorkspaceRuntime(workspace, on_notice=lambda message: say(sys.stderr, message))
    try:
        listed = runtime.list_conversations()
        current = runtime.current_conversation() if listed else None
    finally:
        runtime.close()
    if as_json:
        say(out, json.dumps(listed, indent=2))
        return 0
    if not listed:
        say(out, f"no conversations in {runtime.root} yet")
        return 0
    for c in listed:
        mark = "*" if c["id"] == current else " "
        status = c["lastStatus"] or "-"
        title = c["title"] or "(no turn yet)"
        say(out, f"{mark} {c['id']}  {c['updated']}  {c['turns']:>3} turns  {status:<11} {c['tokens']:>8} tokens  {title}")
    say(out, '(* the current one; `forge-lsp run -c ID "PROMPT"` continues another, a start of its id will do; --new starts one)')
    return 0


UNDO_WHY = {"removed": " (the turn created it)", "recreated": " (the turn removed it)"}


def undo_command(workspace: Path, turn: str | None, out: TextIO) -> int:
    """forge-lsp undo [--turn ID]: put back the files a turn changed (default: the last turn that changed
    files); 1 with one line on stderr when refused (a file changed since, already undone, a turn running)."""
    import asyncio

    from forge_lsp.core.errors import TurnInProgress
    from forge_lsp.core.runtime import WorkspaceRuntime
    from forge_lsp.core.turn_undo import UndoRefused
    from forge_lsp.state.dirs import stored_state_file

    if stored_state_file(workspace) is None:  # nothing stored: no turn to undo, and no .forge/ made to say so
        say(sys.stderr, f"forge-lsp: no turn in {workspace.resolve()} has changed files yet: nothing to undo")
        return 1
    runtime = WorkspaceRuntime(workspace, on_notice=lambda message: say(sys.stderr, message))
    try:
        result = asyncio.run(runtime.undo_turn(turn))
    except KeyError:
        say(
            sys.stderr,
            f"forge-lsp: no turn {turn!r} in {runtime.root} (`forge-lsp conversations --json` lists each turn's files)",
        )
        return 1
    except (TurnInProgress, UndoRefused) as exc:
        say(sys.stderr, f"forge-lsp: {exc}")
        return 1
    finally:
        runtime.close()
    for file in result["files"]:
        say(out, f"  {file['action']} {file['path']}{UNDO_WHY.get(file['action'], '')}")
    done = len(result["files"])
    say(out, f"undid turn {result['turnId']}: {done} file{'s' if done != 1 else ''} put back as before the turn")
    return 0
