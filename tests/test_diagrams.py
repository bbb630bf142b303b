"""The mechanism diagrams: well-formed SVG with alt text, text inside its boxes and the picture,
and the data-driven ones drawing exactly what the package computes."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from harness.selection.catalog import ToolCatalog
from harness.retrieval.hybrid import rrf
from harness.core.tools import Tool
from workbook.views import diagrams as d

NS = {"s": "http://www.w3.org/2000/svg"}
EM = 0.55  # DejaVu Sans' average glyph width in em; the layout budgets 0.58


def parse(diagram: d.Diagram) -> ET.Element:
    return ET.fromstring(diagram.svg)


def texts(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter(f"{{{NS['s']}}}text")]


def extent(t: ET.Element) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) of a text element, from its anchor, size and an average glyph width."""
    x, y, size = float(t.get("x")), float(t.get("y")), float(t.get("font-size"))
    width = len(t.text or "") * size * EM
    left = {"start": x, "middle": x - width / 2, "end": x - width}[t.get("text-anchor", "start")]
    return left, y - size * 0.8, left + width, y + size * 0.25


@pytest.fixture(scope="module")
def gallery() -> list[d.Diagram]:
    return d.all_diagrams()


def test_every_diagram_is_well_formed_svg_with_alt_text(gallery):
    assert len({g.name for g in gallery}) == len(gallery) == 14
    for g in gallery:
        root = parse(g)
        assert root.tag == f"{{{NS['s']}}}svg" and root.get("role") == "img", g.name
        assert root.get("aria-label") == g.title and g.title, g.name
        assert root.find("s:title", NS).text == g.title and len(root.find("s:desc", NS).text) > 40, g.name
        assert g._repr_svg_() == g.svg


def test_a_notebook_shows_each_diagram_as_an_image_with_alt_text(gallery):
    import base64
    import html

    for g in gallery:
        img = ET.fromstring(g._repr_html_())
        assert img.tag == "img" and img.get("alt") == g.alt and g.title in g.alt and g.description in g.alt
        assert base64.b64decode(img.get("src").removeprefix("data:image/svg+xml;base64,")).decode() == g.svg
        assert repr(g) == f"<Diagram {g.name}: {g.title}>"  # what a front end shows when it shows text
    hostile = d.deferral_and_search('"><script>x</script>', d.demo_catalog())
    assert "<script>" not in hostile._repr_html_().split(" src=")[0] and html.escape('"><script>') in hostile._repr_html_()


def test_every_text_is_legible_and_inside_the_picture(gallery):
    for g in gallery:
        root = parse(g)
        _, _, width, height = map(float, root.get("viewBox").split())
        assert width <= 900 and float(root.get("width")) == width, g.name
        for t in root.iter(f"{{{NS['s']}}}text"):
            assert float(t.get("font-size")) >= 12, (g.name, t.text)
            left, top, right, bottom = extent(t)
            assert 0 <= left and right <= width and 0 <= top and bottom <= height, (g.name, t.text, (left, right, top, bottom))


def test_every_text_in_a_box_stays_inside_it_and_nothing_was_cut(gallery):
    for g in gallery:
        root = parse(g)
        for box in root.iterfind(".//s:g[@class='box']", NS):
            rect = box.find("s:rect", NS)
            x, y, w, h = (float(rect.get(a)) for a in ("x", "y", "width", "height"))
            for t in box.iterfind("s:text", NS):
                left, top, right, bottom = extent(t)
                assert x <= left and right <= x + w and y <= top and bottom <= y + h, (g.name, t.text)
        # clip() is a last resort for untrusted names: the default layouts must fit without it
        assert not [s for s in texts(root) if s.endswith("…") and s != "…"], g.name


def test_ids_are_per_diagram_so_a_page_of_them_never_shares_one(gallery):
    ids = [i for g in gallery for i in re.findall(r'id="([^"]+)"', g.svg)]
    assert len(ids) == len(set(ids)) == 2 * len(gallery)  # an arrow head and a hatch each


def test_bm25_draws_the_catalogs_own_ranking_and_numbers():
    catalog = d.demo_catalog()
    query = "post a message to the team channel"
    root = parse(d.bm25_scoring(query, catalog, top=4))
    drawn = [m.group(1) for s in texts(root) if (m := re.fullmatch(r"\d+\. (\S+)", s))]
    assert drawn == catalog.rank(query, 4)
    scores = dict(zip(catalog.ids, catalog.scores(query)))
    shown = texts(root)
    for name in drawn:
        assert f"{scores[name]:.2f}" in shown
        for t in catalog.explain(query, name):
            if t.tf:
                assert f"tf {t.tf} → {t.tf_part:.2f}" in shown and f"× {t.idf:.2f} = {t.contribution:.2f}" in shown
    assert f"avgdl = {catalog.index.avgdl:.1f} words." in " ".join(shown)


