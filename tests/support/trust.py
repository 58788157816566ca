"""Trusting a test's workspace the way a user does: in the user's trust store.

tests/conftest.py gives every test its own XDG_STATE_HOME, so a trust recorded
here is the test's alone. Call it after writing the workspace's .forge.toml,
templates and script: a change to them afterwards makes the workspace
untrusted again (as it would for a user).
"""

from __future__ import annotations

from pathlib import Path

from forge_lsp.trust import TrustStore


def trust_workspace(root: Path) -> None:
    """Record root as trusted, with its files as they are now."""
    TrustStore().trust(root)
