"""Drive the chapters in a real JupyterLab and a real Chromium, as a reader would.

Used by tests/test_browser.py (the widgets of every chapter, proven in a browser). Built this way:

* one JupyterLab server per test module, on a copy of the notebooks, with every Jupyter
  directory (config, data, runtime, settings, workspaces) in a temp folder, so the developer's
  own Jupyter setup can neither help nor break the test, and the committed notebooks are never
  touched; the news feed, update check and PyPI extension manager are off (no network);
* the notebook's windowing is off, so every output is in the DOM, not only the visible ones;
* ``window.jupyterapp`` is exposed (``LabApp.expose_app_in_browser``) so the test runs cells
  with JupyterLab's own "Run All Cells" (or "Run Selected Cell", cell by cell) command and reads
  outputs from the notebook model, instead of clicking menus whose layout changes between releases;
* a widget passes when its view rendered (no "Error displaying widget"/"Loading widget..."),
  and each slider or text box in it, poked from the keyboard, changes the text of the view's
  HTML output: the round trip browser -> kernel ``observe`` -> browser really happened.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import psutil

CHROMIUM = Path("/usr/bin/chromium")  # Debian's build; Playwright never downloads one here
# Without the background-networking flags Chromium keeps calling Google services on a closed network.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
JUPYTER = Path(sys.executable).with_name("jupyter")  # the .venv's, beside the Python running pytest

# JupyterLab user settings: every output in the DOM; no news or update check (offline machine).
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                        "checkForUpdates": False},
}


def browser_unavailable_reason() -> str | None:
    """None when Playwright and Debian's Chromium are both here, else one sentence saying which is missing."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "The Python package 'playwright' is not importable: install the project's 'test' extra (pip install -e '.[test]')."
    if not CHROMIUM.exists():
        return f"No Chromium at {CHROMIUM}: install Debian's 'chromium' package (scripts/setup.sh full does, as root)."
    return None


