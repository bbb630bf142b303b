"""Claude model ids and list prices, in one place, checked against the anthropic SDK.

Introduced in Chapter 0 (choosing a model) and used by Chapter 1, which prints a sweep's cost
before it runs.

Each row is a model id the SDK 2.14 lists in ``anthropic.types.Model`` and does not list as
deprecated (``DEPRECATED_MODELS``): ``tests/test_models.py`` fails when the SDK adds, drops or
retires one, so this table cannot silently go stale. Prices are USD per million tokens, from the
model pages and the models overview at platform.claude.com/docs (read November 2026); dated
snapshots (``claude-haiku-4-5-20251001``) take their alias's row. Change a row here, or pass
``prices=`` to :func:`price_for`, when prices change.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

#: The anthropic SDK release whose model list this table was last checked against.
SDK_CHECKED = "2.14.0"

#: The model the workbook uses with a key unless ANTHROPIC_MODEL says otherwise: the cheapest
#: current model without thinking on by default, so a chapter's answer budget is its own.
DEFAULT_MODEL = "claude-haiku-4-5"


@dataclass(frozen=True)
class Price:
    """USD per million tokens; ``long_prompt`` holds the rates above ``long_prompt_tokens`` (Haiku 5.5)."""

    input_per_mtok: float
    output_per_mtok: float
    long_prompt_tokens: int | None = None
    long_prompt: tuple[float, float] | None = None

    def cost(self, n_calls: int, input_tokens_per_call: int, output_tokens_per_call: int) -> float:
        if min(n_calls, input_tokens_per_call, output_tokens_per_call) < 0:
            raise ValueError(
                f"Call and token counts must be zero or more, got n_calls={n_calls}, "
                f"input_tokens_per_call={input_tokens_per_call}, output_tokens_per_call={output_tokens_per_call}."
            )
        rate_in, rate_out = self.input_per_mtok, self.output_per_mtok
        if self.long_prompt and self.long_prompt_tokens is not None and input_tokens_per_call > self.long_prompt_tokens:
            rate_in, rate_out = self.long_prompt
        return n_calls * (input_tokens_per_call * rate_in + output_tokens_per_call * rate_out) / 1_000_000


@dataclass(frozen=True)
class ModelInfo:
    price: Price
    #: Thinks before answering unless told not to ("adaptive, always on" in the docs): thinking
    #: tokens count against max_tokens, so the provider adds headroom for them.
    thinks_by_default: bool = False


_FABLE = Price(10.0, 50.0)
MODELS: dict[str, ModelInfo] = {
    "claude-fable-5-2": ModelInfo(_FABLE, thinks_by_default=True),
    "claude-fable-5-1": ModelInfo(_FABLE, thinks_by_default=True),
    "claude-fable-5": ModelInfo(_FABLE, thinks_by_default=True),
    "claude-mythos-5-2": ModelInfo(_FABLE, thinks_by_default=True),  # Mythos shares Fable's specs and pricing
    "claude-mythos-5-1": ModelInfo(_FABLE, thinks_by_default=True),
    "claude-mythos-5": ModelInfo(_FABLE, thinks_by_default=True),
    "claude-opus-5-5": ModelInfo(Price(4.0, 20.0), thinks_by_default=True),
    "claude-opus-5": ModelInfo(Price(5.0, 25.0)),
    "claude-opus-4-8": ModelInfo(Price(5.0, 25.0)),
    "claude-opus-4-7": ModelInfo(Price(5.0, 25.0)),
    "claude-opus-4-6": ModelInfo(Price(5.0, 25.0)),
    "claude-sonnet-5-5": ModelInfo(Price(2.0, 10.0)),
    "claude-sonnet-5": ModelInfo(Price(2.0, 10.0)),
    "claude-sonnet-4-6": ModelInfo(Price(3.0, 15.0)),
    "claude-haiku-5-5": ModelInfo(Price(0.10, 0.50, long_prompt_tokens=100_000, long_prompt=(0.50, 2.50))),
    "claude-haiku-4-5": ModelInfo(Price(1.0, 5.0)),
}
#: Prices by model id (the same rows as :data:`MODELS`).
PRICES: dict[str, Price] = {model: info.price for model, info in MODELS.items()}


def model_info(model: str) -> ModelInfo | None:
    """The row for ``model`` or for the alias a dated snapshot belongs to; None when unknown."""
    if model in MODELS:
        return MODELS[model]
    for alias in sorted(MODELS, key=len, reverse=True):  # longest first: claude-opus-5-5 before claude-opus-5
        if model.startswith(alias + "-") and model[len(alias) + 1:].isdigit():
            return MODELS[alias]
    return None


def price_for(model: str, prices: Mapping[str, Price] | None = None) -> Price:
    """The list price of ``model`` (works offline: chapters print a sweep's cost before running it)."""
    if prices is not None:
        for name in sorted(prices, key=len, reverse=True):
            if name in model:  # a family ("haiku") or an id
                return prices[name]
    else:
        info = model_info(model)
        if info is not None:
            return info.price
    raise ValueError(f"No price is known for model {model!r}: pass prices={{{model!r}: Price(input_per_mtok, output_per_mtok)}}.")