def test_bm25_follows_its_input_not_a_fixed_picture():
    tools = [Tool("read_file", "Read a file from disk."), Tool("read_email", "Read an email message."),
             Tool("write_file", "Write text to a file on disk, replacing the file.")]
    catalog = ToolCatalog(tools)
    root = parse(d.bm25_scoring("write the file", tools))
    drawn = [m.group(1) for s in texts(root) if (m := re.fullmatch(r"\d+\. (\S+)", s))]
    assert drawn[: len(catalog.rank("write the file"))] == catalog.rank("write the file") and drawn[0] == "write_file"
    assert set(drawn) == {"read_file", "read_email", "write_file"}  # every tool of a tiny catalog, matched first


@pytest.mark.parametrize("first, second", [
    (["a", "b", "c"], ["c", "b", "a"]),
    (["search_code", "read_file", "find_files"], ["find_files", "git_log", "search_code", "read_file"]),
    (["x"], ["y", "z", "x"]),
])
def test_rrf_draws_rrfs_own_fused_order_and_sums(first, second):
    diagram = d.rrf_fusion(first, second, k=60)
    shown = texts(parse(diagram))
    fused = rrf([first, second], 60)
    column = [s.split(". ", 1)[1] for s in shown if re.fullmatch(r"\d+\. \S+", s)]
    # the two input lists, then the fused list, each in order
    assert column[len(first): len(first) + len(fused)] == fused or column[-len(fused):] == fused, column
    for name in fused:
        total = sum(1 / (60 + r.index(name) + 1) for r in (first, second) if name in r)
        assert any(f"{total:.4f}" in s for s in shown), name
    assert ", ".join(fused) in diagram.description


def test_rrf_with_real_rankings_draws_them():
    first, second, labels = d.demo_rankings(dense=False)
    assert first == d.demo_catalog().rank("find where a function is defined in the code", 5)
    assert f"the fused order is {', '.join(rrf([first, second]))}." in d.rrf_fusion(first, second, labels=labels).description


def test_the_cache_keeps_exactly_the_common_prefix():
    a, b, c = (d.Segment(x, x, 10) for x in "abc")
    assert d.cached_prefix([a, b, c], [a, b, c, c]) == 3
    assert d.cached_prefix([a, b, c], [a, c, b]) == 1
    assert d.cached_prefix([a], [b, a]) == 0
    desc = d.request_layout().description
    assert "1 · Per-turn top-k: cache keeps: nothing" in desc
    assert "2 · Deferral: cache keeps: pinned: search." in desc
    assert "cache keeps: pinned: search, system, user, assistant." in desc


def test_deferral_draws_what_the_catalog_finds():
    catalog = d.demo_catalog()
    shown = texts(parse(d.deferral_and_search("run the failing tests again", catalog, limit=2)))
    for name in catalog.rank("run the failing tests again", 2):
        assert name in shown
    assert f"{len(catalog)} tools deferred" in shown


def test_deferral_by_default_returns_what_a_search_returns_when_the_model_names_no_limit():
    from harness.selection.discovery import DEFAULT_LIMIT

    catalog = d.demo_catalog()
    shown = texts(parse(d.deferral_and_search()))
    assert f"and returns the best {DEFAULT_LIMIT}" in shown
    found = catalog.rank("send a message to the team channel", DEFAULT_LIMIT)
    assert len(found) == DEFAULT_LIMIT and all(name in shown for name in found)


def places(root: ET.Element) -> list[ET.Element]:
    """The pinning diagram's top-k places, every turn's: filled squares, and dashed empty ones."""
    return root.findall(".//s:g[@class='top-k']/s:rect", NS)


@pytest.fixture(scope="module")
def demo_lanes() -> list[d.Lane]:
    return d.demo_pinning_lanes()


