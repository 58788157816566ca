"""An MCP tool result as the model's text: text content as it is; images, audio and resources described."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any


def _size(data: str) -> str:
    try:
        n = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        n = len(data)
    return f"{n} bytes"


def describe(block: Any) -> str:
    """One content block as text (the SDK's types, by their type field)."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind == "image":
        return f"[image: {block.mime_type}, {_size(block.data)}; not shown to the model]"
    if kind == "audio":
        return f"[audio: {block.mime_type}, {_size(block.data)}; not shown to the model]"
    if kind == "resource":
        res = block.resource
        uri = getattr(res, "uri", "")
        text = getattr(res, "text", None)
        if text is not None:
            return f"[resource {uri}]\n{text}"
        mime = getattr(res, "mime_type", None) or "binary"
        return f"[resource {uri}: {mime}, {_size(getattr(res, 'blob', '') or '')}; not shown to the model]"
    if kind == "resource_link":
        name = getattr(block, "name", "") or ""
        return f"[resource link: {block.uri}{' (' + name + ')' if name else ''}]"
    try:
        return json.dumps(block.model_dump(mode="json", exclude_none=True), ensure_ascii=False)[:2000]
    except Exception:  # an unknown block: its type at least
        return f"[{kind or type(block).__name__} content]"


def result_text(result: Any) -> str:
    """The whole result's text: its blocks one after another; structured content when it has no blocks."""
    parts = [describe(block) for block in (getattr(result, "content", None) or [])]
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, indent=1))
    return "\n".join(parts) if parts else "(no output)"
