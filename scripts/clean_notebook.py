"""Make executed notebooks fit to commit: no execution timings, no machine paths in outputs.

Used by `make notebooks` after each run. Starter exercises end in deliberate errors whose
tracebacks name files by absolute path; the repository's own prefix is removed from them.
"""
import sys
from pathlib import Path

import nbformat

ROOT = str(Path(__file__).resolve().parent.parent) + "/"


def clean(path: str) -> None:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        for out in cell.get("outputs", []):
            if "traceback" in out:
                out["traceback"] = [line.replace(ROOT, "") for line in out["traceback"]]
            if "text" in out:
                out["text"] = out["text"].replace(ROOT, "")
    nbformat.write(nb, path)


if __name__ == "__main__":
    for p in sys.argv[1:]:
        clean(p)
