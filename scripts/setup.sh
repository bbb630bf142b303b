#!/usr/bin/env bash
# Creates or updates the workbook's environment in .venv. Used by `make lab` and `make test`.
#   scripts/setup.sh core   the workbook itself (JupyterLab, harness, real MCP servers)
#   scripts/setup.sh full   + test tools, the embedding extra, Node MCP servers, headless Chromium
set -euo pipefail
cd "$(dirname "$0")/.."
level="${1:-core}"
PY="${PYTHON:-python3}"

if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv with $($PY --version)"
  "$PY" -m venv .venv
fi
pip=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
[ -d /opt/wheels ] && pip+=(--find-links /opt/wheels)   # a local wheel cache, where the machine has one

if [ "$level" = full ]; then
  echo "== installing the workbook with its test tools and the embedding extra"
  "${pip[@]}" -e ".[test,embeddings]"
else
  echo "== installing the workbook"
  "${pip[@]}" -e .
fi

# Node MCP servers, pinned by mcp_servers/node/package-lock.json. Optional: Chapter 5 says what it skips.
if [ -f mcp_servers/node/package-lock.json ]; then
  if command -v npm >/dev/null 2>&1; then
    if [ ! -d mcp_servers/node/node_modules ] || [ mcp_servers/node/package-lock.json -nt mcp_servers/node/node_modules ]; then
      echo "== installing the pinned Node MCP servers"
      (cd mcp_servers/node && npm ci --no-audit --no-fund --loglevel=error) && touch mcp_servers/node/node_modules \
        || echo "!! npm ci failed: Chapter 5 will run without the Node servers"
    fi
  else
    echo "-- Node.js not found: Chapter 5 will run without the Node MCP servers"
  fi
fi

# A real browser for the widget tests. Installed only where we may (root with apt); else the test says why it skips.
if [ "$level" = full ] && [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing Debian's chromium for the browser tests"
    (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || echo "!! chromium could not be installed: browser tests will skip"
  else
    echo "-- chromium not found and not root: browser tests will skip (install Debian's 'chromium' to run them)"
  fi
fi
echo "== environment ready: .venv ($level)"
