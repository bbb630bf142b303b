"""Deferred loading: which MCP tool definitions stay out of the prompt until searched for.

Introduced in Chapter 5 (MCP integration).

Every definition shown to the model costs tokens on every turn. At session start the harness
counts them with the real tokenizer (:func:`harness.core.tokens.tool_tokens`) and, when the total
passes a threshold, *defers* them: they stay callable through ``search_tools`` but are not sent.
The threshold is a token count or a share of the model's context window (Claude Code switches at
10 %, the default here). A server's ``deferLoading: true|false`` wins either way, so a user can
keep the two tools they always need in view (users ask for exactly that). Disabled tools never
reach this module: deferred means "not shown yet", disabled means "does not exist".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from harness.core.tokens import DEFAULT_ENCODING, tool_tokens
from harness.core.tools import Tool


@dataclass(frozen=True)
class DeferralPolicy:
    """When to defer: above ``threshold_tokens`` or ``threshold_share`` of ``context_window`` (the lower wins)."""

    threshold_tokens: int | None = None
    threshold_share: float | None = 0.10
    context_window: int = 200_000
    encoding: str = DEFAULT_ENCODING

    def __post_init__(self) -> None:
        if self.threshold_tokens is None and self.threshold_share is None:
            raise ValueError("DeferralPolicy needs threshold_tokens or threshold_share; both are None.")
        if self.threshold_tokens is not None and self.threshold_tokens < 0:
            raise ValueError(f"threshold_tokens must be 0 or more, got {self.threshold_tokens}.")
        if self.threshold_share is not None and not 0 < self.threshold_share <= 1:
            raise ValueError(f"threshold_share must be in (0, 1], got {self.threshold_share}.")
        if self.context_window <= 0:
            raise ValueError(f"context_window must be a positive number of tokens, got {self.context_window}.")

    @property
    def threshold(self) -> int:
        """The token count above which tools are deferred."""
        limits = [self.threshold_tokens] if self.threshold_tokens is not None else []
        if self.threshold_share is not None:
            limits.append(int(self.threshold_share * self.context_window))
        return min(limits)


@dataclass(frozen=True)
class DeferralPlan:
    """The decision taken at session start, with the numbers behind it."""

    tokens: Mapping[str, int]  # canonical name -> tokens of its definition
    loaded: tuple[str, ...]
    deferred: tuple[str, ...]
    threshold: int
    reasons: Mapping[str, str]  # server -> why its tools are loaded or deferred

    @property
    def total_tokens(self) -> int:
        return sum(self.tokens.values())

    @property
    def auto_defer(self) -> bool:
        return self.total_tokens > self.threshold

    @property
    def deferred_tokens(self) -> int:
        return sum(self.tokens[n] for n in self.deferred)


def plan_deferral(
    tools_by_server: Mapping[str, Sequence[Tool]],
    overrides: Mapping[str, bool | None],
    policy: DeferralPolicy = DeferralPolicy(),
) -> DeferralPlan:
    """Load or defer every tool: the server's ``deferLoading`` when set, else the threshold."""
    tokens = {t.name: tool_tokens(t, policy.encoding) for tools in tools_by_server.values() for t in tools}
    total = sum(tokens.values())
    auto = total > policy.threshold
    loaded: list[str] = []
    deferred: list[str] = []
    reasons: dict[str, str] = {}
    for server, tools in tools_by_server.items():
        override = overrides.get(server)
        defer = auto if override is None else override
        if override is not None:
            reasons[server] = f"deferLoading is {str(override).lower()} in the config"
        else:
            relation = ">" if auto else "≤"
            reasons[server] = f"all MCP tools: {total:,} tokens {relation} threshold {policy.threshold:,}"
        (deferred if defer else loaded).extend(t.name for t in tools)
    return DeferralPlan(tokens, tuple(loaded), tuple(deferred), policy.threshold, reasons)
