"""The argument each forge.* command takes: one JSON object, typed.

pygls 2 converts nothing for these commands (their handlers take ``(ls, *args)``): the handler gets the object
as the client sent it, a dict, and checks each field itself, so that a bad one is an InvalidParams naming it.
These TypedDicts say what that dict holds; lsp/server.py's command table gives each command its class, and
docs/design.md's command table writes the same shape (``{id, uri?}``: tests/unit/test_command_table.py).
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict, get_origin, get_type_hints


class FolderArgument(TypedDict):
    """{uri?}: a document or folder of the workspace folder the command is for (default: the first)."""

    uri: NotRequired[str]


class RunArgument(TypedDict):
    """forge.run's: the prompt, the model and agent for this turn, and the editor's document and selection."""

    prompt: str
    model: NotRequired[str]
    agent: NotRequired[str]
    uri: NotRequired[str]
    range: NotRequired[dict[str, Any]]
    """An LSP Range of the document at uri: the selection sent along."""


class CancelArgument(TypedDict):
    """forge.cancel's: the turn to cancel (default: the one running)."""

    turnId: NotRequired[str]


class TrustArgument(TypedDict):
    """forge.trust's: revoke takes the trust back."""

    uri: NotRequired[str]
    revoke: NotRequired[bool]


class IdArgument(TypedDict):
    """A conversation's or an agent's id, in a workspace folder."""

    id: str
    uri: NotRequired[str]


class UndoTurnArgument(TypedDict):
    """forge.undoTurn's: the turn to undo (default: the last that changed files)."""

    turnId: NotRequired[str]
    uri: NotRequired[str]


class NameArgument(TypedDict):
    """An MCP server's name, in a workspace folder."""

    name: str
    uri: NotRequired[str]


def shape(argument: type) -> str:
    """An argument class as docs/design.md writes it: its fields in order, an optional one with "?"."""
    # With postponed annotations a TypedDict counts every field required; get_type_hints keeps NotRequired.
    hints = get_type_hints(argument, include_extras=True)
    return "{" + ", ".join(name + ("?" if get_origin(hint) is NotRequired else "") for name, hint in hints.items()) + "}"
