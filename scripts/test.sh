#!/usr/bin/env bash
# Set everything up from scratch (venv + test deps) and run the default test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh test
exec .venv/bin/python -m pytest -q "$@"
