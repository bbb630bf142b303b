"""Prompt caching: which input tokens of an agent's requests a provider's cache would serve.

Introduced in Chapter 5 (``notebooks/05_mcp_integration.ipynb``, section 6, after deferral and its success).

A request is one token sequence in a fixed order — tool definitions, then the system prompt,
then the messages — and Anthropic's cache serves only an exact *prefix* of it that an earlier
request wrote. So the order of the tools block matters for cost as well as for choice: a
selector that shows different tools each turn changes the prompt at its first block and reads
nothing back, while a deferral that keeps found tools loaded changes it only when a search adds
one. A third placement keeps the tools block fixed and expands found tools *after the
conversation*, inside the search result (Anthropic's ``tool_reference`` blocks, OpenAI's
``tool_search_output``, a proxy's ``search_tools`` answer): :func:`found_tools_in_messages`
rewrites a deferred run's requests that way, so all earlier blocks stay a prefix the cache can
read. :func:`cache_use` replays the prompts a run actually sent under the documented rules
(:class:`CacheRules`); :class:`PromptRecorder` collects those prompts from any provider.

The rules modelled (Anthropic's prompt-caching documentation, automatic caching: one
``cache_control`` breakpoint that sits on the last block and moves forward with the conversation):

* a prompt at least ``min_tokens`` long is written to the cache up to its last block; shorter
  prompts are neither written nor read (the minimum depends on the model: 4,096 tokens for
  Claude Haiku 4.5, the workbook's default model, and Opus 4.5/4.6; 1,024 for Sonnet 4.5);
* a later prompt reads the longest earlier entry that is a prefix of it, provided that entry
  ends within ``lookback_blocks`` blocks of the breakpoint (the docs: about 20) and was used
  less than ``ttl_seconds`` ago (5 minutes; every read refreshes it);
* cache writes cost ``write_factor`` × the base input price (1.25 for the 5-minute TTL), cache
  reads ``read_factor`` × (0.1); input after the breakpoint, or in a prompt too short to cache,
  costs the base price.

A block here is one tool definition, the system prompt, or one message (the API counts each
content block; a message of several blocks only makes the lookback longer). Token counts are the
workbook's tokenizer (cl100k, see :mod:`harness.core.tokens`), not Claude's: the shares hold, the
absolute numbers are estimates.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

from harness.core.messages import Transcript
from harness.core.rates import bootstrap_interval
from harness.core.tokens import DEFAULT_ENCODING, count_text, definition_json, tool_tokens
from harness.core.tools import Tool
from workbook.demo.labels import Scenario
from workbook.evaluation.scenarios import ScenarioRun, run_scenarios
from harness.providers.base import ModelTurn, Provider
from harness.selection.catalog import ToolCatalog


@dataclass(frozen=True)
class Block:
    """One piece of a prompt: what it is (a digest of its content) and how many tokens it costs."""

    kind: str  # "tool", "system" or "message"
    key: str
    tokens: int


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True)
class Prompt:
    """A request as the cache sees it: its blocks in the order the API serialises them."""

    blocks: tuple[Block, ...]

    @property
    def tokens(self) -> int:
        return sum(b.tokens for b in self.blocks)

    @property
    def tool_tokens(self) -> int:
        return sum(b.tokens for b in self.blocks if b.kind == "tool")


def prompt_of(tools: Sequence[Tool], system: str, transcript: Transcript, encoding: str = DEFAULT_ENCODING) -> Prompt:
    """The blocks of one request: each tool definition, the system prompt, each message — in that order, with a
    definition a search found (:attr:`~harness.core.tools.Tool.found_after`) right after the message that found it."""
    tool = lambda t: Block("tool", _digest(definition_json(t)), tool_tokens(t, encoding))
    blocks = [tool(t) for t in tools if t.found_after is None]
    if system:
        blocks.append(Block("system", _digest(system), count_text(system, encoding)))
    for i, m in enumerate(transcript.messages, 1):
        text = json.dumps(m.to_api(), ensure_ascii=False)
        blocks.append(Block("message", _digest(text), count_text(text, encoding)))
        blocks += [tool(t) for t in tools if t.found_after == i]
    return Prompt(tuple(blocks))


def found_tools_in_messages(prompts: Sequence[Prompt]) -> list[Prompt]:
    """The same requests with each found tool's definition expanded after the conversation.

    A tool that is not in the first request's tools block was found during the run; its
    definition moves from the tools block to right after the last message of the first request
    that had it (the search result that found it) and stays there in every later request, as
    conversation history does. For tools kept loaded the tokens are unchanged; only where the found
    definitions sit differs.
    """
    if not prompts:
        return []
    base = {b.key for b in prompts[0].blocks if b.kind == "tool"}
    found_after: dict[Block, int] = {}  # a found definition -> how many messages precede it
    out: list[Prompt] = []
    earlier: tuple[Block, ...] = ()
    for i, prompt in enumerate(prompts):
        messages = tuple(b for b in prompt.blocks if b.kind == "message")
        if messages[:len(earlier)] != earlier:
            raise ValueError(f"request {i + 1} does not continue the conversation of the request before it, "
                             "so found tools have no place after it.")
        for b in prompt.blocks:
            if b.kind == "tool" and b.key not in base:
                found_after.setdefault(b, len(messages))
        head = [b for b in prompt.blocks if b.kind == "system" or (b.kind == "tool" and b.key in base)]
        body = [b for b, n in found_after.items() if n == 0]
        for j, m in enumerate(messages, start=1):
            body += [m, *(b for b, n in found_after.items() if n == j)]
        out.append(Prompt(tuple(head + body)))
        earlier = messages
    return out


class PromptRecorder:
    """A provider that passes every request on and keeps the prompt it sent (:func:`prompt_of`).

    Wrap the model with it, run the task, read :attr:`prompts`; :meth:`clear` starts a new task.
    """

    def __init__(self, provider: Provider, encoding: str = DEFAULT_ENCODING) -> None:
        self.provider = provider
        self.name = getattr(provider, "name", "provider")
        self.encoding = encoding
        self.prompts: list[Prompt] = []

    async def complete(self, *, system: str, transcript: Transcript, tools: Sequence[Tool], max_tokens: int = 1024) -> ModelTurn:
        self.prompts.append(prompt_of(tools, system, transcript, self.encoding))
        return await self.provider.complete(system=system, transcript=transcript, tools=tools, max_tokens=max_tokens)

    def clear(self) -> list[Prompt]:
        """The prompts recorded so far (and forget them)."""
        out, self.prompts = self.prompts, []
        return out


@dataclass(frozen=True)
class CacheRules:
    """Anthropic's documented prompt-caching rules and price factors (see the module docstring)."""

    min_tokens: int = 4_096  # Claude Haiku 4.5 (the workbook's default model); 1,024 for Sonnet 4.5
    write_factor: float = 1.25  # 5-minute TTL writes
    read_factor: float = 0.10
    ttl_seconds: float = 300.0
    lookback_blocks: int = 20

    def __post_init__(self) -> None:
        if self.min_tokens < 0 or self.lookback_blocks < 0 or self.ttl_seconds <= 0:
            raise ValueError("CacheRules needs min_tokens ≥ 0, lookback_blocks ≥ 0 and ttl_seconds > 0.")
        if self.write_factor < 0 or self.read_factor < 0:
            raise ValueError("Cache price factors must be zero or more.")


