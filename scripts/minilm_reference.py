"""Write workbook/data/minilm_reference.json: sentence-transformers' own vectors for a few texts.

The workbook embeds with a NumPy forward pass (harness/retrieval/numpy_minilm.py); this file is
the library's answer it is checked against. Needs the reference extra (torch + sentence-transformers):
    pip install torch==2.13.0 sentence-transformers && python scripts/minilm_reference.py
"""
import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
from sentence_transformers import SentenceTransformer, __version__  # noqa: E402

from harness.retrieval.numpy_minilm import model_dir  # noqa: E402

TEXTS = [
    "find the cheapest train from Beijing to Shanghai next Wednesday",
    "Generate a research summary for NCT04280705 and save it as Markdown to /root/markdown/x.md.",
    "天气",
    "x" * 3000,  # truncated at the model's 256 tokens, as the library does
    "Créer un ticket « urgent » pour l'équipe",
    "read_file: Read the complete contents of a file from the file system.",
]
model = SentenceTransformer(str(model_dir()), device="cpu")
vectors = model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
out = Path(__file__).resolve().parents[1] / "workbook" / "data" / "minilm_reference.json"
out.write_text(json.dumps({
    "made_by": f"scripts/minilm_reference.py with sentence-transformers {__version__}",
    "texts": TEXTS,
    "vectors": [[round(float(x), 8) for x in v] for v in vectors],
}, ensure_ascii=False) + "\n", encoding="utf-8")
print(f"wrote {out}")
