"""The honesty rule: the stand-in's choices depend only on the request, the transcript and the tools shown.

Nothing it does may change when the labels change — the scenarios' ids, kinds, expected tools,
expected arguments and checks, or the labelled queries' gold tools. Two tests:

* in process: the same requests run with every label replaced make exactly the same calls;
* from a copy of the package whose label files are scrambled: a stand-in that read the labelled
  data (by any path, package data included) would call something else on some request.
"""
import dataclasses
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import harness
from conftest import run
import workbook
from harness import ToolCatalog
from workbook.demo import demo_tools, load_scenarios
from workbook.providers.offline import OfflineModel
from workbook.evaluation.scenarios import run_scenarios

SCENARIOS = load_scenarios("dev") + load_scenarios("heldout")


def _calls(scenarios) -> list:
    runs = run(run_scenarios(OfflineModel(), lambda: ToolCatalog(demo_tools()), scenarios))
    return [[(n, a, ok) for res in (*r.setup_results, r.result) for n, a, ok in res.calls()] for r in runs]


def test_changing_every_label_changes_no_call():
    rng = random.Random(1)
    names = sorted({t.name for t in demo_tools()})
    relabelled = [dataclasses.replace(
        s, id=f"x-{rng.random():.6f}", kind="task", tools=tuple(rng.sample(names, 2)), args=({"junk": 1}, {"junk": 2}),
        checks=({"check": "unchanged"},), setup_tools=tuple((rng.choice(names),) for _ in s.setup)) for s in SCENARIOS[::2]]
    before = _calls(SCENARIOS[::2])
    assert sum(map(len, before)) > 50, "the scenarios make calls to compare"
    assert _calls(relabelled) == before


CHILD = """
import asyncio, json, sys
from harness import ToolCatalog
from workbook.demo import demo_tools
from workbook.demo.labels import Scenario
from workbook.providers.offline import OfflineModel
from workbook.evaluation.scenarios import run_scenarios
spoken = json.load(open(sys.argv[1]))  # only what the user says: requests and earlier requests
scenarios = [Scenario(f"s{i}", s["request"], (), "task", tuple(s.get("setup", ()))) for i, s in enumerate(spoken)]
runs = asyncio.run(run_scenarios(OfflineModel(), lambda: ToolCatalog(demo_tools()), scenarios))
import workbook
print(workbook.__file__)
print(json.dumps([[c for res in (*r.setup_results, r.result) for c in res.calls()] for r in runs]))
"""


def _scramble(data: Path, rng: random.Random) -> None:
    """Relabel every labelled file in a package copy: ids, kinds, tools, args, checks and gold tools."""
    names = sorted({t.name for t in demo_tools()})
    for f in ("demo_scenarios.json", "heldout_scenarios.json"):
        recs = json.loads((data / f).read_text())
        for r in recs:
            r.update(id=f"z{rng.random()}", tools=rng.sample(names, 3), args=[], checks=[{"check": "unchanged"}])
            r.pop("setup_tools", None)
        (data / f).write_text(json.dumps(recs))
    lines = [json.loads(x) for x in (data / "demo_queries.jsonl").read_text().splitlines() if x.strip()]
    for q in lines:
        q.update(qid=f"q{rng.random()}", gold=[rng.choice(names)])
        q.pop("args", None)
    (data / "demo_queries.jsonl").write_text("\n".join(json.dumps(q) for q in lines))


def test_a_stand_in_reading_the_label_files_would_be_caught(tmp_path):
    spoken = tmp_path / "spoken.json"
    spoken.write_text(json.dumps([{"request": s.request, "setup": list(s.setup)} for s in SCENARIOS[::4]]))
    (tmp_path / "child.py").write_text(CHILD)
    outputs = []
    for scrambled in (False, True):
        root = tmp_path / ("scrambled" if scrambled else "original")
        for package in (harness, workbook):
            shutil.copytree(Path(package.__file__).parent, root / package.__name__, ignore=shutil.ignore_patterns("__pycache__"))
        if scrambled:
            _scramble(root / "workbook" / "data", random.Random(2))
        out = subprocess.run([sys.executable, str(tmp_path / "child.py"), str(spoken)], cwd=tmp_path, env={
            "PYTHONPATH": str(root), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
            capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        where, calls = out.stdout.splitlines()
        assert Path(where).is_relative_to(root), "the child runs the workbook's copy"
        outputs.append(json.loads(calls))
    assert sum(map(len, outputs[0])) > 25
    assert outputs[1] == outputs[0]