def test_pinning_draws_what_the_selector_shows_at_each_turn_of_the_demo_opener_and_pivot(demo_lanes):
    from harness.selection.discovery import discovery_tool
    from harness.selection.ranking import DEFAULT_K, Selector

    catalog = d.demo_catalog()
    selector = Selector.over(catalog, pinned=[discovery_tool(catalog)])
    opener, pivot = demo_lanes
    assert (opener.kind, opener.request, opener.needed) == ("opener", "hi", ())
    assert (pivot.kind, pivot.needed, pivot.earlier) == ("pivot", ("post_channel_message",), 3)
    for lane in demo_lanes:
        for turn in lane.turns:  # what the loop recorded is the selector's own choice for that turn's query
            assert [*turn.pinned, *turn.ranked] == selector.rank(turn.query) and turn.pinned == ("list_available_tools",)
    # the chapter's mechanism: "hi" selects nothing, the pivot's first turn lacks the chat tool, the pin is always there
    assert opener.turns[0].ranked == () and opener.turns[0].calls == (("list_available_tools", True),)
    assert "post_channel_message" not in pivot.turns[0].ranked and pivot.turns[0].calls[0][0] == "list_available_tools"
    first = next(n for n, t in enumerate(pivot.turns, 1) if "post_channel_message" in t.ranked)
    diagram = d.pinning_across_turns(demo_lanes)
    root = parse(diagram)
    shown = texts(root)
    turns = [t for lane in demo_lanes for t in lane.turns]
    assert shown.count("pinned: every turn") == len(turns) and shown.count("list_available_tools") >= len(turns)
    labels = [s for s in shown if s.startswith(("0 tools", "no post_channel", "post_channel_message at #")) or s.endswith("tools shown")]
    assert labels == ["0 tools: nothing matched", f"{len(opener.turns[1].ranked)} tools shown",
                      *["no post_channel_message"] * (first - 1),
                      *[f"post_channel_message at #{t.ranked.index('post_channel_message') + 1}" for t in pivot.turns[first - 1:]]]
    squares = places(root)
    assert len(squares) == DEFAULT_K * len(turns)
    assert sum(r.get("stroke-dasharray") is not None for r in squares) == sum(DEFAULT_K - len(t.ranked) for t in turns)
    assert sum(r.get("fill") == d.GREEN[0] for r in squares) == len(pivot.turns) - first + 1
    assert f"post_channel_message first in the top-{DEFAULT_K} on turn {first}" in " ".join(shown)
    assert diagram.description.startswith("Pinned in every request: list_available_tools. Opener “hi”: turn 1: "
                                          f"the top-{DEFAULT_K} shows 0 tools")


def test_pinning_follows_the_turns_it_is_given():
    turns = (d.ShownTurn("show the file", ("list_available_tools",), ("read_file", "git_log"), (("list_available_tools", True),)),
             d.ShownTurn("show the file list_available_tools", ("list_available_tools",), ("read_file",), (("post_channel_message", False),)),
             d.ShownTurn("show post_channel_message", ("list_available_tools",), ("git_log", "post_channel_message"),
                         (("post_channel_message", False), ("git_log", True))))
    diagram = d.pinning_across_turns([d.Lane("pivot", "now post it to #dev", ("post_channel_message",), turns, earlier=2)], k=3)
    root = parse(diagram)
    shown = texts(root)
    assert "Pivot, after 2 earlier requests · needs post_channel_message" in shown and "“now post it to #dev”" in shown
    assert "list_available_tools, pinned, is in every request; the top-3 follows the query" in shown
    assert ["no post_channel_message", "no post_channel_message", "post_channel_message at #2"] == \
        [s for s in shown if "post_channel_message" in s and (s.startswith("no ") or " at #" in s)]
    assert "ran: the pinned tool" in shown and "error: not shown this turn" in shown  # turn 2's call of an unshown tool
    assert "error result" in shown and "+ 1 more calls" in shown  # turn 3's: shown, and failed for another reason
    squares = places(root)
    assert len(squares) == 9 and sum(r.get("stroke-dasharray") is not None for r in squares) == 1 + 2 + 1
    assert sum(r.get("fill") == d.GREEN[0] for r in squares) == 1
    closing = " ".join(shown)
    assert "post_channel_message first in the top-3 on turn 3, once its name was in the query" in closing
    assert "the pivot's request is in none of its 3 queries" in closing
    assert "turn 2: the top-3 shows 1 tools (no post_channel_message), the model calls post_channel_message (error result)" \
        in diagram.description


def test_pinning_without_a_pin_says_so_and_a_need_never_met_is_named():
    lane = d.Lane("pivot", "email dana", ("send_email",), (d.ShownTurn("show the log", (), ("git_log",)),))
    shown = " ".join(texts(parse(d.pinning_across_turns([lane]))))
    assert "Nothing pinned: each request carries only the top-10 the query selects" in shown and "nothing pinned" in shown
    assert "send_email never entered the top-10" in shown and "answers in text" in shown


