"""The baseline for cold start and memory: a pygls server that does nothing."""

from pygls.lsp.server import LanguageServer

if __name__ == "__main__":
    LanguageServer("bare", "1").start_io()
