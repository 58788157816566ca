"""Review before an edit lands (edit_review = "confirm"): the WorkspaceEdit the user is asked to accept.

Each edit of the agent (write, patch, multi_patch, remove, undo), to an open document or to a file
the editor has not opened, goes to the client as one WorkspaceEdit whose every change carries one
change annotation with needsConfirmation=true, labelled with the tool call ("Forge: patch app.py").
The client shows it (VS Code's Refactor Preview, the Neovim plugin's diff) and answers applied or
not. A client that cannot show such an edit is not sent one: the edit fails, saying why (it is
never applied unreviewed).
"""

from __future__ import annotations

from lsprotocol import types as t

from forge_lsp.lsp.textedits import minimal_edits

ANNOTATION = "forge.review"


def cannot_review(caps: t.ClientCapabilities | None, resource: str | None = None) -> str | None:
    """Why this client cannot review an edit (resource: "create" or "delete" for a file operation), or None."""
    workspace = caps.workspace if caps is not None else None
    edit = workspace.workspace_edit if workspace is not None else None
    if workspace is None or not workspace.apply_edit:
        return "it does not accept workspace edits (workspace/applyEdit)"
    if edit is None or not edit.document_changes or edit.change_annotation_support is None:
        return "it cannot show an edit for confirmation (no change annotation support)"
    if resource is not None and resource not in (edit.resource_operations or ()):
        return f"it cannot {resource} files through a workspace edit"
    return None


def label(tool: str | None, rel: str) -> str:
    """What the user is asked about: the tool call ("Forge: patch app.py")."""
    return f"Forge: {tool or 'edit'} {rel}"


def _annotation(title: str, rel: str) -> dict[str, t.ChangeAnnotation]:
    description = f"The agent's change to {rel}: accept to apply it, reject to tell the agent it was refused."
    return {ANNOTATION: t.ChangeAnnotation(label=title, needs_confirmation=True, description=description)}


def text_change(
    uri: str, version: int | None, old: str, new: str, title: str, rel: str, encoding: str = t.PositionEncodingKind.Utf16
) -> t.WorkspaceEdit:
    """The edit that turns old into new in uri (version None: a file the editor has not opened), for review."""
    edits = [
        t.AnnotatedTextEdit(range=e.range, new_text=e.new_text, annotation_id=ANNOTATION)
        for e in minimal_edits(old, new, encoding, whole_lines=True)
    ]
    change = t.TextDocumentEdit(text_document=t.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=edits)  # type: ignore[arg-type]
    return t.WorkspaceEdit(document_changes=[change], change_annotations=_annotation(title, rel))


def create_file(uri: str, content: str, title: str, rel: str) -> t.WorkspaceEdit:
    """A new file holding content, for review: CreateFile, then its text inserted."""
    create = t.CreateFile(uri=uri, options=t.CreateFileOptions(overwrite=False, ignore_if_exists=False), annotation_id=ANNOTATION)
    changes: list[t.TextDocumentEdit | t.CreateFile | t.RenameFile | t.DeleteFile] = [create]
    if content:
        start = t.Position(line=0, character=0)
        insert = t.AnnotatedTextEdit(range=t.Range(start=start, end=start), new_text=content, annotation_id=ANNOTATION)
        changes.append(
            t.TextDocumentEdit(text_document=t.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None), edits=[insert])
        )
    return t.WorkspaceEdit(document_changes=changes, change_annotations=_annotation(title, rel))


def delete_file(uri: str, title: str, rel: str) -> t.WorkspaceEdit:
    """The file removed, for review."""
    delete = t.DeleteFile(
        uri=uri, options=t.DeleteFileOptions(recursive=False, ignore_if_not_exists=False), annotation_id=ANNOTATION
    )
    return t.WorkspaceEdit(document_changes=[delete], change_annotations=_annotation(title, rel))
