"""Secrets from the environment never reach transcripts or logs."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from functools import cache

_SECRET_NAME = re.compile(r"(_API_KEY|_TOKEN|_SECRET|_PASSWORD|APIKEY)$", re.I)
MIN_SECRET_LEN = 6


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    """Values of variables named like *_API_KEY, *_TOKEN, *_SECRET, longest first."""
    if env is None:
        return list(_process_secrets())
    values = {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= MIN_SECRET_LEN}
    return sorted(values, key=len, reverse=True)


@cache
def _process_secrets() -> tuple[str, ...]:
    # The process environment does not change under a running server: scan it once.
    return tuple(secret_values(dict(os.environ)))


def redact(text: str, secrets: list[str] | None = None) -> str:
    """text with every secret value replaced by [REDACTED]."""
    for value in secret_values() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, "[REDACTED]")
    return text
