"""Every chapter opens in a real JupyterLab in headless Chromium, shows its diagrams, and its widgets work there.

nbval proves the cells run; only a browser proves a reader sees the widgets and that moving a
slider reaches the kernel and comes back. So a chapter runs here as far as its last widget of its
own (with every cell before it, which the widgets need), then its self-check: nbval already runs
every cell, and running the rest again here only repeated that work. One server and one browser
serve every notebook; each notebook gets a fresh page and its kernel is shut down after it.
Screenshots of each chapter's main widget land in artifacts/screenshots/. A self-test notebook
with deliberately broken parts proves the checks can fail. The mechanism diagrams are measured in
a bare page (fast); a small notebook shows a diagram and a self-check as a learner meets them,
before and after Run All; Chapter 0 is walked as a learner walks it, Run All included.
"""
from __future__ import annotations

import ast
import builtins

import os
from pathlib import Path

import nbformat
import pytest

from browser_support import (_IS_CURRENT_JS, _OPEN_JS, _RUN_ALL_JS, CHROMIUM, CHROMIUM_ARGS, LabServer,
                             browser_unavailable_reason, copy_workspace, run_notebook)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
SELFTEST = "browser_selftest.ipynb"
VIEWS = "browser_views.ipynb"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def names(source: str) -> tuple[set[str], set[str]]:
    """(names a cell's code reads, names it defines); a cell that does not parse (a magic) reads something unknown."""
    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    try:
        tree = compile("\n".join(lines), "<cell>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except SyntaxError:
        return {"<unparsed>"}, set()
    read, made = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (made if isinstance(node.ctx, ast.Store) else read).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            made.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            made.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.arg):
            made.add(node.arg)
    return read - set(dir(builtins)), made


def cells_to_run(notebook: nbformat.NotebookNode) -> list[int]:
    """The cells (indices among all cells) that show a widget and what they need: every code cell from the first
    to the last widget of the chapter's own, then the self-check — after every cell before it when it reads a name
    those cells do not define. Which cells show widgets is read from the saved outputs, a whole run's
    (``make notebooks``)."""
    code = [i for i, c in enumerate(notebook.cells) if c.cell_type == "code"]
    shows = [i for i in code if any(WIDGET_VIEW in o.get("data", {}) for o in notebook.cells[i].get("outputs", []))]
    checks = [i for i in shows if "self_check(" in notebook.cells[i].source]
    own = [i for i in shows if i not in checks]
    chosen = [i for i in code if i <= (own[-1] if own else code[0])]
    for check in checks:
        defined = set().union(*(names(notebook.cells[i].source)[1] for i in chosen))
        read, made = names(notebook.cells[check].source)
        if read - made - defined:
            chosen = [i for i in code if i < check]
        chosen.append(check)
    return chosen


def test_a_chapter_runs_up_to_its_last_widget_then_its_self_check():
    v4 = nbformat.v4
    view = v4.new_output("display_data", data={WIDGET_VIEW: {"model_id": "m"}, "text/plain": "w"})
    nb = v4.new_notebook(cells=[v4.new_markdown_cell("# A"), v4.new_code_cell("import x"), v4.new_code_cell("slider", outputs=[view]),
                                v4.new_markdown_cell("text"), v4.new_code_cell("long_sweep()"),
                                v4.new_code_cell("from workbook.views.selfcheck import self_check\nself_check([])", outputs=[view])])
    assert cells_to_run(nb) == [1, 2, 5]
    nb.cells[2].outputs = []  # no widget of its own: the first code cell (the setup), then the self-check
    assert cells_to_run(nb) == [1, 5]
    nb.cells[5].source = "from workbook.views.selfcheck import Question, self_check\nself_check([Question(f'{result}?')])"
    # it reads what the sweep made: every cell before it
    nb.cells[4].source = "result = long_sweep()"
    assert cells_to_run(nb) == [1, 2, 4, 5]


