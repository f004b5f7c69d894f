#!/usr/bin/env bash
# episeg's one entry point.
#   ./run.sh demo     set everything up (first run only) and run the offline demo
#   ./run.sh test       set up if needed and run the whole test suite (pytest args pass through)
#   ./run.sh test-fast  the fast tier: pytest -m "not slow" (no model load, no servers), on
#                       every core (pytest-xdist; EPISEG_TEST_WORKERS=0 runs it in one process)
#   ./run.sh lint       ruff check, ruff format --check, the structure check, mypy
#   ./run.sh setup    only install
set -euo pipefail
cd "$(dirname "$0")"
VENV="${EPISEG_VENV:-.venv}"
PY="${PYTHON:-python3}"

setup() {
  if [ -x "$VENV/bin/episeg" ] && [ "$VENV/.episeg-installed" -nt pyproject.toml ]; then
    return 0
  fi
  echo "episeg: installing into $VENV (first run only; a few minutes)" >&2
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
  # The CPU build of torch first: a plain 'torch' requirement would pull a multi-GB CUDA build.
  "$VENV/bin/pip" install -q "torch==2.13.0"
  "$VENV/bin/pip" install -q -e ".[serve,eval,dev,langgraph,openai-agents]"
  # Export the default ONNX encoder once from the packaged weights (no network; ~15 s).
  # If it fails here, the first use exports it (or says why it cannot).
  "$VENV/bin/python" -m episeg.embedders >/dev/null ||
    echo "episeg: ONNX export failed; it is retried at first use" >&2
  touch "$VENV/.episeg-installed"
}

cmd="${1:-demo}"
shift || true
case "$cmd" in
  setup) setup ;;
  demo)  setup; exec "$VENV/bin/episeg" demo "$@" ;;
  test)  setup; exec "$VENV/bin/python" -m pytest "$@" ;;
  test-fast) setup
             exec "$VENV/bin/python" -m pytest -m "not slow" \
               -n "${EPISEG_TEST_WORKERS:-auto}" --dist worksteal "$@" ;;
  lint)  setup
         "$VENV/bin/ruff" check src tests tools
         "$VENV/bin/ruff" format --check src tests tools
         "$VENV/bin/python" tools/check_imports.py
         exec "$VENV/bin/mypy" ;;
  *) echo "usage: ./run.sh [demo|test|test-fast|lint|setup] [args...]" >&2; exit 2 ;;
esac
