#!/usr/bin/env bash
# Set everything up from scratch (venv + test deps), check the import layers and lint, and run
# the default test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh test
.venv/bin/lint-imports --no-cache
.venv/bin/ruff check --quiet .
# The type checker ([tool.mypy] in pyproject.toml; its cache beside the environment, in .venv)
.venv/bin/mypy
# Two processes (this machine has two cores; most tests wait on paced audio), one test file per
# process at a time: a file's module fixtures (a Ray cluster, a fake server) are set up once.
# A test whose run lost pace, or whose latencies its run flags as untrustworthy (this machine
# stalled under the other process's load: a fact about the machine, never a verdict), is run
# again, as the product re-runs such a turn; any other failure is final, and one that fails so
# three times fails. Tests run again are named (-rR), and the slowest listed.
.venv/bin/python -m pytest -q -n 2 --dist loadfile -m "not slow and not stress" --reruns 2 --only-rerun "lost.pace|did.not.keep.pace" -rR --durations 15 "$@"
# Then the heavy end-to-end tests (tests/slow_tests.py), the same way: the default run above stays
# under 10 minutes, and nothing is left out of CI.
.venv/bin/python -m pytest -q -n 2 --dist loadfile -m "slow and not stress" --reruns 2 --only-rerun "lost.pace|did.not.keep.pace" -rR --durations 15 "$@"
# Then the stress tests alone: their CPU hogs would make every other test's machine lose pace.
exec .venv/bin/python -m pytest -q -s -m stress "$@"  # -s: they print what they measured
