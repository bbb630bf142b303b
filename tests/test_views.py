from conftest import run
from harness.selection.agent import arun
from harness.selection.catalog import ToolCatalog
from workbook.evaluation.cliff import AccuracyPoint
from harness.selection.discovery import discovery_tool
from workbook.providers.offline import OfflineModel
from harness.selection.ranking import Selector
from harness.core.tools import Tool
from workbook.views.cliff_view import cliff_at, cliff_slider
from workbook.views.explorer import query_explorer, ranking_html, ranking_rows
from workbook.views.timeline import timeline_html, timeline_rows, turn_timeline


def test_ranking_rows_explain_each_score(small_tools):
    cat = ToolCatalog(small_tools)
    rows = ranking_rows(cat, "search code", 3)
    assert rows[0].name == "search_code" and rows[0].rank == 1
    assert abs(sum(t.contribution for t in rows[0].terms) - rows[0].score) < 1e-9
    assert rows[0].reason().split(" ")[0] in {"search", "code", "search_code"}
    assert "score floor" in ranking_html(ranking_rows(cat, "zebra", 3), "zebra")


def test_html_escapes_untrusted_tool_text():
    evil = Tool("evil", "Read <script>alert(1)</script> files", {"type": "object", "properties": {}})
    html = ranking_html(ranking_rows(ToolCatalog([evil, Tool("other", "x", {"type": "object", "properties": {}})]), "read files"), "<b>q</b>")
    assert "<script>" not in html and "&lt;b&gt;q&lt;/b&gt;" in html


def test_explorer_widget_rerenders_through_the_function(small_tools):
    cat = ToolCatalog(small_tools)
    box = query_explorer(cat, "read a file", 3)
    text, k = box.children[0].children
    out = box.children[1]
    assert out.value == ranking_html(ranking_rows(cat, "read a file", 3), "read a file")
    text.value = "post a message"
    assert out.value == ranking_html(ranking_rows(cat, "post a message", 3), "post a message")


def test_timeline_of_a_real_run(small_tools):
    cat = ToolCatalog(small_tools)
    selector = Selector.over(cat, pinned=[discovery_tool(cat)], k=3)
    result = run(arun(OfflineModel(), selector, "Read the file 'a.txt', then post it to the #dev channel"))
    rows = timeline_rows(result.turns)
    assert [r.turn for r in rows] == [1, 2, 3]
    assert rows[0].shown[0] == ("list_available_tools", None, True)
    assert rows[0].calls == [("read_file", True)] and rows[1].calls == [("post_message", True)]
    assert rows[2].calls == [] and rows[2].text.startswith("Done.")
    assert all(r.schema_tokens < r.catalog_tokens for r in rows)
    widget = turn_timeline(result.turns)
    slider, out = widget.children
    slider.value = 1
    assert out.value == timeline_html(rows[:1])
    (arguments, result_text), = rows[0].said  # what Chapter 5c shows of a watched run: arguments and result
    assert '"a.txt"' in arguments and result_text and result_text[:40] in timeline_html(rows, details=True)
    shown = arguments.replace('"', "&quot;")  # as the table escapes it
    assert shown not in timeline_html(rows) and shown in timeline_html(rows, details=True)


def test_cliff_view():
    pts = [AccuracyPoint(5, 1.0, 0.0, (1.0,), 500.0), AccuracyPoint(50, 0.5, 0.1, (0.5,), 5000.0)]
    assert "<b>50 tools</b>: 5,000 schema tokens per turn (2.5% of a 200,000-token window)" in cliff_at(50, pts)
    assert "0.50 ± 0.10" in cliff_at(50, pts)
    slider, out = cliff_slider(pts, "offline stand-in").children
    slider.value = 50
    assert cliff_at(50, pts) in out.value


def test_cliff_view_shows_an_interval_and_chance():
    from workbook.evaluation.cliff import RatePoint

    pts = [RatePoint(5, 0.9, 0.85, 0.95, 100, 400.0), RatePoint(40, 0.5, 0.4, 0.6, 100, 3200.0)]
    assert "0.50 (95 % CI 0.40–0.60; chance 0.03)" in cliff_at(40, pts)


def test_rate_table_lines_up_each_kind_s_rate_interval_and_requests_beside_tokens_and_chance():
    from workbook.evaluation.cliff import RatePoint
    from workbook.views.cliff_view import rate_table

    curves = {"all": [RatePoint(5, 0.9, 0.85, 0.95, 100, 400.0), RatePoint(40, 0.5, 0.4, 0.6, 100, 3200.0)],
              "literal": [RatePoint(5, 1.0, 1.0, 1.0, 7, 400.0), RatePoint(40, 0.25, 0.0, 0.5, 8, 3200.0)]}
    lines = rate_table(curves, "model — accuracy").splitlines()
    assert lines[0] == "model — accuracy"
    assert lines[1].split() == ["N", "tokens", "chance", "all", "literal"]
    assert lines[2].split() == ["5", "400", "0.20", "0.90", "[0.85–0.95]", "n=100", "1.00", "[1.00–1.00]", "n=7"]
    assert lines[3].split() == ["40", "3,200", "0.03", "0.50", "[0.40–0.60]", "n=100", "0.25", "[0.00–0.50]", "n=8"]
    assert len({len(line) for line in lines[1:]}) == 1, "the columns line up"


def test_runs_table_puts_each_configuration_s_row_under_one_header():
    from workbook.evaluation.scenarios import RunsSummary
    from workbook.views.runs_table import runs_table

    rows = {("dev", "k = 10"): RunsSummary(44, 0.41, 0.27, 0.57, 3.2, 2653.0, 0.0, 0.39, 0.25, 0.55),
            ("held-out", "every tool shown"): RunsSummary(26, 0.04, 0.0, 0.12, 2.4, 14388.0, 0.0, 0.08, 0.0, 0.19)}
    lines = runs_table(rows, "offline stand-in").splitlines()
    assert lines[0] == "offline stand-in"
    assert lines[1].split() == ["n", "success", "[95", "%]", "right", "tools", "[95", "%]", "turns", "schema", "tok"]
    assert lines[2].split()[:3] == ["dev", "k", "="] and lines[2].endswith(rows["dev", "k = 10"].row())
    assert lines[3].startswith("held-out every tool shown") and lines[3].endswith(rows["held-out", "every tool shown"].row())
    assert len({len(line) for line in lines[1:]}) == 1, "the columns line up"