@dataclass(frozen=True)
class CacheUse:
    """How one request's (or a run's) input tokens are billed."""

    read: int = 0
    written: int = 0
    uncached: int = 0

    @property
    def total(self) -> int:
        return self.read + self.written + self.uncached

    def cost(self, rules: CacheRules = CacheRules()) -> float:
        """The input cost in base-input-token equivalents (multiply by the price per token for money)."""
        return self.uncached + rules.write_factor * self.written + rules.read_factor * self.read

    def __add__(self, other: "CacheUse") -> "CacheUse":
        return CacheUse(self.read + other.read, self.written + other.written, self.uncached + other.uncached)


@dataclass
class PromptCache:
    """The provider's cache for one sequence of requests, replayed request by request."""

    rules: CacheRules = CacheRules()
    entries: dict[tuple[str, ...], float] = field(default_factory=dict)  # a cached prefix -> when it was last used

    def send(self, prompt: Prompt, at: float = 0.0) -> CacheUse:
        """Bill ``prompt`` sent at time ``at`` (seconds) and update the cache."""
        keys = tuple(b.key for b in prompt.blocks)
        n = len(keys)
        self.entries = {k: used for k, used in self.entries.items() if at - used < self.rules.ttl_seconds}
        hit = 0
        for length in range(n, max(0, n - self.rules.lookback_blocks - 1), -1):
            if keys[:length] in self.entries:
                self.entries[keys[:length]] = at  # a read refreshes the entry's TTL
                hit = length
                break
        read = sum(b.tokens for b in prompt.blocks[:hit])
        rest = prompt.tokens - read
        if prompt.tokens >= self.rules.min_tokens and n > hit:
            self.entries[keys] = at
            return CacheUse(read=read, written=rest)
        return CacheUse(read=read, uncached=rest)