def selftest_notebook() -> nbformat.NotebookNode:
    """A working widget, one with a dead control, a closed one, a bogus view, a console error, a raise."""
    v4 = nbformat.v4
    cells = [
        "import time\n\nimport ipywidgets as w\nfrom IPython.display import Javascript, display",
        "slider = w.IntSlider(value=3, min=1, max=10, description='n')\nsquare = w.HTML()\n"
        "def render(*_):\n    square.value = f'<b>{slider.value}²</b> = {slider.value ** 2}'\n"
        "slider.observe(render, 'value')\nrender()\nw.VBox([slider, square])",
        # like the query explorer, but only the text box is observed: the k slider is dead
        "box = w.Text(value='read a file', continuous_update=False)\nk = w.IntSlider(value=5, max=10, description='k')\n"
        "shout = w.HTML(box.value.upper())\nbox.observe(lambda change: setattr(shout, 'value', change['new'].upper()), 'value')\n"
        "w.VBox([w.HBox([box, k]), shout])",
        "gone = w.IntSlider()\ndisplay(gone)\ntime.sleep(1)\ngone.close()  # as a finished progress bar does",
        "display({'application/vnd.jupyter.widget-view+json': {'model_id': 'no-such-model', "
        "'version_major': 2, 'version_minor': 0}}, raw=True)",
        "Javascript(\"console.error('self-test: a deliberate console error')\")",
        "raise ValueError('self-test: a deliberate failure')",
        "print('never runs')",
    ]
    nb = v4.new_notebook(cells=[v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def test_ci_has_a_browser():
    """On CI (CI=true) the browser tests must run, not skip: a missing browser fails here."""
    reason = browser_unavailable_reason()
    if reason and os.environ.get("CI") == "true":
        pytest.fail(f"CI must run the browser tests, but: {reason}")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    if reason := browser_unavailable_reason():
        pytest.skip(reason)
    tmp = tmp_path_factory.mktemp("lab")
    folder = copy_workspace(NOTEBOOKS, tmp)
    nbformat.write(selftest_notebook(), folder / SELFTEST)
    nbformat.write(views_notebook(), folder / VIEWS)
    server = LabServer(folder, tmp / "jupyter")
    server.start()
    yield server
    stray = server.stop()
    assert not stray, f"kernel processes outlived JupyterLab and had to be killed: {stray}"


@pytest.fixture(scope="module")
def chromium():
    """Debian's Chromium under Playwright, one per module (Playwright's sync API allows one at a time)."""
    if reason := browser_unavailable_reason():
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def browser(lab, chromium):
    return chromium


@pytest.mark.browser
def test_browser_checks_catch_broken_widgets_and_errors(lab, browser):
    report = run_notebook(browser, lab, SELFTEST, update_timeout_s=5)  # the dead slider waits this out
    widgets = [(w.cell, w.status, w.controls) for w in report.widgets]
    assert widgets == [(2, "rendered", [("slider", True)]), (3, "rendered", [("slider", False), ("text", True)]),
                       (4, "closed", []), (5, "broken", [])]
    assert "3² = 9" in report.widgets[0].text  # the text as rendered, before the slider moved
    problems = report.problems()
    assert problems[:4] == [
        f"{SELFTEST}: cell 7 raised ValueError: self-test: a deliberate failure",
        f"{SELFTEST}: only 7 of 8 code cells ran",
        f"{SELFTEST}: poking slider 1 of the widget in cell 3 did not change its HTML output",
        f"{SELFTEST}: the widget in cell 5 did not render: 'Error displaying widget: model not found'",
    ], "\n".join(problems)
    # ipywidgets also logs the missing model: a real console error, caught as one
    console = sorted(report.console_errors)
    assert len(problems) == 6 and len(console) == 2, "\n".join(problems)
    assert console[0].startswith("Error: widget model not found") and console[1] == "self-test: a deliberate console error"


# A mechanism diagram in the saved outputs: an SVG image from workbook.views.diagrams, with its alt text.
_DIAGRAMS_JS = """() => Array.from(document.querySelectorAll('.jp-OutputArea-output img'))
  .filter(i => (i.getAttribute('src') || '').startsWith('data:image/svg+xml'))
  .map(i => [i.alt, i.complete && i.naturalWidth > 0])"""


def saved_diagrams(page) -> list[list]:
    """The diagrams a notebook shows as opened (committed outputs, untrusted, nothing run): [alt, loaded] each."""
    try:
        page.wait_for_function(f"() => ({_DIAGRAMS_JS})().length > 0", timeout=30_000)
    except Exception:
        pass  # the caller's assert says what is missing
    return page.evaluate(_DIAGRAMS_JS)


@pytest.mark.browser
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[nb.stem for nb in NOTEBOOKS])
def test_chapter_shows_a_diagram_and_its_widgets_work_in_a_browser(lab, browser, notebook):
    """As cloned, a chapter shows at least one diagram with alt text; then the cells its widgets need run (one page
    for both: opening a chapter in JupyterLab and starting its kernel is most of the time)."""
    cells = cells_to_run(nbformat.read(notebook, as_version=4))
    diagrams: list[list] = []
    report = run_notebook(browser, lab, notebook.name, screenshot=SCREENSHOTS / f"{notebook.stem}.png", cells=cells,
                          on_open=lambda page: diagrams.extend(saved_diagrams(page)))
    print(report.summary())
    assert not report.problems(), "\n".join(report.problems())
    assert report.widgets, f"{notebook.name}: no widget ran (its saved outputs show one: save a whole run)"
    assert diagrams, f"{notebook.name} shows no diagram (an SVG image from workbook.views.diagrams) in its saved outputs"
    for alt, loaded in diagrams:
        assert len(alt.split()) >= 5 and loaded, (notebook.name, alt, loaded)


# The diagrams and the self-check fallback need no JupyterLab: one page in a bare Chromium checks them in seconds.
_DIAGRAM_LAYOUT_JS = """() => Array.from(document.querySelectorAll('svg[role=img]')).map(svg => {
  const box = svg.getBoundingClientRect();
  const [, , vw, vh] = svg.getAttribute('viewBox').split(' ').map(Number);
  const problems = [];
  const inside = (a, b) => a.x >= b.x - 1 && a.y >= b.y - 1 && a.x + a.width <= b.x + b.width + 1 && a.y + a.height <= b.y + b.height + 1;
  svg.querySelectorAll('text').forEach(t => {
    if (!inside(t.getBBox(), {x: 0, y: 0, width: vw, height: vh})) problems.push(`outside the picture: ${t.textContent}`);
    if (parseFloat(getComputedStyle(t).fontSize) < 12) problems.push(`smaller than 12 px: ${t.textContent}`);
  });
  svg.querySelectorAll('g.box').forEach(g => {
    const rect = g.querySelector('rect').getBBox();
    g.querySelectorAll('text').forEach(t => { if (!inside(t.getBBox(), rect)) problems.push(`out of its box: ${t.textContent}`); });
  });
  return {label: svg.getAttribute('aria-label'), width: box.width, height: box.height, problems};
})"""


@pytest.fixture
def bare_page(chromium):
    """A page with no JupyterLab behind it; console errors collected in ``page.errors``."""
    context = chromium.new_context(viewport={"width": 1000, "height": 800})
    page = context.new_page()
    page.errors = []
    page.on("console", lambda m: m.type == "error" and page.errors.append(m.text))
    page.on("pageerror", lambda e: page.errors.append(f"uncaught {e}"))
    yield page
    context.close()


@pytest.mark.browser
def test_every_diagram_renders_legibly_in_a_browser(bare_page):
    from workbook.views.diagrams import all_diagrams

    gallery = all_diagrams()
    # inline (its layout measured), and as the <img> a notebook shows
    bare_page.set_content(f"<html><body>{''.join(g.svg for g in gallery)}{''.join(g._repr_html_() for g in gallery)}</body></html>")
    drawn = bare_page.evaluate(_DIAGRAM_LAYOUT_JS)
    assert [d["label"] for d in drawn] == [g.title for g in gallery]
    for d in drawn:
        assert d["width"] > 100 and d["height"] > 100 and not d["problems"], d
    loaded = bare_page.evaluate("() => Array.from(document.images).map(i => [i.alt, i.complete && i.naturalWidth > 0])")
    assert loaded == [[g.alt, True] for g in gallery]
    assert not bare_page.errors


@pytest.mark.browser
def test_the_self_check_fallback_folds_the_answer_until_opened(bare_page):
    from workbook.views.selfcheck import Question, static_html

    q = Question("Which part of a request does a prompt cache serve?", ("Any part", "The prefix up to the first change", "The end"), 1,
                 "It matches the request from its start.")
    bare_page.set_content(f"<html><body>{static_html([q])}</body></html>")
    answer = bare_page.locator("details p")
    assert not answer.is_visible()
    bare_page.locator("summary").click()
    assert answer.is_visible() and "B. The prefix up to the first change" in answer.inner_text()
    assert not bare_page.errors


QUESTION = ("Which part of a request does a prompt cache serve?", ("Any part", "The prefix up to the first change", "The end"), 1,
            "It matches the request from its start.")


def views_notebook() -> nbformat.NotebookNode:
    """A diagram and a self-check, saved with the outputs a committed chapter carries (its widget model absent)."""
    from workbook.views.diagrams import course_map
    from workbook.views.selfcheck import Question, self_check

    v4 = nbformat.v4
    diagram = course_map()
    cells = [v4.new_code_cell("from workbook.views import Question, course_map, self_check"),
             v4.new_code_cell("course_map()", outputs=[v4.new_output(
                 "display_data", data={"text/html": diagram._repr_html_(), "text/plain": repr(diagram)})]),
             v4.new_code_cell(f"self_check([Question(*{QUESTION!r})])", outputs=[v4.new_output(
                 "display_data", data=self_check([Question(*QUESTION)])._repr_mimebundle_())])]
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def open_in_lab(page, lab, name: str) -> None:
    """Open notebook ``name`` in a fresh JupyterLab workspace and make it the current panel (as saved: nothing run)."""
    page.goto(lab.url("lab") + "&reset", wait_until="domcontentloaded")
    page.wait_for_function("window.jupyterapp !== undefined", timeout=60_000)
    page.evaluate(_OPEN_JS, name)
    page.wait_for_function(_IS_CURRENT_JS, timeout=30_000)


_VIEWS_JS = """() => Array.from(window.__panel.content.widgets).filter(c => c.model.type === 'code').slice(1).map(c => {
  const out = c.node.querySelector('.jp-OutputArea-output');
  const img = out && out.querySelector('img');
  return {text: out ? out.innerText : '', img: img ? [img.alt, img.complete && img.naturalWidth > 0] : null,
          details: out ? out.querySelectorAll('details').length : 0, radios: out ? out.querySelectorAll('input[type=radio]').length : 0};
})"""


@pytest.mark.browser
def test_a_learner_sees_the_diagram_and_answers_a_self_check_in_jupyterlab(lab, browser):
    """Opened as cloned (untrusted, no kernel run): the diagram and the folded answers show. After Run All:
    the self-check is a widget, and checking an answer says right or wrong and why."""
    from workbook.views.diagrams import course_map

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    try:
        open_in_lab(page, lab, VIEWS)
        page.wait_for_function("() => document.querySelectorAll('.jp-OutputArea-output img').length > 0", timeout=30_000)
        diagram, check = page.evaluate(_VIEWS_JS)
        assert diagram["img"] == [course_map().alt, True]
        assert check["details"] == 1 and check["radios"] == 0 and "Error displaying widget" not in check["text"], check
        page.evaluate(_RUN_ALL_JS)
        page.wait_for_function("window.__run && window.__run.done", timeout=120_000)
        page.wait_for_function(f"() => document.querySelectorAll('.jp-OutputArea-output input[type=radio]').length == {len(QUESTION[1])}",
                               timeout=30_000)
        answer = page.locator(".jp-OutputArea-output .widget-html").last
        for choice, verdict in ((0, "✘ Not quite. The answer is “The prefix up to the first change”"), (1, "✔ Right.")):
            page.locator(".widget-radio-box label").nth(choice).click()
            page.locator("button.widget-button", has_text="Check").click()
            page.wait_for_function("v => Array.from(document.querySelectorAll('.widget-html')).some(e => e.innerText.includes(v))",
                                   arg=verdict, timeout=20_000)
            assert QUESTION[3] in answer.inner_text()
        assert page.evaluate(_VIEWS_JS)[0]["img"] == [course_map().alt, True]
        assert not errors, errors
    finally:
        context.close()
        lab.shutdown_kernels()


# The feedback line of the first self-check question (its VBox: prompt, choices, Check, feedback).
_FEEDBACK_JS = """() => document.querySelector('.jp-OutputArea-output .widget-radio-box')
  .closest('.widget-vbox').querySelectorAll('.widget-html')[1].innerText.trim()"""


@pytest.mark.browser
def test_a_learner_walks_chapter_0(lab, browser):
    """Chapter 0 as a learner meets it: open, Run All, see the course map, answer the first self-check
    question wrongly and rightly, and read the feedback each time (right or wrong, and why)."""
    from workbook.views.diagrams import course_map

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    try:
        open_in_lab(page, lab, "00_start_here.ipynb")
        page.evaluate(_RUN_ALL_JS)
        page.wait_for_function("window.__run && window.__run.done", timeout=300_000)
        assert not page.evaluate("window.__run.error")
        page.wait_for_function("() => document.querySelectorAll('.jp-OutputArea-output .widget-radio-box').length >= 3",
                               timeout=60_000)
        assert [course_map().alt, True] in page.evaluate(_DIAGRAMS_JS)
        errors_in_cells = page.evaluate("""() => Array.from(window.__panel.content.widgets).flatMap(c =>
            c.model.type !== 'code' ? [] : Array.from({length: c.outputArea.model.length}, (_, j) => c.outputArea.model.get(j).toJSON())
            .filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue))""")
        assert not errors_in_cells, errors_in_cells
        radios = page.locator(".jp-OutputArea-output .widget-radio-box").first.locator("label")
        check = page.locator(".jp-OutputArea-output button.widget-button", has_text="Check").first
        verdicts = []
        for choice in range(radios.count()):
            radios.nth(choice).click()  # a new choice clears the last feedback
            page.wait_for_function(f"() => ({_FEEDBACK_JS})() === ''", timeout=20_000)
            check.click()
            page.wait_for_function(f"() => /^(✔|✘)/.test(({_FEEDBACK_JS})())", timeout=20_000)
            verdicts.append(page.evaluate(_FEEDBACK_JS))
        assert sum(v.startswith("✔ Right.") for v in verdicts) == 1, verdicts
        wrong = [v for v in verdicts if not v.startswith("✔")]
        assert wrong and all(v.startswith("✘ Not quite. The answer is “") for v in wrong), verdicts
        assert len({v.split("”: ", 1)[-1] for v in wrong}) == 1, "every wrong answer is told the same reason"
        assert not errors, errors
    finally:
        context.close()
        lab.shutdown_kernels()
