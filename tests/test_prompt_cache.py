"""Prompt caching under Anthropic's rules: a hand-computed fixture, and the loop's prompts recorded."""
import asyncio

import pytest

from harness.core.messages import Transcript
from workbook.evaluation.prompt_cache import Block, CacheRules, CacheUse, Prompt, PromptRecorder, cache_use, prompt_of, run_cache_use
from harness.core.tools import Tool


def P(*blocks):
    """A prompt from (key, tokens) pairs."""
    return Prompt(tuple(Block("tool", k, n) for k, n in blocks))


RULES = CacheRules(min_tokens=100)


def test_hand_computed_fixture():
    stable = [("a", 60), ("b", 50)]
    prompts = [
        P(*stable, ("m1", 10)),                # 120 ≥ 100: written whole
        P(*stable, ("m1", 10), ("m2", 20)),    # reads 120, writes 20
        P(("c", 60), ("b", 50), ("m1", 10)),   # first block differs: reads nothing, writes 120
        P(("d", 30), ("m1", 10)),              # 40 < 100: uncached
    ]
    uses = cache_use(prompts, RULES)
    assert uses == [CacheUse(0, 120, 0), CacheUse(120, 20, 0), CacheUse(0, 120, 0), CacheUse(0, 0, 40)]
    total = run_cache_use(prompts, RULES)
    assert total == CacheUse(read=120, written=260, uncached=40)
    # cost in base-input-token equivalents: 40 + 1.25 × 260 + 0.1 × 120 = 377
    assert total.cost(RULES) == pytest.approx(377.0)


def test_identical_prompt_is_read_whole_and_short_prompts_never_cache():
    p = P(("a", 200))
    assert cache_use([p, p], RULES) == [CacheUse(0, 200, 0), CacheUse(200, 0, 0)]
    assert cache_use([P(("a", 99)), P(("a", 99))], RULES) == [CacheUse(0, 0, 99)] * 2


def test_ttl_expires_an_unused_entry_and_a_read_refreshes_it():
    p = P(("a", 200))
    assert cache_use([p, p], RULES, times=[0, 301])[1] == CacheUse(0, 200, 0)
    assert cache_use([p, p, p], RULES, times=[0, 200, 450])[2] == CacheUse(200, 0, 0)


def test_lookback_limits_how_far_back_an_entry_is_found():
    head = [("a", 200)]
    tail = [(f"m{i}", 1) for i in range(25)]
    near = cache_use([P(*head), P(*head, *tail[:20])], RULES)[1]
    far = cache_use([P(*head), P(*head, *tail)], RULES)[1]
    assert near.read == 200 and far.read == 0 and far.written == 225


def test_bad_rules_and_times_are_refused():
    with pytest.raises(ValueError):
        CacheRules(min_tokens=-1)
    with pytest.raises(ValueError, match="times has 1 entries for 2 prompts"):
        cache_use([P(("a", 1))] * 2, RULES, times=[0])


def test_recorder_sees_tools_then_system_then_messages():
    class Echo:
        name = "echo"

        async def complete(self, *, system, transcript, tools, max_tokens=1024):
            return "ok"

    tools = [Tool("alpha", "First tool.", {"type": "object", "properties": {}}),
             Tool("beta", "Second tool.", {"type": "object", "properties": {}})]
    t = Transcript()
    t.add_user("hello")
    recorder = PromptRecorder(Echo())
    asyncio.run(recorder.complete(system="Be brief.", transcript=t, tools=tools))
    (prompt,) = recorder.clear()
    assert [b.kind for b in prompt.blocks] == ["tool", "tool", "system", "message"]
    assert prompt == prompt_of(tools, "Be brief.", t) and prompt.tool_tokens < prompt.tokens
    swapped = prompt_of(tools[::-1], "Be brief.", t)
    assert swapped.tokens == prompt.tokens and swapped.blocks[0].key != prompt.blocks[0].key
    assert recorder.prompts == []


