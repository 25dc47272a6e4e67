#!/usr/bin/env bash
# Set everything up from scratch (venv + app) and open the offline demo: no network, no keys.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/arena-tui demo "$@"
