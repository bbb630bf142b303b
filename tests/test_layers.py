"""The package's layers: no module imports one from a higher layer, and no modules import each other in a loop.

Introduced with the package's layout (README, "How the package is built"). Every import counts, also one
inside a function body or under ``TYPE_CHECKING``: an import moved into a function to dodge an upward
edge is still an upward edge.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Lowest first. A module may import its own layer and the layers before it. The longest prefix names the layer.
#: The library (``harness``) comes first and imports nothing after it: the workbook's apparatus and the
#: experiments sit on top of it, outside its wheel.
LAYERS = [
    ("core", ["harness.core"]),
    ("providers", ["harness.providers"]),
    ("selection", ["harness.selection"]),
    ("mcp", ["harness.mcp"]),
    ("retrieval", ["harness.retrieval"]),
    ("evaluation", ["harness.evaluation"]),
    ("proxy", ["harness.mcp.proxy"]),
    ("cli", ["harness.__main__"]),
    ("the workbook's world and models", ["workbook.steps", "workbook.demo", "workbook.providers"]),
    ("the workbook's measurements", ["workbook.evaluation", "workbook.research", "workbook.servers", "workbook.landscape",
                                     "workbook.minilm_reference"]),
    ("the workbook's views and graders", ["workbook", "workbook.views", "workbook.evidence", "workbook.grading"]),
    ("experiments", ["experiments"]),
]
RANK = {prefix: i for i, (_, prefixes) in enumerate(LAYERS) for prefix in prefixes}
#: The library's face re-exports from every layer; nothing inside the library may import it.
FACE = "harness"
PACKAGES = ("harness", "workbook", "experiments")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> int:
    best = max((p for p in RANK if module == p or module.startswith(p + ".")), key=len, default=None)
    assert best is not None, f"{module} is in no layer: add its folder to LAYERS"
    return RANK[best]


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of ours in ``path``; ``from x.y import z`` counts x.y.z when z is a module."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] in PACKAGES]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.split(".")[0] in PACKAGES:
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                is_module = (ROOT / (sub.replace(".", "/") + ".py")).exists() or (ROOT / sub.replace(".", "/")).is_dir()
                out.append((node.lineno, sub if is_module else node.module))
    return out


MODULES = {module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))
           if "__pycache__" not in p.parts and "data" not in p.relative_to(ROOT).parts}
EDGES = {m: imports(p) for m, p in MODULES.items()}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != FACE))
def test_no_import_from_a_higher_layer(module: str) -> None:
    here = layer(module)
    upward = [f"{MODULES[module].relative_to(ROOT)}:{line} imports {target} "
              f"({'the package face' if target == FACE else LAYERS[layer(target)][0]})"
              for line, target in EDGES[module] if target == FACE or layer(target) > here]
    assert not upward, f"{module} is in layer {LAYERS[here][0]}, but " + "; ".join(upward)


def test_no_import_cycles() -> None:
    graph = {m: {t for _, t in EDGES[m] if t in MODULES and t != m} for m in MODULES if m != FACE}
    # a package's __init__ importing its own submodules is how a package hands names on; the reverse closes a loop
    state: dict[str, int] = {}
    loops: list[list[str]] = []

    def visit(m: str, trail: list[str]) -> None:
        state[m] = 1
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                loops.append(trail[trail.index(t):] + [t])
            elif t not in state:
                visit(t, trail + [t])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not loops, "modules import each other in a loop: " + "; ".join(" -> ".join(loop) for loop in loops[:5])
