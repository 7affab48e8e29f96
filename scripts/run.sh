#!/usr/bin/env bash
# Set up (first time) and start Memory Lab on http://127.0.0.1:8501 — no key, no internet needed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# `memory-lab app` adds the offline-safe Streamlit flags; extra arguments go to Streamlit.
exec .venv/bin/memory-lab app --port "${PORT:-8501}" -- "$@"
