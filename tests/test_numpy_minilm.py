"""The NumPy forward pass gives sentence-transformers' vectors, and refuses weights that are not upstream's."""
from __future__ import annotations

import importlib.util
import shutil

import numpy as np
import pytest

from harness.retrieval import numpy_minilm
from workbook.minilm_reference import reference
from harness.retrieval.dense import Encoder, dense_available, dense_unavailable_reason

REFERENCE = reference()

pytestmark = pytest.mark.skipif(not dense_available(), reason=dense_unavailable_reason() or "")


def test_numpy_vectors_equal_the_librarys_reference_vectors():
    """Reference vectors were computed by sentence-transformers (scripts/minilm_reference.py)."""
    got = Encoder(remember=0).encode(REFERENCE["texts"])
    want = np.asarray(REFERENCE["vectors"], dtype=np.float32)
    assert got.shape == want.shape == (len(REFERENCE["texts"]), 384) and got.dtype == np.float32
    assert np.abs(got - want).max() < 1e-5


def test_batches_and_single_texts_agree():
    """Padding and masking in a batch change nothing: each row is the text's vector alone."""
    model = numpy_minilm.NumpyMiniLM(numpy_minilm.model_dir())
    texts = REFERENCE["texts"]
    batched = model.embed_many(texts, batch_size=4)
    alone = np.stack([model.embed(t) for t in texts])
    assert np.abs(batched - alone).max() < 1e-5


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None,
                    reason="sentence-transformers is not installed (the optional reference extra): "
                           "the stored reference vectors are checked instead")
def test_numpy_vectors_equal_the_library_live():
    from sentence_transformers import SentenceTransformer

    texts = ["post the build status to the team channel", "天气", "x" * 3000]
    library = SentenceTransformer(str(numpy_minilm.model_dir()), device="cpu").encode(texts, normalize_embeddings=True)
    assert np.abs(Encoder(remember=0).encode(texts) - library).max() < 1e-5


def test_weights_that_are_not_upstreams_are_refused(tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(numpy_minilm.model_dir(), folder)
    with (folder / "config.json").open("a", encoding="utf-8") as f:
        f.write(" ")
    with pytest.raises(ValueError, match="not upstream all-MiniLM-L6-v2's file"):
        numpy_minilm.NumpyMiniLM(folder)


def test_a_folder_without_the_model_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="has no model.safetensors"):
        numpy_minilm.NumpyMiniLM(tmp_path)


@pytest.mark.skipif(importlib.util.find_spec("threadpoolctl") is None, reason="threadpoolctl is not installed")
def test_one_text_runs_on_one_blas_thread_and_a_batch_on_the_librarys_default(monkeypatch):
    """On a busy machine a query's small products wait for every BLAS thread to be scheduled (300 ms
    instead of 24 ms measured at load 8 on 2 cores): one text runs on one thread, a batch is left alone."""
    from threadpoolctl import ThreadpoolController

    model = numpy_minilm.NumpyMiniLM(numpy_minilm.model_dir(), onnx_queries=False)
    controller = ThreadpoolController()
    default = controller.select(user_api="blas").info()[0]["num_threads"]
    seen: list[int] = []
    forward = model._forward
    monkeypatch.setattr(model, "_forward", lambda ids, mask: (
        seen.append(controller.select(user_api="blas").info()[0]["num_threads"]), forward(ids, mask))[1])
    one = model.embed_many(["post the build status"])
    batch = model.embed_many(["post the build status", "read a file"])
    assert seen == [1, default]
    assert controller.select(user_api="blas").info()[0]["num_threads"] == default  # restored afterwards
    assert np.abs(one[0] - batch[0]).max() < 1e-5


@pytest.mark.skipif(importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("onnx") is None,
                    reason="ONNX Runtime is not installed: queries take the NumPy path")
def test_onnx_runtime_embeds_a_query_as_the_library_and_numpy_do():
    """The one-text path built from the same checked weights gives sentence-transformers' vectors, and
    the NumPy path's for a text cut at 256 tokens (every position embedding used)."""
    model = numpy_minilm.NumpyMiniLM(numpy_minilm.model_dir())
    assert type(model.query_session()).__name__ == "QuerySession"
    alone = np.stack([model.embed(t) for t in REFERENCE["texts"]])
    assert alone.dtype == np.float32 and np.abs(alone - np.asarray(REFERENCE["vectors"])).max() < 1e-5
    numpy_only = numpy_minilm.NumpyMiniLM(numpy_minilm.model_dir(), onnx_queries=False)
    long = "deploy " * 400
    assert np.abs(model.embed(long) - numpy_only.embed(long)).max() < 1e-5