def test_loading_strategies_through_the_real_loop_and_their_cache_use():
    from harness import ToolCatalog
    from workbook.demo import demo_tools, load_scenarios
    from workbook.evaluation.loading import loading_strategies
    from workbook.evaluation.prompt_cache import found_tools_in_messages, run_recorded
    from workbook.providers.offline import OfflineModel

    scenario = next(s for s in load_scenarios("dev") if s.kind == "task" and len(s.tools) >= 2)
    n_tools = len(demo_tools())
    strategies = loading_strategies(k=3)
    assert list(strategies) == ["all tools", "per-turn top-3", "deferred search, keep loaded", "per-turn top-3 + search_tools"]
    runs = {name: asyncio.run(run_recorded(OfflineModel(), lambda: ToolCatalog(demo_tools()), [scenario], **kw))[0]
            for name, kw in strategies.items()}
    every = runs["all tools"].prompts
    assert len(every) >= 2 and all(sum(b.kind == "tool" for b in p.blocks) == n_tools for p in every)
    assert len({p.blocks[:n_tools] for p in every}) == 1, "one fixed tools block"
    assert all(sum(b.kind == "tool" for b in p.blocks) <= 3 for p in runs["per-turn top-3"].prompts)
    first = runs["deferred search, keep loaded"].prompts[0]
    assert [b.kind for b in first.blocks].count("tool") == 1  # search_tools alone
    assert first.tool_tokens < every[0].tool_tokens
    deferred = runs["deferred search, keep loaded"].prompts
    assert any(p.tool_tokens > first.tool_tokens for p in deferred), "a search found tools"
    assert all(later.blocks[:len(earlier.blocks)] == earlier.blocks for earlier, later in zip(deferred, deferred[1:])), \
        "the loop places found tools after the result that found them: each request extends the one before"
    assert found_tools_in_messages(deferred) == deferred, "already where the third placement would put them"
    use = runs["all tools"].use(CacheRules(min_tokens=1024))
    assert use.read >= (len(every) - 1) * every[0].tool_tokens and use.uncached == 0


def test_found_tools_expanded_after_the_conversation_keep_the_prefix():
    from workbook.evaluation.prompt_cache import found_tools_in_messages

    def R(tools, msgs):
        """A request: tool blocks, a system prompt of 30 tokens, message blocks."""
        return Prompt((*(Block("tool", k, n) for k, n in tools), Block("system", "sys", 30),
                       *(Block("message", k, n) for k, n in msgs)))

    s, f, g = ("search", 50), ("found", 40), ("more", 20)
    m1, m2, m3, m4 = ("m1", 20), ("m2", 10), ("m3", 10), ("m4", 5)
    in_tools = [R([s], [m1]), R([s, f], [m1, m2]), R([s, f], [m1, m2, m3]), R([s, f, g], [m1, m2, m3, m4])]
    at_end = found_tools_in_messages(in_tools)
    # the found definitions sit right after the message that found them, and stay there
    assert [b.key for b in at_end[1].blocks] == ["search", "sys", "m1", "m2", "found"]
    assert [b.key for b in at_end[3].blocks] == ["search", "sys", "m1", "m2", "found", "m3", "m4", "more"]
    assert at_end[0] == in_tools[0] and [p.tokens for p in at_end] == [p.tokens for p in in_tools]
    # in the tools block each search rewrites the request whole: 100 written, 150, 160 (reads the 150), 185
    assert cache_use(in_tools, RULES) == [CacheUse(0, 100, 0), CacheUse(0, 150, 0), CacheUse(150, 10, 0),
                                          CacheUse(0, 185, 0)]
    # after the conversation every request reads the one before: 100, 100 + 50, 150 + 10, 160 + 25
    assert cache_use(at_end, RULES) == [CacheUse(0, 100, 0), CacheUse(100, 50, 0), CacheUse(150, 10, 0),
                                        CacheUse(160, 25, 0)]
    assert run_cache_use(at_end, RULES).cost(RULES) < run_cache_use(in_tools, RULES).cost(RULES)


def test_found_tools_in_messages_needs_a_growing_conversation():
    from workbook.evaluation.prompt_cache import found_tools_in_messages

    a = Prompt((Block("system", "sys", 5), Block("message", "m1", 5)))
    b = Prompt((Block("system", "sys", 5), Block("message", "other", 5)))
    with pytest.raises(ValueError, match="request 2 does not continue"):
        found_tools_in_messages([a, b])


def test_cost_summary_of_recorded_runs_per_task_per_request_and_per_solved_task():
    """Two runs by hand: one solved, one not; the summary's numbers follow from CacheUse alone."""
    from workbook.demo import Scenario
    from workbook.evaluation.prompt_cache import PricedRun, cost_summary
    from workbook.evaluation.scenarios import ScenarioRun
    from harness.providers.base import Usage
    from harness.selection.agent import RunResult

    def run(success: bool) -> ScenarioRun:
        return ScenarioRun(Scenario("s", "a request", (), "task"), RunResult("", Transcript(), [], "end_turn", Usage()), success)

    prompt = P(("a", 60), ("b", 60))
    solved = PricedRun(run(True), [prompt, prompt])  # written 120, then read 120
    failed = PricedRun(run(False), [P(("c", 50))])  # too short: uncached 50
    s = cost_summary([solved, failed], RULES)
    assert [s.per_task[0], s.per_task[1]] == [1.25 * 120 + 0.1 * 120, 50.0]
    assert (s.solved, s.requests, s.total) == (1, 3, CacheUse(read=120, written=120, uncached=50))
    assert s.mean == (162.0 + 50.0) / 2 and s.per_solved == 212.0 and s.per_request == 290 / 3
    assert (s.read, s.written, s.no_cache) == (60.0, 60.0, 145.0)
    assert s.share("read") == 120 / 290 and s.low <= s.mean <= s.high
    assert cost_summary([failed], RULES).per_solved is None