def cache_use(prompts: Sequence[Prompt], rules: CacheRules = CacheRules(),
              times: Sequence[float] | None = None) -> list[CacheUse]:
    """Each request's cache reads, writes and uncached tokens, replayed in order on a cold cache.

    ``times`` are the seconds at which the requests were sent (all within one TTL when omitted:
    an agent's turns follow each other in seconds).
    """
    if times is not None and len(times) != len(prompts):
        raise ValueError(f"times has {len(times)} entries for {len(prompts)} prompts.")
    cache = PromptCache(rules)
    return [cache.send(p, times[i] if times is not None else 0.0) for i, p in enumerate(prompts)]


def run_cache_use(prompts: Sequence[Prompt], rules: CacheRules = CacheRules()) -> CacheUse:
    """A whole run's cache use: the sum over its requests."""
    return sum(cache_use(prompts, rules), CacheUse())


@dataclass
class PricedRun:
    """One scenario's run and the prompts it sent (its setup requests' included)."""

    run: ScenarioRun
    prompts: list[Prompt]

    @property
    def success(self) -> bool:
        return self.run.success

    def use(self, rules: CacheRules = CacheRules()) -> CacheUse:
        return run_cache_use(self.prompts, rules)


class Priced(Protocol):
    """What a cost summary reads of a run: its prompts, whether it succeeded, and its cache use
    (a :class:`PricedRun`, or a committed row of the real model's runs)."""

    @property
    def prompts(self) -> Sequence[Any]: ...  # Any: Prompts, or a row's serialised blocks; only their count is read

    @property
    def success(self) -> bool: ...

    def use(self, rules: CacheRules = CacheRules()) -> CacheUse: ...


async def run_recorded(provider: Provider, make_catalog: Callable[[], ToolCatalog], scenarios: Sequence[Scenario],
                       **options: Any) -> list[PricedRun]:  # Any: forwarded unchanged to run_scenarios
    """:func:`workbook.evaluation.scenarios.run_scenarios` one scenario at a time, keeping each run's prompts.

    Each scenario starts on a cold cache (a fresh session): a cache warmed by earlier tasks would
    favour whatever keeps the same prefix across tasks (all tools, in a fixed order).
    """
    recorder = PromptRecorder(provider)
    out = []
    for s in scenarios:
        (run,) = await run_scenarios(recorder, make_catalog, [s], **options)
        out.append(PricedRun(run, recorder.clear()))
    return out


@dataclass(frozen=True)
class CostSummary:
    """Cache use and input cost of one way of loading tools over a set of recorded runs (Chapter 5, section 6).

    Costs are in base-input-token equivalents; ``per_task`` carries one value per scenario so two ways
    run on the same scenarios can be compared with a paired interval.
    """

    per_task: list[float]
    uses: list[CacheUse]
    solved_flags: list[float]
    requests: int
    low: float
    high: float

    @property
    def total(self) -> CacheUse:
        return sum(self.uses, CacheUse())

    @property
    def solved(self) -> int:
        return int(sum(self.solved_flags))

    @property
    def mean(self) -> float:
        return sum(self.per_task) / len(self.per_task)

    @property
    def per_request(self) -> float:
        return self.total.total / self.requests

    @property
    def per_solved(self) -> float | None:
        """A ratio of totals (cost of every task / tasks solved); None when nothing was solved."""
        return sum(self.per_task) / self.solved if self.solved else None

    @property
    def read(self) -> float:
        return self.total.read / len(self.uses)

    @property
    def written(self) -> float:
        return self.total.written / len(self.uses)

    @property
    def no_cache(self) -> float:
        """The mean cost per task if nothing were cached: every input token at the base price."""
        return self.total.total / len(self.uses)

    def share(self, part: str) -> float:
        """The share of all input tokens that were ``read``, ``written`` or ``uncached``."""
        return getattr(self.total, part) / self.total.total


def cost_summary(runs: Sequence[Priced], rules: CacheRules = CacheRules()) -> CostSummary:
    """Replay each run's prompts on a cold cache under ``rules`` and sum what they cost."""
    uses = [p.use(rules) for p in runs]
    per_task = [u.cost(rules) for u in uses]
    low, high = bootstrap_interval(per_task)
    return CostSummary(per_task, uses, [float(p.success) for p in runs], sum(len(p.prompts) for p in runs), low, high)
