"""Model ids and prices in one place, checked against the anthropic SDK's own list (issue 18, item 20)."""
from __future__ import annotations

import re
import typing
from pathlib import Path

import anthropic
import pytest
from anthropic.resources.messages.messages import DEPRECATED_MODELS
from anthropic.types import Model

from harness.providers.models import DEFAULT_MODEL, MODELS, SDK_CHECKED, price_for

ROOT = Path(__file__).resolve().parents[1]
SDK_MODELS = set(typing.get_args(typing.get_args(Model)[0]))  # the Literal inside Union[Literal[...], str]
_DATED = re.compile(r"-\d{8}$")


@pytest.fixture
def checked_sdk():
    """The table is checked against one SDK release; a newer one (a learner's fresh install) may list
    models the table does not know yet, which is a reason to update it, not a broken workbook."""
    if anthropic.__version__ != SDK_CHECKED:
        pytest.skip(f"harness/providers/models.py was checked against anthropic {SDK_CHECKED}, this is "
                    f"{anthropic.__version__}: update the table and SDK_CHECKED")


def test_every_row_is_a_current_model_the_sdk_lists(checked_sdk):
    assert set(MODELS) <= SDK_MODELS, f"not in the SDK: {sorted(set(MODELS) - SDK_MODELS)}"
    assert not set(MODELS) & set(DEPRECATED_MODELS), f"deprecated: {sorted(set(MODELS) & set(DEPRECATED_MODELS))}"


def test_every_current_sdk_model_has_a_price(checked_sdk):
    current = {m for m in SDK_MODELS if m not in DEPRECATED_MODELS}
    missing = [m for m in sorted(current) if not _priced(m)]
    assert not missing, f"the SDK lists models with no row in harness/providers/models.py: {missing}"


def _priced(model: str) -> bool:
    try:
        return price_for(model).input_per_mtok > 0
    except ValueError:
        return False


def test_the_default_model_is_current():
    assert DEFAULT_MODEL in SDK_MODELS and DEFAULT_MODEL not in DEPRECATED_MODELS and DEFAULT_MODEL in MODELS


@pytest.mark.parametrize("path", ["README.md", ".env.example", *sorted(p.relative_to(ROOT).as_posix()
                                                                     for p in (ROOT / "notebooks").glob("*.ipynb"))])
def test_no_file_a_reader_copies_from_suggests_a_deprecated_model(path):
    file = ROOT / path
    if not file.exists():
        pytest.skip(f"{path} is absent")
    text = file.read_text(encoding="utf-8")
    named = sorted({m for m in DEPRECATED_MODELS if re.search(rf"(?<![\w-]){re.escape(m)}(?![\w-])", text)})
    assert not named, f"{path} suggests deprecated model(s) {named}; use a row of harness/providers/models.py"


def test_long_prompts_cost_more_on_haiku_5_5():
    price = price_for("claude-haiku-5-5")
    assert price.cost(1, 100_000, 0) == pytest.approx(0.01) and price.cost(1, 100_001, 0) == pytest.approx(0.0500005)