def copy_workspace(notebooks: Iterable[Path], dest: Path) -> Path:
    """Copy ``notebooks`` into ``dest/notebooks`` beside an empty ``dest/.cache``; return the notebooks folder.

    The layout mirrors the repository's, so a chapter that writes to ``../.cache`` writes into the copy.
    """
    folder = dest / "notebooks"
    folder.mkdir(parents=True, exist_ok=True)
    (dest / ".cache").mkdir(exist_ok=True)
    for nb in notebooks:
        shutil.copy2(nb, folder / nb.name)
    return folder


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    """A headless JupyterLab serving ``root_dir``, its Jupyter state kept under ``home``."""

    def __init__(self, root_dir: Path, home: Path) -> None:
        self.root_dir, self.home = root_dir, home
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.log_path = home / "jupyterlab.log"
        self._proc: subprocess.Popen | None = None
        self._kernels: dict[int, psutil.Process] = {}  # every process the server started, by pid

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _env(self) -> dict[str, str]:
        dirs = {name: self.home / name.lower() for name in
                ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR",
                 "JUPYTERLAB_SETTINGS_DIR", "JUPYTERLAB_WORKSPACES_DIR")}
        for path in dirs.values():
            path.mkdir(parents=True, exist_ok=True)
        for name, settings in LAB_SETTINGS.items():
            target = dirs["JUPYTERLAB_SETTINGS_DIR"] / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(settings))
        env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "JUPYTER_PATH")}
        # no real model in the browser: what is tested here is the widgets; nbval runs Chapter 1's live re-check
        # with the model, which here would add minutes to the suite and test nothing new
        return env | {k: str(v) for k, v in dirs.items()} | {"HARNESS_REAL_MODEL": str(self.home / "no-real-model")}

    def start(self, timeout: float = 90) -> None:
        cmd = [str(JUPYTER), "lab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
               "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
               f"--ServerApp.root_dir={self.root_dir}", "--ServerApp.terminals_enabled=False",
               "--LabApp.expose_app_in_browser=True", "--LabApp.extension_manager=readonly",
               "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate"]
        if os.geteuid() == 0:  # containers and CI runners often run as root
            cmd.append("--allow-root")
        env = self._env()
        with open(self.log_path, "w") as log:
            self._proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                          cwd=self.home, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with code {self._proc.returncode} before answering: "
                                   f"{self.log_tail()}")
            try:
                self.api("GET", "/api/status")
                return
            except OSError:
                time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"JupyterLab did not answer on port {self.port} within {timeout:.0f} s: {self.log_tail()}")

    def log_tail(self, lines: int = 15) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def url(self, path: str = "lab") -> str:
        return f"{self.base_url}/{path}?token={self.token}"

    def api(self, method: str, path: str) -> Any:
        req = urllib.request.Request(self.base_url + path, method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Delete every session (which shuts its kernel down), remembering the kernels to check at stop."""
        self._remember_children()
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}")

    def stop(self) -> list[int]:
        """Stop the server and every kernel it started; return the pids that outlived a polite stop (then killed)."""
        if self._proc is None:
            return []
        if self._proc.poll() is None:
            self._remember_children()
            self._proc.send_signal(signal.SIGTERM)  # the server shuts its kernels down on SIGTERM
            try:
                self._proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None
        # Kernels run in their own sessions (jupyter_client), so the server's signal is not theirs: check each.
        # psutil.Process remembers each start time, so a pid reused by someone else is never touched.
        _, alive = psutil.wait_procs([p for p in self._kernels.values() if p.is_running()], timeout=5)
        for proc in alive:
            try:
                proc.kill()
            except psutil.NoSuchProcess:
                pass
        return [proc.pid for proc in alive]

    def _remember_children(self) -> None:
        for proc in psutil.Process(self._proc.pid).children(recursive=True):
            self._kernels.setdefault(proc.pid, proc)


@dataclass
class WidgetReport:
    """One widget view in one output: did it render, and did poking its control change its output."""
    tag: str  # the data-browser-test attribute put on its output node
    cell: int
    status: str  # "rendered", "broken" (error or stuck placeholder text), or "closed" (closed by the kernel)
    text: str
    controls: list[tuple[str, bool]] = field(default_factory=list)  # (slider or text, did poking it change the HTML)

    def problems(self) -> list[str]:
        if self.status == "broken":
            return [f"the widget in cell {self.cell} did not render: {self.text[:160]!r}"]
        return [f"poking {kind} {i} of the widget in cell {self.cell} did not change its HTML output"
                for i, (kind, updated) in enumerate(self.controls, 1) if not updated]


@dataclass
class NotebookReport:
    name: str
    seconds: float = 0.0
    code_cells: int = 0
    cells_run: int = 0
    cell_errors: list[str] = field(default_factory=list)
    widgets: list[WidgetReport] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)

    def summary(self) -> str:
        widgets = ", ".join(f"cell {w.cell} {w.status}" + "".join(f" {kind} {'updates' if ok else 'STUCK'}"
                                                                  for kind, ok in w.controls) for w in self.widgets)
        return f"{self.name}: {self.seconds:.1f} s, {self.cells_run}/{self.code_cells} code cells ran; widgets: {widgets or 'none'}"

    def problems(self) -> list[str]:
        """Every defect found, one sentence each; empty when the chapter passed."""
        found = [f"{self.name}: {e}" for e in self.cell_errors]
        if self.cells_run < self.code_cells:
            found.append(f"{self.name}: only {self.cells_run} of {self.code_cells} code cells ran")
        found += [f"{self.name}: {p}" for w in self.widgets for p in w.problems()]
        found += [f"{self.name}: browser console error: {e[:300]}" for e in self.console_errors]
        return found


# JavaScript run in the page. The notebook panel under test is kept in window.__panel.
_OPEN_JS = """async path => {
  const app = window.jupyterapp;
  await app.restored;
  const panel = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  await panel.context.ready;
  await panel.sessionContext.ready;
  app.shell.activateById(panel.id);
  window.__panel = panel;
  window.__run = null;
}"""
_IS_CURRENT_JS = "() => window.jupyterapp.shell.currentWidget === window.__panel"
_RUN_ALL_JS = """() => {
  window.__run = {done: false};
  window.jupyterapp.commands.execute('notebook:run-all-cells').then(
    () => { window.__run = {done: true}; },
    err => { window.__run = {done: true, error: String(err)}; });
}"""
# Runs the cells at the given indices (of all cells) one after another, as "Run Selected Cell" does, stopping at
# the first that fails; window.__run.ran counts the cells run (the failing one too, as Run All counts it).
_RUN_CELLS_JS = """indices => {
  window.__run = {done: false};
  const notebook = window.__panel.content;
  (async () => {
    let ran = 0;
    for (const i of indices) {
      notebook.deselectAll();
      notebook.activeCellIndex = i;
      ran += 1;
      if (!(await window.jupyterapp.commands.execute('notebook:run-cell'))) break;
    }
    return ran;
  })().then(ran => { window.__run = {done: true, ran}; }, err => { window.__run = {done: true, error: String(err)}; });
}"""
# Reads the model after the run: cell errors, and tags each widget output's DOM node for Playwright.
_COLLECT_JS = """mime => {
  const cells = window.__panel.content.widgets;
  const out = {codeCells: 0, cellsRun: 0, errors: [], widgets: []};
  cells.forEach((cell, i) => {
    if (cell.model.type !== 'code') return;
    out.codeCells += 1;
    if (cell.model.executionCount !== null) out.cellsRun += 1;
    const area = cell.outputArea;
    for (let j = 0; j < area.model.length; j++) {
      const o = area.model.get(j).toJSON();
      if (o.output_type === 'error') out.errors.push(`cell ${i + 1} raised ${o.ename}: ${o.evalue}`);
      const view = o.data && o.data[mime];
      if (!view) continue;
      const child = area.widgets[j];  // absent when JupyterLab trimmed a long list of outputs
      const node = child && child.node.querySelector('.jp-OutputArea-output');
      const tag = `w${out.widgets.length}`;
      if (node) node.setAttribute('data-browser-test', tag);
      out.widgets.push({cell: i + 1, tag, shown: !!node,
                        closed: view.model_id === '' || (!!node && node.classList.contains('lm-mod-hidden'))});
    }
  });
  return out;
}"""


_SETTLED_JS = """tag => {
  const node = document.querySelector(`[data-browser-test=${tag}]`);
  return node.querySelector('.jupyter-widgets') || node.innerText.includes('Error displaying widget');
}"""
_HTML_CHANGED_JS = """([tag, before]) => Array.from(document.querySelectorAll(
  `[data-browser-test=${tag}] .widget-html, [data-browser-test=${tag}] .widget-htmlmath`))
  .map(e => e.innerText).join('\\n') !== before"""


def _html_text(view) -> str:
    return "\n".join(view.locator(".widget-html, .widget-htmlmath").all_inner_texts())


def _controls(view) -> list[tuple[str, Any]]:
    """The sliders (IntSlider, SelectionSlider) of a widget view, then its text boxes."""
    handles = view.locator(".widget-slider .noUi-handle")
    boxes = view.locator(".widget-text input")
    return ([("slider", handles.nth(i)) for i in range(handles.count())]
            + [("text", boxes.nth(i)) for i in range(boxes.count())])


def _poke(page, kind: str, control) -> None:
    """Move a slider one step with the keyboard, or type into a text box and press Enter."""
    if kind == "slider":
        now, top = (float(control.get_attribute(a) or 0) for a in ("aria-valuenow", "aria-valuemax"))
        control.focus()
        page.keyboard.press("ArrowLeft" if now >= top else "ArrowRight")
    else:
        query = "post a message to the team channel"
        control.fill(query if control.input_value() != query else "read a file")
        control.press("Enter")


def check_widget(page, tag: str, cell: int, update_timeout_s: float) -> WidgetReport:
    """Did the view render; and does each of its controls, poked in turn, change the view's HTML output."""
    view = page.locator(f"[data-browser-test={tag}]")
    _wait_for(page, _SETTLED_JS, tag, update_timeout_s)  # views render after their models arrive
    text = view.inner_text()
    if "Error displaying widget" in text or "Loading widget..." in text or not view.locator(".jupyter-widgets").count():
        return WidgetReport(tag, cell, "broken", text)
    report = WidgetReport(tag, cell, "rendered", text)
    if not _html_text(view):  # nothing that could show a change (a progress bar, a lone control)
        return report
    for kind, control in _controls(view):
        before = _html_text(view)
        _poke(page, kind, control)
        report.controls.append((kind, _wait_for(page, _HTML_CHANGED_JS, [tag, before], update_timeout_s)))
    return report


def run_notebook(browser, server: LabServer, name: str, screenshot: Path | None = None,
                 run_timeout_s: float = 300, update_timeout_s: float = 20, cells: Sequence[int] | None = None,
                 on_open: Callable[[Any], None] | None = None) -> NotebookReport:
    """Open ``name`` in a fresh page, run all cells (or only ``cells``, indices among all cells, in order), check
    every widget; screenshot the main one. ``on_open(page)`` looks at the notebook as saved, before anything runs.

    The main widget is the first with a control (a progress bar is not what a chapter is about),
    else the first that rendered. On any problem a screenshot of the whole page is saved beside it.
    """
    report = NotebookReport(name)
    failure_shot = screenshot.with_name(screenshot.stem + "-failure.png") if screenshot else None
    if screenshot:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        screenshot.unlink(missing_ok=True)
        failure_shot.unlink(missing_ok=True)
    started = time.monotonic()
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    # Every console error counts: JupyterLab 4.6 with these settings logs none on a clean chapter.
    page.on("console", lambda m: m.type == "error" and report.console_errors.append(m.text))
    page.on("pageerror", lambda e: report.console_errors.append(f"uncaught {e}"))
    try:
        _open_and_run(page, server, name, report, run_timeout_s, cells, on_open)
        collected = page.evaluate(_COLLECT_JS, "application/vnd.jupyter.widget-view+json")
        report.code_cells, report.cells_run = collected["codeCells"], collected["cellsRun"]
        if cells is not None:  # the cells not chosen keep their saved execution counts: count what ran
            report.code_cells, report.cells_run = len(cells), page.evaluate("window.__run.ran || 0")
        report.cell_errors += collected["errors"]
        report.widgets = [WidgetReport(w["tag"], w["cell"], "closed", "") if w["closed"]
                          else WidgetReport(w["tag"], w["cell"], "broken", "(its output is not in the page)") if not w["shown"]
                          else check_widget(page, w["tag"], w["cell"], update_timeout_s) for w in collected["widgets"]]
        main = next((w for w in report.widgets if w.controls), None) or next(
            (w for w in report.widgets if w.status == "rendered"), None)
        if screenshot and main:
            page.locator(f"[data-browser-test={main.tag}]").screenshot(path=str(screenshot))
        if failure_shot and report.problems():
            page.screenshot(path=str(failure_shot))
    except Exception:
        if failure_shot:
            page.screenshot(path=str(failure_shot))
        raise
    finally:
        context.close()
        server.shutdown_kernels()
        report.seconds = time.monotonic() - started
    return report


def _open_and_run(page, server: LabServer, name: str, report: NotebookReport, timeout_s: float,
                  cells: Sequence[int] | None, on_open: Callable[[Any], None] | None) -> None:
    # reset: start from an empty workspace, else JupyterLab reopens (and starts kernels for) earlier notebooks
    page.goto(server.url("lab") + "&reset", wait_until="domcontentloaded")
    page.wait_for_function("window.jupyterapp !== undefined", timeout=60_000)
    page.evaluate(_OPEN_JS, name)
    page.wait_for_function(_IS_CURRENT_JS, timeout=30_000)
    if on_open:
        on_open(page)
    if cells is None:
        page.evaluate(_RUN_ALL_JS)
    else:
        page.evaluate(_RUN_CELLS_JS, list(cells))
    what = "Run All Cells" if cells is None else f"Running cells {list(cells)}"
    if not _wait_for(page, "window.__run && window.__run.done", None, timeout_s):
        report.cell_errors.append(f"{what} did not finish within {timeout_s:.0f} s")
    elif error := page.evaluate("window.__run.error"):
        report.cell_errors.append(f"{what} failed: {error}")


def _wait_for(page, js: str, arg: Any, timeout_s: float) -> bool:
    """Poll ``js`` in the page until it is truthy; False when ``timeout_s`` passes first."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(js, arg=arg, timeout=timeout_s * 1000, polling=250)
        return True
    except PlaywrightTimeout:
        return False

