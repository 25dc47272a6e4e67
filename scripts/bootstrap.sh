#!/usr/bin/env bash
# Find a Python >= 3.12, create .venv next to this repo and install arena-tui into it.
# Usage: scripts/bootstrap.sh [extra]   (extra: "test" installs the test dependencies)
# Runs pip only when .venv is new or pyproject.toml changed since the last install.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"

ok() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; }

find_python() {
    local c
    for c in "${ARENA_TUI_PYTHON:-}" python3.13 python3.12 python3; do
        [ -n "$c" ] && command -v "$c" >/dev/null 2>&1 && ok "$c" && { command -v "$c"; return; }
    done
    if command -v pyenv >/dev/null 2>&1; then
        local v
        for v in $(pyenv versions --bare 2>/dev/null | grep -E '^3\.(1[2-9])' | sort -rV); do
            c="$(pyenv root)/versions/$v/bin/python3"
            [ -x "$c" ] && ok "$c" && { echo "$c"; return; }
        done
    fi
    return 1
}

if [ ! -x .venv/bin/python ] || ! ok .venv/bin/python; then
    py="$(find_python)" || { echo "arena-tui needs Python >= 3.12 (none found on PATH or under pyenv)" >&2; exit 1; }
    echo "using $py ($("$py" --version))" >&2
    rm -rf .venv
    "$py" -m venv .venv
fi
# The install is editable, so only a changed pyproject.toml (dependencies, entry points) needs pip
# again: a stamp per extra holds the hash it was installed from ("test" includes the base).
key="$(sha256sum pyproject.toml | cut -d' ' -f1)"
stamp=".venv/.installed-${1:-base}"
fresh() { [ -f "$1" ] && [ "$(cat "$1")" = "$key" ]; }
if fresh "$stamp" || { [ -z "${1:-}" ] && fresh .venv/.installed-test; }; then
    exit 0
fi
# pip's and setuptools' own chatter (the editable-install warning) goes to a log, shown only on failure.
log="$(mktemp)"
quiet() { "$@" >>"$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; echo "arena-tui setup failed: $*" >&2; exit 1; }; }
echo "installing arena-tui into .venv (once; again only when pyproject.toml changes) …" >&2
quiet .venv/bin/python -m pip install -q --upgrade pip
if [ "${1:-}" = "test" ]; then
    quiet .venv/bin/python -m pip install -q -e ".[test]"
else
    quiet .venv/bin/python -m pip install -q -e .
fi
rm -f "$log"
echo "$key" > "$stamp"
