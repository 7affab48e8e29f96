#!/usr/bin/env bash
# Set up (first time) and start Memory Lab on http://127.0.0.1:8501 — no key, no internet needed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/streamlit run app.py \
  --server.address 127.0.0.1 --server.port "${PORT:-8501}" \
  --browser.gatherUsageStats false "$@"
