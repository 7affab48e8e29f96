#!/usr/bin/env bash
# Create .venv and install everything Memory Lab needs. Idempotent: a second run is quick.
#   scripts/setup.sh          runtime only (what `scripts/run.sh` needs)
#   scripts/setup.sh --test   plus test tools and Debian packages (Chromium, PostgreSQL)
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip --disable-pip-version-check -q)

stamp_ok() { [ -f "$1" ] && [ "$1" -nt "$2" ]; }

if ! stamp_ok .venv/.runtime-installed requirements.txt || ! stamp_ok .venv/.runtime-installed requirements-nodeps.txt || ! stamp_ok .venv/.runtime-installed requirements-frameworks.txt; then
  "${PIP[@]}" install -r requirements.txt
  "${PIP[@]}" install --no-deps -r requirements-nodeps.txt
  # the framework lanes' packages (an extra: `pip install .` alone leaves them out); set
  # MEMORY_LAB_NO_FRAMEWORKS=1 to skip them (their lanes are then listed as not installed)
  if [ -z "${MEMORY_LAB_NO_FRAMEWORKS:-}" ]; then
    "${PIP[@]}" install -r requirements.txt -r requirements-frameworks.txt
  fi
  touch .venv/.runtime-installed
fi

# The project itself, editable, so `.venv/bin/memory-lab` runs this checkout's code. Its
# dependencies are the pins above; setuptools is pinned because older ones cannot build it.
if ! stamp_ok .venv/.project-installed pyproject.toml || ! stamp_ok .venv/.project-installed requirements-build.txt; then
  "${PIP[@]}" install -r requirements-build.txt
  "${PIP[@]}" install --no-deps --no-build-isolation -e .
  touch .venv/.project-installed
fi

if [ "${1:-}" = "--test" ]; then
  if ! stamp_ok .venv/.dev-installed requirements-dev.txt; then
    "${PIP[@]}" install -r requirements-dev.txt
    touch .venv/.dev-installed
  fi
  need=()
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
  command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
  command -v pg_ctlcluster >/dev/null 2>&1 || [ -d /usr/lib/postgresql ] || need+=(postgresql)
  if [ ${#need[@]} -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "setup: installing Debian packages: ${need[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
  fi
fi
