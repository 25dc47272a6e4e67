#!/usr/bin/env bash
# Set everything up from scratch (venv + test deps), check the import layers and lint, and run
# the default test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh test
.venv/bin/lint-imports --no-cache
.venv/bin/ruff check --quiet .
exec .venv/bin/python -m pytest -q "$@"
