"""Every scenario's judge against a family of destructive and lazy runs built from its labelled calls.

The labelled calls (``tools`` with ``args``) must pass; each member of the family must fail:
the answer alone, a touched or an untouched file overwritten, a file deleted, wrong content in
a write, each step skipped in turn, and damage after the work (an excluded line posted, a message
nobody asked for). Members that make no sense for a scenario (no file, no text written) are
left out for it; every scenario gets the answer-only and skipped-step members. The family is
built from the labels, so a new scenario is covered without a line here.
"""
import json

import pytest

from workbook.demo import DOMAINS, DemoWorld, demo_tools, failed_checks, load_scenarios
from harness.core.registry import ToolRegistry
from workbook.evaluation.scenarios import labelled_calls, sources

ALL = [s for split in ("dev", "heldout") for s in load_scenarios(split)]
Call = tuple[str, dict]
#: Arguments that carry what a write says, in the order one is picked to get wrong.
TEXT_ARGS = ("text", "content", "body", "message", "value", "title", "subject")
WRONG = "Something else entirely."


gold_calls = labelled_calls


def act(world: DemoWorld, calls: list[Call]) -> list[tuple[str, str, str, bool]]:
    """Make ``calls`` on ``world``: each as (tool, arguments, result, worked), as the judge reads a run's calls."""
    registry = ToolRegistry(demo_tools(world))
    shown = []
    for i, (name, args) in enumerate(calls):
        r = registry.dispatch(name, args, call_id=f"c{i}")
        shown.append((name, json.dumps(args), r.content, not r.is_error))
    return shown


def gold_answer(scenario) -> str:
    """What a model that did the labelled calls would say: their results (an opener with no tool offers the domains)."""
    if not scenario.tools:
        return "Hello! I can help with " + ", ".join(DOMAINS) + "."
    with DemoWorld() as w:
        return "\n".join(result for _, _, result, ok in act(w, gold_calls(scenario)) if ok)


def failures(scenario, calls: list[Call], answer: str | None = None) -> list[str]:
    """The judge's verdict on a run that makes ``calls`` and says ``answer`` (their results when None)."""
    with DemoWorld() as w, w.clone() as start:
        shown = act(w, calls)
        said = answer if answer is not None else gold_answer(scenario) if not scenario.tools else \
            "\n".join(r for _, _, r, ok in shown if ok)
        return failed_checks(scenario.checks, w, start, gold_calls(scenario), said, shown, sources(scenario))


def touched_files(scenario) -> list[str]:
    """Files the labelled calls name that exist once they are done."""
    with DemoWorld() as w:
        act(w, gold_calls(scenario))
        files = w.snapshot()
    return sorted({a[k] for a in scenario.args for k in ("path", "destination") if a.get(k) in files})


def untouched_file(scenario) -> str:
    with DemoWorld() as w:
        before = w.snapshot()
        act(w, gold_calls(scenario))
        after = w.snapshot()
    return next(p for p in sorted(before) if after.get(p) == before[p] and p not in touched_files(scenario))


def wrong_content(calls: list[Call]) -> list[Call] | None:
    """The calls with the first write's text replaced (None when no call writes text)."""
    for i, (name, args) in enumerate(calls):
        key = next((k for k in TEXT_ARGS if isinstance(args.get(k), str)), None)
        if key and "read" not in ToolRegistry(demo_tools()).get(name).tags:
            return [*calls[:i], (name, {**args, key: WRONG}), *calls[i + 1:]]
    return None


def family(scenario) -> dict[str, tuple[list[Call], str | None]]:
    """Name -> (calls, answer) for every member that applies to ``scenario``."""
    gold, said = gold_calls(scenario), gold_answer(scenario)
    post = lambda channel, text: ("post_channel_message", {"channel": channel, "text": text})
    out: dict[str, tuple[list[Call], str | None]] = {}
    if gold:
        out["answer only"] = ([], said)
        out.update({f"skipped step {i + 1} ({name})": ([*gold[:i], *gold[i + 1:]], None)
                    for i, (name, _) in enumerate(gold)})
    else:  # an opener with nothing to do: saying the right thing while changing the world fails
        out["answer with a world change"] = ([post("#random", "hello")], said)
        out["skipped step (no answer)"] = ([], "")
    for path in touched_files(scenario):
        out[f"overwrite touched {path}"] = ([*gold, ("write_file", {"path": path, "content": "x"})], None)
    spare = untouched_file(scenario)
    out[f"overwrite untouched {spare}"] = ([*gold, ("write_file", {"path": spare, "content": "x"})], None)
    out[f"delete untouched {spare}"] = ([*gold, ("delete_file", {"path": spare})], None)
    wrong = wrong_content(gold)
    if wrong:
        out["wrong content"] = (wrong, None)
    if any(c["check"] == "answer" and c.get("contains") for c in scenario.checks):
        out["wrong answer"] = (gold, "I had a look; nothing stands out.")
    for c in scenario.checks:
        for x in [c["excludes"]] if isinstance(c.get("excludes"), str) else c.get("excludes", []):
            if c["check"] == "message":
                out[f"excluded {x!r} posted too"] = ([*gold, post(c["channel"], x)], None)
    channels = {c["channel"].lstrip("#") for c in scenario.checks if c["check"] == "message"}
    other = next(ch for ch in ("random", "team", "dev") if ch not in channels)
    out[f"a message to #{other} nobody asked for"] = ([*gold, post(f"#{other}", "FYI")], None)
    return out


@pytest.mark.parametrize("scenario", ALL, ids=lambda s: s.id)
def test_the_labelled_calls_pass(scenario):
    assert failures(scenario, gold_calls(scenario)) == []


@pytest.mark.parametrize("scenario", ALL, ids=lambda s: s.id)
def test_every_destructive_or_lazy_run_fails(scenario):
    members = family(scenario)
    assert "answer only" in members or "answer with a world change" in members
    assert any(name.startswith("skipped step") for name in members)
    passed = [name for name, (calls, answer) in members.items() if not failures(scenario, calls, answer)]
    assert passed == [], f"{scenario.id}: the judge accepts {passed}"
