"""workbook.evaluation.scenarios.failure_kind: why a failed run failed, on hand-made runs (no model needed)."""
from types import SimpleNamespace

import pytest

from workbook.evaluation.scenarios import failure_kind


def run(needed, shown, calls, success=False):
    """A failed run of a scenario needing ``needed``; ``calls`` are (name, ok); every turn showed ``shown``."""
    result = SimpleNamespace(calls=lambda: [(n, {}, ok) for n, ok in calls],
                             turns=[SimpleNamespace(tool_names=list(shown))])
    return SimpleNamespace(scenario=SimpleNamespace(id="s", tools=tuple(needed)), result=result, success=success)


@pytest.mark.parametrize("needed, shown, calls, kind", [
    (["a", "b"], ["a"], [("a", True)], "tool not shown"),
    (["a", "b"], ["a", "b", "x"], [("a", True), ("x", True)], "wrong tool"),
    (["a", "b"], ["a", "b"], [("b", True)], "phrase its lexicon lacks"),  # skipped the step it did not see
    (["a", "b"], ["a", "b"], [("a", True)], "phrase its lexicon lacks"),
    (["a"], ["a"], [("a", False), ("a", False)], "argument content"),  # the right tool, refused
    (["a", "b"], ["a", "b"], [("a", True), ("b", True)], "argument content"),  # right names, wrong effects
    ([], ["a"], [], "phrase its lexicon lacks"),  # a tool-less request answered without what it needed
])
def test_failure_kind(needed, shown, calls, kind):
    assert failure_kind(run(needed, shown, calls)) == kind


def test_a_success_has_no_failure_kind():
    with pytest.raises(ValueError, match="succeeded"):
        failure_kind(run(["a"], ["a"], [("a", True)], success=True))
