"""pytest-lsp fixtures: the real server in a subprocess, a fresh workspace per test."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient

from support import forkserver

SERVER = forkserver.command()
"""The server, forked from the worker's fork server (support/forkserver.py): its imports are paid once per worker."""
REAL_SERVER = [sys.executable, "-m", "forge_lsp"]
"""The server started as an editor starts it, for the tests of what happens while it starts."""
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONUNBUFFERED": "1"}


def write_script(root: Path, *responses: Any, name: str = "script.json") -> None:
    """The scripted model's replies for this workspace."""
    (root / name).write_text(json.dumps({"responses": list(responses)}))


def shell(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]}


WORKSPACE_TOML = 'model = "scripted/script.json"\n\n[retry]\nmin_delay_ms = 10\n'
EDITOR_MODEL = "scripted/script.json"
"""The trusted tests' model: the editor's setting, so that a test may write script.json as it goes (the script a
workspace's own .forge.toml names is trust-relevant: changed from outside, it asks for trust again)."""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".forge.toml").write_text(WORKSPACE_TOML)
    return root


class Answers:
    """What the test client answers to window/showMessageRequest."""

    def __init__(self) -> None:
        self.answer: str | None = None
        self.requests: list[t.ShowMessageRequestParams] = []
        self.edits: list[t.ApplyWorkspaceEditParams] = []
        self.apply = True
        self.reason: str | None = "refused by test"
        """The failureReason of an edit not applied (None: the user said no, as VS Code's Refactor Preview answers)."""
        self.on_edit: Any = None
        """Called with each edit before it is answered (a user typing while the edit waits)."""
        self.editor: Any = None
        """A support.editor.FakeEditor that applies the edits to its buffers (and saves them when asked)."""


def capabilities(
    review: bool = True, saves: bool = False, reloads: bool = False, diagnostics: bool = False
) -> t.ClientCapabilities:
    """What the test client says it can do; review: it shows edits for confirmation (as VS Code does);
    saves: it saves documents when the server asks (forge/saveDocuments, as the editors' plugins do);
    reloads: it reads documents again from the disk when the server asks (forge/reloadDocuments)."""
    forge = {"saveDocuments": True} if saves else {}
    if reloads:
        forge["reloadDocuments"] = True
    if diagnostics:
        forge["diagnostics"] = True  # it answers forge/diagnostics (the editor's own diagnostics of a file)
    edit = t.WorkspaceEditClientCapabilities(
        document_changes=True,
        resource_operations=[t.ResourceOperationKind.Create, t.ResourceOperationKind.Rename, t.ResourceOperationKind.Delete],
        change_annotation_support=t.ChangeAnnotationsSupportOptions(groups_on_label=True),
    )
    return t.ClientCapabilities(
        window=t.WindowClientCapabilities(work_done_progress=True),
        workspace=t.WorkspaceClientCapabilities(
            configuration=True,
            apply_edit=True,
            workspace_edit=edit if review else None,
            did_change_watched_files=t.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
        ),
        experimental={"forge": forge} if forge else None,
    )


@pytest.fixture(autouse=True)
def _model_path(request: pytest.FixtureRequest) -> Iterator[None]:
    """@pytest.mark.litellm: this test's server sends the scripted model through litellm's path, as a user's does
    (the suite's servers serve it directly: tests/conftest.py). Autouse, so it runs before the client starts."""
    if request.node.get_closest_marker("litellm") is None:
        yield
        return
    ENV["FORGE_LSP_SCRIPTED"] = "litellm"
    try:
        yield
    finally:
        ENV["FORGE_LSP_SCRIPTED"] = os.environ.get("FORGE_LSP_SCRIPTED", "direct")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=ENV))
async def client(lsp_client: LanguageClient, ws: Path, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    answers = Answers()
    lsp_client.answers = answers  # type: ignore[attr-defined]
    lsp_client.ws = ws  # type: ignore[attr-defined]
    lsp_client.registrations = []  # type: ignore[attr-defined]

    @lsp_client.feature(t.WINDOW_SHOW_MESSAGE_REQUEST)
    def show_message_request(params: t.ShowMessageRequestParams) -> t.MessageActionItem | None:
        answers.requests.append(params)
        return t.MessageActionItem(title=answers.answer) if answers.answer else None

    @lsp_client.feature(t.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: t.ApplyWorkspaceEditParams) -> t.ApplyWorkspaceEditResult:
        answers.edits.append(params)
        if answers.on_edit is not None:
            answers.on_edit(params)
        if answers.editor is not None and answers.apply:
            return answers.editor.apply_edit(params)  # type: ignore[no-any-return]
        return t.ApplyWorkspaceEditResult(applied=answers.apply, failure_reason=None if answers.apply else answers.reason)

    @lsp_client.feature("forge/saveDocuments")
    def save_documents(params: Any) -> Any:
        assert answers.editor is not None, "forge/saveDocuments sent to a client with no editor"
        return answers.editor.save_documents(params)

    @lsp_client.feature("forge/reloadDocuments")
    def reload_documents(params: Any) -> Any:
        assert answers.editor is not None, "forge/reloadDocuments sent to a client with no editor"
        return answers.editor.reload_documents(params)

    @lsp_client.feature("forge/diagnostics")
    def diagnostics(params: Any) -> Any:
        assert answers.editor is not None, "forge/diagnostics sent to a client with no editor"
        return answers.editor.diagnostics(params)

    @lsp_client.feature(t.CLIENT_REGISTER_CAPABILITY)
    def register(params: t.RegistrationParams) -> None:
        lsp_client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    marker = request.node.get_closest_marker("settings")
    init_options = dict(marker.args[0]) if marker else {}
    # The client says the workspace is trusted (as VS Code does for a folder the user trusts), and the scripted
    # model is the editor's setting; @pytest.mark.untrusted tests the untrusted workspace, whose own .forge.toml
    # names the model (ignored until trusted).
    if request.node.get_closest_marker("untrusted") is None:
        init_options.setdefault("workspaceTrusted", True)
        init_options["settings"] = {"model": EDITOR_MODEL, **init_options.get("settings", {})}
        config = ws / ".forge.toml"
        if config.is_file() and config.read_text() == WORKSPACE_TOML:
            (ws / ".forge.toml").write_text("[retry]\nmin_delay_ms = 10\n")
    lsp_client.set_configuration({"maxRequestsPerTurn": 50}, section="forge")
    lsp_client.init_result = await lsp_client.initialize_session(  # type: ignore[attr-defined]
        t.InitializeParams(
            capabilities=capabilities(
                review=request.node.get_closest_marker("no_review") is None,
                saves=request.node.get_closest_marker("saves_documents") is not None,
                reloads=request.node.get_closest_marker("reloads_documents") is not None,
                diagnostics=request.node.get_closest_marker("reports_diagnostics") is not None,
            ),
            root_uri=ws.as_uri(),
            workspace_folders=[t.WorkspaceFolder(uri=ws.as_uri(), name="project")],
            initialization_options=init_options,
            client_info=t.ClientInfo(name=name.args[0]) if (name := request.node.get_closest_marker("client_name")) else None,
        )
    )
    yield
    await lsp_client.shutdown_session()
