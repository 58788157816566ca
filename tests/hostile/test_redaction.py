"""Secrets typed into the editor and text made to slow the redactor (issue 34 items 7 and 10).

The redactor runs on every text the server sends or keeps; what a workspace holds (or an editor buffer
being typed) is the attacker's or the user's, never a reason for a secret to leave or the server to stall.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from forge_lsp.lsp.selection import _unsaved_changes

pytestmark = pytest.mark.timeout(60)

Record = Callable[[str, str, str], None]

DOTENV = {
    "DB_PASS": "db-pass-" + "0xDEADBEEF",
    "MYSQL_PWD": "mysql-pwd-" + "hunter2hunter2",
    "GH_PAT": "gh-pat-" + "11AAAA0000",
    "SMTP_CREDS": "smtp-" + "user:letmein99",
    "NPM_AUTH": "npm-auth-" + "dXNlcjpwYXNz",
    "SENTRY_DSN": "https://" + "0123456789abcdef@o1.ingest.sentry.invalid/42",
    "SESSION_COOKIE": "session-" + "s%3Aabcdef.ghijkl",
    "JWT_PRIVATE": "jwt-private-" + "MIIEvQIBADAN",
    "GOOGLE_CREDENTIALS": '"google creds ' + 'eyJ0eXBlIjoi"',
}


def test_an_unsaved_dotenv_buffer_reaches_the_model_without_its_values(workspace: Path, record_reliability: Record) -> None:
    # The editor's context sends each unsaved buffer's diff with the prompt, unasked (lsp/selection.py): a .env
    # being typed must not send its values, whatever credential name (redact.SECRET_NAMES) each has.
    env = workspace / ".env"
    env.write_text("PORT=8080\n")
    typed = "PORT=8080\n" + "".join(f"{name}={value}\n" for name, value in DOTENV.items())
    ((rel, diff),) = _unsaved_changes([(".env", env, typed)])
    assert rel == ".env" and "+PORT=8080" not in diff  # the diff is what changed, so the check below can fail
    for name, value in DOTENV.items():
        assert f"+{name}=" in diff, name
        assert value.strip('"') not in diff and value.split()[-1] not in diff, name
    assert diff.count("[REDACTED]") == len(DOTENV)
    record_reliability(
        "attack: unsaved .env buffer in the editor's context",
        "DB_PASS, MYSQL_PWD, GH_PAT, SMTP_CREDS, NPM_AUTH, SENTRY_DSN, SESSION_COOKIE, JWT_PRIVATE, GOOGLE_CREDENTIALS",
        "each value [REDACTED] in the prompt the model gets (one SECRET_NAMES list for every redaction)",
    )