def test_a_lane_is_read_from_a_scenario_run():
    import asyncio

    from harness.selection.discovery import discovery_tool
    from harness.selection.ranking import Selector
    from workbook.demo import load_scenarios
    from workbook.evaluation.scenarios import fresh_demo_catalog, run_scenario
    from workbook.providers.offline import OfflineModel

    pivot = next(s for s in load_scenarios("dev") if s.kind == "pivot")
    catalog = fresh_demo_catalog()
    run = asyncio.run(run_scenario(OfflineModel(), Selector.over(catalog, pinned=[discovery_tool(catalog)]), pivot))
    lane = d.lane_of(run)
    assert (lane.request, lane.needed, lane.earlier) == (pivot.request, pivot.tools, len(pivot.setup))
    assert [t.query for t in lane.turns] == [ev.query for ev in run.result.turns]
    assert [(*t.pinned, *t.ranked) for t in lane.turns] == [tuple(ev.tool_names) for ev in run.result.turns]
    assert [c for t in lane.turns for c in t.calls] == [(name, ok) for name, _, ok in run.result.calls()]


def test_the_cliff_diagram_draws_the_token_counts_it_is_given_and_counts_the_demo_tools_by_default():
    from harness.core.tokens import tools_tokens
    from workbook.views.diagrams import demo_catalog, tools_in_every_request

    given = tools_in_every_request([(3, 111), (9, 2_222)])
    assert "2,222" in given.svg and "N = 9" in given.svg and "111 at N = 3" in given.alt
    tools = demo_catalog().tools
    assert f"{tools_tokens(tools):,} at N = {len(tools)}" in tools_in_every_request().alt


def test_the_proxy_states_a_number_only_when_given_one():
    assert not re.search(r"\d,\d{3}", d.proxy().svg)
    assert "41,669 direct → 214" in d.proxy(direct_tokens=41_669, proxied_tokens=214).svg


def test_untrusted_text_is_escaped():
    root = parse(d.deferral_and_search('<script>alert("x")</script> & read', d.demo_catalog()))
    assert any("<script>" in s for s in texts(root))  # shown as text, parsed as text


def bars(diagram: d.Diagram, kind: str = "bar") -> list[tuple[float, float]]:
    """(x, width) of each bar of the query-time diagram, top to bottom; ``kind="whole"`` for the whole search's."""
    return [(float(r.get("x")), float(r.get("width"))) for g in parse(diagram).iterfind(f".//s:g[@class='{kind}']", NS)
            for r in g.iterfind("s:rect", NS)]


def test_the_query_time_diagram_draws_each_stage_as_long_as_its_time_one_after_another():
    stages = {"tokenize": 1.0, "embedding (onnx)": 6.0, "bm25 top-100": 2.0, "fusion": 1.0}
    diagram = d.query_time_stages(stages, total=12.0, tools=500, queries=20)
    drawn, (whole,) = bars(diagram), bars(diagram, "whole")
    assert len(drawn) == 4
    unit = whole[1] / 12.0  # px per ms: the whole search (the longest) sets the scale; the SVG rounds to 0.1 px
    assert [w for _, w in drawn] == pytest.approx([unit * ms for ms in (1, 6, 2, 1)], abs=0.1)
    assert [x - whole[0] for x, _ in drawn] == pytest.approx([unit * ms for ms in (0, 1, 7, 9)], abs=0.1)  # one after another
    shown = texts(parse(diagram))
    assert "6 ms · 50 %" in shown and "1 ms · 8 %" in shown and "12 ms" in shown  # shares of the whole search
    assert "Where one hybrid-rrf search's time goes, at 500 tools" in shown
    assert "The query's embedding: 7 of the whole search's 12 ms (58 %)." in shown  # the tokenizer is MiniLM's too
    assert "The stages' medians sum to 10 ms; medians need not add up to the whole's median." in shown
    assert "over 20 queries" in diagram.description and "embedding (onnx) 6 ms; bm25 top-100 2 ms" in diagram.description


def test_the_query_time_diagram_without_a_total_scales_to_the_stages_and_labels_the_table_s_figures():
    diagram = d.query_time_stages({"catalog matmul": 0.222, "dense top-100": 0.13, "bm25 top-100": 0.569}, queries=None)
    drawn = bars(diagram)
    assert bars(diagram, "whole") == [] and sum(w for _, w in drawn) == pytest.approx(390.0, abs=0.2)  # the bar area
    assert drawn[2][0] + drawn[2][1] == pytest.approx(drawn[0][0] + 390.0, abs=0.2)  # the last ends at its end
    shown = texts(parse(diagram))
    assert ["0.222 ms · 24 %", "0.13 ms · 14 %", "0.569 ms · 62 %"] == [s for s in shown if " ms · " in s]
    assert "a dot product with each of 2,797 tools" in shown and "the 100 tools nearest the query vector" in shown
    assert not any("embedding:" in s for s in shown)  # no embedding stage, no claim about one
    assert "queries" not in diagram.description


