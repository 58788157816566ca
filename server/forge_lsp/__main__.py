"""python -m forge_lsp: the same as the forge-lsp command."""

import sys

from forge_lsp.cli import main

sys.exit(main())
