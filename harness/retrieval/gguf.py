"""Read a GGUF file's metadata and its float tensors, with NumPy alone.

Introduced in Chapter 8b (``notebooks/08b_embedder_and_query_time.ipynb``), where
nomic-embed-text-v1.5 is measured: the one copy of it whose bytes can be proven upstream's is the
GGUF file llama.cpp reads (``nomic-embed-text-v1.5.f16.gguf``, SHA-256 checked by
:mod:`harness.retrieval.numpy_nomic` before this reads it). The format is small: a header, typed
key-value metadata (the tokenizer's vocabulary is one of them), a table of tensors (name, shape,
type, offset), then the aligned tensor data. Only the two types that file holds, f32 and f16, are
read; any other is a one-sentence error rather than wrong numbers.
"""
from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from harness.core.json_types import JSON

#: GGUF metadata value types with a fixed size, by their type number.
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
#: Tensor types this reader understands (ggml's numbering).
_TENSOR_TYPES: dict[int, np.dtype[Any]] = {0: np.dtype("<f4"), 1: np.dtype("<f2")}  # Any: numpy's scalar type parameter


def _read(f: BinaryIO, fmt: str) -> int | float | bool:
    size = struct.calcsize("<" + fmt)
    return struct.unpack("<" + fmt, f.read(size))[0]


def _string(f: BinaryIO) -> str:
    return f.read(int(_read(f, "Q"))).decode("utf-8")


def _value(f: BinaryIO, kind: int) -> JSON:
    if kind == _STRING:
        return _string(f)
    if kind == _ARRAY:
        item, count = int(_read(f, "I")), int(_read(f, "Q"))
        return [_value(f, item) for _ in range(count)]
    return _read(f, _SCALARS[kind])


def read_gguf(path: Path | str) -> tuple[dict[str, JSON], dict[str, np.ndarray]]:
    """The file's metadata and its tensors as float32 arrays in NumPy's (row-major) shape, i.e. PyTorch's
    ``(out, in)`` for a weight matrix (GGUF lists dimensions innermost first)."""
    path = Path(path)
    with path.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file.")
        _read(f, "I")  # the format's version: 2 and 3 share this layout
        tensor_count, key_count = int(_read(f, "Q")), int(_read(f, "Q"))
        meta: dict[str, JSON] = {}
        for _ in range(key_count):
            key = _string(f)
            meta[key] = _value(f, int(_read(f, "I")))
        table = []
        for _ in range(tensor_count):
            name = _string(f)
            dims = [int(_read(f, "Q")) for _ in range(int(_read(f, "I")))]
            table.append((name, dims, int(_read(f, "I")), int(_read(f, "Q"))))
        align = int(meta.get("general.alignment", 32))
        start = -(-f.tell() // align) * align
    data = np.memmap(path, dtype=np.uint8, mode="r")
    tensors = {}
    for name, dims, kind, offset in table:
        if kind not in _TENSOR_TYPES:
            raise ValueError(f"{path.name}'s tensor {name} has GGUF type {kind}; only f32 and f16 are read.")
        dtype = _TENSOR_TYPES[kind]
        count = int(np.prod(dims))
        raw = data[start + offset:start + offset + count * dtype.itemsize]
        tensors[name] = raw.view(dtype).reshape(dims[::-1]).astype(np.float32)
    return meta, tensors
