#!/usr/bin/env bash
# Set up (first time) and run the whole test suite: lint, types, unit, provider, UI and browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy  # every package: the list is `files` in pyproject.toml
status=0
.venv/bin/python -m pytest "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure here" >&2
  exit 1
fi
exit "$status"
