"""The real llama-server tier: llama.cpp's llama-server, built by install.sh (once, cached outside the repository),
serving SmolLM2-135M-Instruct on 127.0.0.1.

FORGE_LLAMA_SERVER=0 skips these tests; =1 builds llama-server first when it is not built. Unset, they run when
it is built and are skipped (saying how to build it) when it is not, except under CI (CI=true, as .ci/run sets
it), which builds it: CI always runs them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from support.llama_server import ENV, Build, LlamaServer, build, built, start, stop, strict


@pytest.fixture(scope="session")
def llama_build() -> Build:
    wanted = os.environ.get(ENV, "")
    if wanted == "0":
        pytest.skip(f"{ENV}=0: the real llama-server tests are skipped")
    if not built() and wanted != "1" and not strict():
        pytest.skip(f"llama-server is not built: {ENV}=1 builds it once (tests/llama_server/install.sh, minutes)")
    try:
        return build()
    except RuntimeError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def llama(llama_build: Build, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """llama-server with a chat template that has tools (as docs/models.md says to run it), a 4096-token context."""
    server = start(llama_build, tmp_path_factory.mktemp("llama") / "server.log", ctx=4096, tools_template=True)
    yield server
    stop(server)


@pytest.fixture(scope="module")
def llama_own_template(llama_build: Build, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """llama-server with SmolLM2's own chat template, which has no tools in it."""
    server = start(llama_build, tmp_path_factory.mktemp("llama-own") / "server.log", ctx=8192, tools_template=False)
    yield server
    stop(server)
