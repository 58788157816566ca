"""The real llama-server tier: a package, so that its conftest is not the `conftest` module the e2e tests import."""