def test_the_query_time_diagram_draws_a_breakdowns_medians():
    from workbook.evaluation.query_time import StageTimes

    times = StageTimes(cpu={"tokenize": [0.1, 0.3, 0.2], "embedding (onnx)": [3.0, 5.0, 4.0], "total": [3.5, 5.6, 4.4]})
    assert times.medians() == {"tokenize": 0.2, "embedding (onnx)": 4.0}
    one = d.query_time_stages({"query embedding": 3.14}, 4.41, queries=100)
    assert "3.14 ms · 71 %" in texts(parse(one)) and "The other stages were not timed apart in this measurement." in one.alt
    shown = texts(parse(d.query_time_stages(times.medians(), times.percentile("total", 50, "cpu"), queries=3)))
    assert "4 ms · 91 %" in shown and "4.4 ms" in shown


@pytest.mark.parametrize("stages, total, message", [
    ({}, None, "at least one stage"),
    ({f"layer {i}": 1.0 for i in range(17)}, None, "at most 16 stages, not 17"),
    ({"fusion": -1.0}, None, "of at least 0"),
    ({"fusion": float("nan")}, None, "of at least 0"),
    ({"fusion": 2.0}, 1.0, "cannot be below a stage's"),
    ({"fusion": 0.0}, None, "a stage that took some time"),
])
def test_the_query_time_diagram_refuses_times_that_cannot_be_measured_ones(stages, total, message):
    with pytest.raises(ValueError, match=message) as info:
        d.query_time_stages(stages, total)
    assert str(info.value).count(". ") == 0 and str(info.value).endswith(".")


def test_hub_failures_draws_the_statuses_and_results_it_is_given():
    from types import SimpleNamespace as N

    statuses = {"a": N(state="failed", reason="command 'x' not found"), "b": N(state="ready", reason="3 tools listed")}
    calls = [("b", "ping", N(is_error=True, content="Tool 'ping' did not answer within 2 s; the call was abandoned."))]
    diagram = d.hub_failures(statuses, calls)
    shown = texts(parse(diagram))
    assert "a: failed" in shown and "command 'x' not found" in shown and "b: ready" in shown
    assert "ping → error result" in shown and "Tool 'ping' did not answer within 2 s" in shown  # up to the ';'
    assert "never started" in shown and "a failed, b ready" in diagram.description


def test_planning_draws_the_step_splitters_own_steps():
    from workbook.steps import split_steps

    task = "Read the file 'a.txt', then post it to #dev, then create an issue titled 'x'"
    shown = " ".join(texts(parse(d.servers_first_and_planning(task))))
    assert [f"step {i}" in shown for i in range(1, 4)] == [True] * 3 and "step 4" not in shown
    assert len(split_steps(task)) == 3 and "rank the task (weight 3) and each step (weight 1)" in shown
    with pytest.raises(ValueError, match="1 to 4 steps"):
        d.servers_first_and_planning("hi")


def test_course_map_shows_each_chapter_once_core_path_first():
    shown = " ".join(texts(parse(d.course_map())))
    for ch in d.COURSE:
        assert shown.count(f"Chapter {ch.number} · {ch.title}") == 1
    assert shown.index("Core path") < shown.index("Going further")


@pytest.mark.parametrize("call, message", [
    (lambda: d.bm25_scoring("the and of", d.demo_catalog()), "no searchable term"),
    (lambda: d.rrf_fusion([], ["a"]), "two non-empty rankings"),
    (lambda: d.rrf_fusion(list("abcdefghi"), ["a"]), "at most 8"),
    (lambda: d._Canvas(1200), "at most 900 px"),
    (lambda: d.pinning_across_turns([]), "1 to 10 turns"),
    (lambda: d.pinning_across_turns([d.Lane("opener", "hi", (), ())]), "each request with one at least"),
    (lambda: d.pinning_across_turns([d.Lane("opener", "hi", (), (d.ShownTurn("hi", (), ("a", "b")),))], k=1),
     "at most k = 1 ranked tools"),
])
def test_bad_input_gets_one_sentence(call, message):
    with pytest.raises(ValueError, match=message) as info:
        call()
    assert str(info.value).count(". ") == 0 and str(info.value).endswith(".")


def test_the_views_package_exports_the_diagrams_and_self_checks():
    import workbook.views as views

    assert views.course_map is d.course_map and views.rrf_fusion is d.rrf_fusion
    assert {"self_check", "grade", "Question", "all_diagrams"} <= set(views.__all__)
    assert all(getattr(views, name) for name in views.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        views.nothing_here
