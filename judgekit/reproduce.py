"""``judgekit reproduce``: run the notebook series headless and write an HTML report.

Each numbered notebook (``notebooks/NN_title.ipynb``) is executed in a fresh kernel (nbclient),
rendered to HTML (nbconvert), and every figure it draws is written as a PNG. The report's first
page, ``index.html``, is the reproduction scoreboard (every published number the notebooks
recompute, :mod:`judgekit.scoreboard`) followed by the list of notebooks; ``figures.html`` is the
gallery. Charts shown through :func:`judgekit.viz.setup`'s renderer carry a PNG beside their live
Vega spec; those PNGs are what the report collects, so the report opens offline in any browser.

A run of some notebooks (``only=``) into an existing report folder replaces their entries and
keeps the others' (``runs.json`` records every notebook run there). That folder may be damaged,
or prepared by someone else, so what is read back from it is checked and escaped: an entry or
executed notebook that cannot be read is named on the first page instead of stopping the report,
paths are derived from the notebook's name (never taken from ``runs.json``), and the pages carry
a content security policy that forbids scripts. Files are written through temporary files, and
a symbolic link where a folder of the report belongs is refused (:mod:`judgekit._safewrite`).
The kernels' own log lines go to ``logs/NN_title.log``, not to the terminal. The pages are
static: progress bars are left out (the kernels run with ``TQDM_DISABLE=1``, and a bar drawn
anyway is dropped), an interactive widget shows what it drew for its default settings, and a
warning names the line of its cell instead of the kernel's temporary file.
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from judgekit._safewrite import OutputFolder
from judgekit.exceptions import OutputPathError

__all__ = ["find_notebooks", "reproduce"]

_NAME = re.compile(r"^(\d{2})_[\w-]+\.ipynb$")
_FIGURE_PNG = re.compile(r"^figures/(\d{2}_[\w-]+)/fig-\d{2,}-[a-z0-9-]+\.png$")
#: The folders of a report; a link in the place of one is refused before anything runs.
_FOLDERS = ("notebooks", "figures", "logs")
#: The page's style for each status judgekit writes; any other text is shown unstyled.
_STATUS_CLASS = {"ok": "ok", "failed": "failed"}
#: The audit page's policy: the report runs no script, so it allows none.
_CSP = "<meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'none'; object-src 'none'\">"
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_FIGURE_KEY = "judgekit_figure"


@dataclass
class _Figure:
    notebook: str
    index: int
    title: str
    path: Path


@dataclass
class _Run:
    path: Path
    title: str
    status: str = "not run"
    seconds: float = 0.0
    error: str = ""
    html: Path | None = None
    ipynb: Path | None = None
    figures: list[_Figure] = field(default_factory=list)
    smoke: bool = False

    def to_json(self, out: Path) -> dict:
        def rel(p: Path | None) -> str | None:
            return p.relative_to(out).as_posix() if p is not None else None

        return {"notebook": self.path.name, "title": self.title, "status": self.status,
                "seconds": round(self.seconds, 2), "error": self.error, "html": rel(self.html),
                "ipynb": rel(self.ipynb), "smoke": self.smoke,
                "figures": [{"index": f.index, "title": f.title, "png": rel(f.path)} for f in self.figures]}

    @classmethod
    def from_json(cls, entry: object, out: Path) -> _Run:
        """An entry of ``runs.json``, checked (the file may be damaged, or written by someone
        else): a ValueError says what is wrong. Its paths follow from the notebook's name."""
        if not isinstance(entry, dict):
            raise ValueError(f"expected an object, got {str(entry)[:80]!r}")
        name = entry.get("notebook")
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"'notebook' is {str(name)[:80]!r}, not a name like NN_title.ipynb")
        texts = {}
        for key, default in (("title", ""), ("status", "not run"), ("error", "")):
            texts[key] = entry.get(key, default)
            if not isinstance(texts[key], str):
                raise ValueError(f"{name}: {key!r} is {str(texts[key])[:80]!r}, not a text")
        seconds = entry.get("seconds", 0.0)
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) \
                or not math.isfinite(seconds):
            raise ValueError(f"{name}: 'seconds' is {str(seconds)[:80]!r}, not a number")
        stem = name.removesuffix(".ipynb")
        folder = out / "notebooks"
        run = cls(path=Path(name), title=texts["title"], status=texts["status"],
                  seconds=float(seconds), error=texts["error"],
                  html=folder / f"{stem}.html" if entry.get("html") else None,
                  ipynb=folder / f"{stem}.ipynb" if entry.get("ipynb") else None,
                  smoke=entry.get("smoke") is True)
        figures = entry.get("figures", [])
        if not isinstance(figures, list):
            raise ValueError(f"{name}: 'figures' is not a list")
        for f in figures:
            index = f.get("index") if isinstance(f, dict) else None
            png = f.get("png") if isinstance(f, dict) else None
            found = _FIGURE_PNG.match(png) if isinstance(png, str) else None
            if (not isinstance(index, int) or isinstance(index, bool) or not isinstance(f.get("title"), str)
                    or found is None or found.group(1) != stem):
                raise ValueError(f"{name}: a figure is not {{index, title, png: figures/{stem}/fig-NN-"
                                 f"title.png}} ({str(f)[:80]!r})")
            if (out / png).is_file():
                run.figures.append(_Figure(stem, index, f["title"], out / png))
        return run


def _default_notebooks() -> Path | None:
    here = Path(__file__).resolve().parent.parent / "notebooks"
    return here if here.is_dir() else None


def find_notebooks(directory: str | Path | None = None, only: Sequence[str] | None = None) -> list[Path]:
    """The numbered notebooks of the series, in order, optionally only some of them.

    Parameters
    ----------
    directory : str or Path, optional
        Folder holding ``NN_title.ipynb`` files (default: ``notebooks/`` of the judgekit checkout).
    only : sequence of str, optional
        Number prefixes to keep (``"4"`` and ``"04"`` both mean ``04_*.ipynb``).

    Returns
    -------
    list of Path

    Raises
    ------
    FileNotFoundError
        When the folder does not exist (e.g. judgekit was installed from a wheel, which does not
        carry the notebooks).
    ValueError
        When a prefix in ``only`` matches no notebook.

    Examples
    --------
    >>> [p.name[:2] for p in find_notebooks(only=["0"])]
    ['00']
    """
    folder = Path(directory) if directory is not None else _default_notebooks()
    if folder is None or not folder.is_dir():
        raise FileNotFoundError(
            f"no notebook folder at {folder or 'notebooks/ beside the judgekit package'}; "
            "`judgekit reproduce` runs the series from a source checkout: "
            "git clone the project, `pip install -e .`, and run it there"
        )
    found = sorted(p for p in folder.iterdir() if _NAME.match(p.name))
    if only:
        wanted = {str(x).strip().zfill(2) for x in only}
        known = {p.name[:2] for p in found}
        unknown = sorted(wanted - known)
        if unknown:
            raise ValueError(
                f"no notebook numbered {', '.join(unknown)} in {folder}; "
                f"available: {', '.join(sorted(known))}"
            )
        found = [p for p in found if p.name[:2] in wanted]
    return found


def _title_of(nb) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return ""


def _slug(text: str, limit: int = 60) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:limit].rstrip("-") or "figure"


_WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _model(model_id: object, state: dict) -> tuple[str, dict]:
    model = state.get(str(model_id).removeprefix("IPY_MODEL_"), {})
    return model.get("model_name", ""), model.get("state", {})


def _is_progress_bar(model_id: str, state: dict, depth: int = 0) -> bool:
    """A notebook progress bar (``tqdm.auto``): a box holding a progress widget."""
    name, values = _model(model_id, state)
    if name in ("FloatProgressModel", "IntProgressModel"):
        return True
    return depth < 3 and name in ("HBoxModel", "BoxModel", "VBoxModel") and any(
        _is_progress_bar(child, state, depth + 1) for child in values.get("children", []))


def _static_widget(model_id: str, state: dict, depth: int = 0) -> tuple[list[str], list[dict]]:
    """The settings of a widget's controls and the outputs it shows, as a static page can show
    them: an ``interact`` box is its sliders' values and the outputs its function drew for them
    (nbclient keeps an Output widget's outputs in the widget state)."""
    name, values = _model(model_id, state)
    if depth > 4:
        return [], []
    if name == "OutputModel":
        from nbformat import from_dict

        return [], [from_dict(o) for o in values.get("outputs", []) if isinstance(o, dict)]
    if name.endswith("BoxModel"):
        settings, outputs = [], []
        for child in values.get("children", []):
            more, shown = _static_widget(child, state, depth + 1)
            settings += more
            outputs += shown
        return settings, outputs
    options, index = values.get("_options_labels"), values.get("index")
    if isinstance(options, list) and isinstance(index, int) and 0 <= index < len(options):
        values = {**values, "value": options[index]}  # a dropdown stores the index of its label
    if "value" in values and values.get("description"):
        return [f"{values['description']} = {values['value']}"], []
    return [], []


def _finish_widgets(nb) -> None:
    """Make a rendered notebook static: progress bars are left out (a finished bar says nothing
    a reader needs), and an interactive widget becomes what it showed for its controls' values
    at run time (the default), under a line naming those values."""
    state = nb.metadata.get("widgets", {}).get(_WIDGET_STATE, {}).get("state", {})
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outputs = []
        for output in cell.get("outputs", []):
            view = output.get("data", {}).pop(_WIDGET_VIEW, None)
            model_id = view.get("model_id", "") if isinstance(view, dict) else ""
            if view is None or "image/png" in output.get("data", {}):
                outputs.append(output)
            elif _is_progress_bar(model_id, state):
                continue
            else:
                settings, shown = _static_widget(model_id, state)
                if not shown:
                    outputs.append(output)
                    continue
                note = ("Interactive in a live notebook; shown here as drawn for "
                        + (", ".join(settings) or "its default settings") + ".")
                outputs.append(_note_output(note))
                outputs.extend(shown)
        cell["outputs"] = outputs
    nb.metadata.pop("widgets", None)


def _note_output(text: str) -> dict:
    """A display output of one short line of text (HTML and plain)."""
    import nbformat

    return nbformat.v4.new_output("display_data", data={
        "text/plain": text, "text/html": f"<p><em>{html.escape(text)}</em></p>"})


#: Where Python says a warning was raised in a notebook cell: the kernel's temporary file for it.
_CELL_FILE = re.compile(r"(?m)^[^\n]*?ipykernel_\d+[/\\]\d+\.py:(\d+): ")


def _tidy_streams(nb) -> None:
    """Warnings name the line of their cell, not the kernel's temporary file for it
    (``/tmp/ipykernel_123/456.py:4:``), and the same text is printed once per cell."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        seen, outputs = set(), []
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                text = "".join(output.get("text", ""))
                output["text"] = text = _CELL_FILE.sub(r"line \1 of this cell: ", text)
                if text in seen:
                    continue
                seen.add(text)
            outputs.append(output)
        cell["outputs"] = outputs


def _collect_figures(nb, stem: str, out: OutputFolder) -> list[_Figure]:
    """Write every PNG output as a file; widgets become their final text (the report is static)."""
    figures: list[_Figure] = []
    folder = f"figures/{stem}"
    out.makedirs(folder)
    out.remove(folder, "fig-*.png")  # from an earlier run of this notebook
    _finish_widgets(nb)
    _tidy_streams(nb)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" not in data:
                continue
            title = output.get("metadata", {}).get(_FIGURE_KEY, {}).get("title", "")
            index = len(figures) + 1
            payload = data["image/png"]
            path = out.write(f"{folder}/fig-{index:02d}-{_slug(title)}.png",
                             base64.b64decode(payload if isinstance(payload, str) else "".join(payload)))
            figures.append(_Figure(stem, index, title or f"Figure {index}", path))
    return figures


_REMOTE_SCRIPT = re.compile(r'<script[^>]*\bsrc="https?://[^"]*"[^>]*>\s*</script>', re.IGNORECASE)


def _offline(page: str) -> str:
    """The rendered notebook without the scripts nbconvert loads from a CDN.

    The report is static: its figures are PNGs and its widgets were written out as text, so
    require.js has nothing to load; formulas stay as their TeX source instead of asking MathJax
    from the network (which an offline reader cannot reach, and a browser reports as errors).
    """
    return _REMOTE_SCRIPT.sub("<!-- a script from the network, left out: the report works offline -->", page)


def _execute(run: _Run, out: OutputFolder, *, timeout: int, env: dict[str, str],
             kernel_name: str) -> None:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
    from nbconvert import HTMLExporter

    nb = nbformat.read(run.path, as_version=4)
    run.title = _title_of(nb) or run.path.stem
    from jupyter_client.manager import KernelManager

    # the kernel's own log lines (e.g. its transport warning) go to a file, not between the
    # progress lines of the terminal
    log = out.open_text(f"logs/{run.path.stem}.log")
    # The kernel talks over Unix sockets in a private folder, not TCP ports: a TCP port chosen
    # free can be taken by another process's kernel before ours binds it (the client then waits
    # for a kernel that never hears it), and local TCP is unencrypted.
    sockets = Path(tempfile.mkdtemp(prefix="jk-kernel-"))
    km = KernelManager(kernel_name=kernel_name, transport="ipc", ip=str(sockets / "k"),
                       connection_file=str(sockets / "connection.json"))
    client = NotebookClient(
        nb, km=km, timeout=timeout, kernel_name=kernel_name, allow_errors=False,
        resources={"metadata": {"path": str(run.path.parent)}}, record_timing=False,
    )
    start = time.perf_counter()
    try:
        client.execute(env=env, stdout=log, stderr=log)
        run.status = "ok"
    except CellExecutionError as err:
        run.status = "failed"
        run.error = f"{err.ename}: {err.evalue}"
    except CellTimeoutError as err:
        run.status = "failed"
        run.error = f"a cell ran longer than {timeout} s ({err})"
    except DeadKernelError as err:
        run.status = "failed"
        run.error = f"the kernel died: {err} (log: logs/{run.path.stem}.log)"
    finally:
        log.close()
        shutil.rmtree(sockets, ignore_errors=True)
    run.seconds = time.perf_counter() - start
    run.smoke = env.get("JUDGEKIT_SMOKE", "").strip().lower() in {"1", "true", "yes"}

    stem = run.path.stem
    run.figures = _collect_figures(nb, stem, out)
    run.ipynb = out.write(f"notebooks/{stem}.ipynb", nbformat.writes(nb))
    exporter = HTMLExporter(template_name="lab")
    body, _ = exporter.from_notebook_node(nb)
    run.html = out.write(f"notebooks/{stem}.html", _offline(body))


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:1200px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
h1{margin-bottom:.2em} .meta{color:#555;margin-top:0}
table{border-collapse:collapse;width:100%;margin:1em 0 2em} th,td{text-align:left;padding:.35em .6em;
border-bottom:1px solid #ddd;vertical-align:top} th{background:#f5f5f5}
td{overflow-wrap:anywhere} .ok{color:#1a7f37;font-weight:600} .failed{color:#b42318;font-weight:600}
.differs{color:#9a6700;font-weight:600} .na{color:#777}
.err{font-family:ui-monospace,monospace;font-size:.85em;color:#b42318;white-space:pre-wrap}
.scoreboard{font-size:.9em} .scoreboard tr.paper th{background:#e8eef6;font-size:1.02em;padding-top:.6em}
.scoreboard tr.quoted td{color:#666;font-size:.92em} .how{color:#666;font-size:.85em}
.scoreboard td:nth-child(2),.scoreboard td:nth-child(3),.scoreboard td:nth-child(4),
.scoreboard td:nth-child(5){white-space:nowrap;overflow-wrap:normal}
.gallery{display:grid;grid-template-columns:repeat(auto-fill,minmax(320px,1fr));gap:1.2em;margin:1em 0 2em}
figure{margin:0;border:1px solid #e3e3e3;border-radius:6px;padding:.6em;background:#fff}
figure img{width:100%;height:auto} figcaption{font-size:.9em;color:#333;margin-top:.4em;overflow-wrap:anywhere}
code{background:#f3f3f3;padding:0 .25em;border-radius:3px}
"""


def _page(title: str, body: str) -> str:
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">{_CSP}'
            f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style></head><body>\n{body}\n"
            "</body></html>\n")


def _meta(runs: list[_Run], seconds: float) -> str:
    from judgekit import __version__

    failed = sum(r.status != "ok" for r in runs)
    modes = sorted({"smoke" if r.smoke else "full" for r in runs if r.status != "not run"})
    mode = " and ".join(modes) or "—"
    if "smoke" in modes:
        mode += " (smoke: JUDGEKIT_SMOKE=1, fewer bootstrap draws, smaller samples)"
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f'<p class="meta">judgekit {html.escape(__version__)} · Python '
            f"{html.escape(platform.python_version())} · mode: {html.escape(mode)} · {html.escape(stamp)}"
            f" · {len(runs)} notebooks, {failed} failed, {sum(len(r.figures) for r in runs)} figures"
            f" · this run {seconds:.0f} s</p>")


def _index(runs: list[_Run], out: Path, folder: OutputFolder, *, seconds: float,
           problems: list[str]) -> Path:
    from judgekit import scoreboard
    from judgekit._spreadsheet import csv_text

    def rel(p: Path | None) -> str:
        return html.escape(p.relative_to(out).as_posix()) if p is not None else ""

    executed = [r.ipynb for r in runs if r.ipynb is not None and r.ipynb.is_file()]
    links = {r.ipynb.stem: rel(r.html) for r in runs if r.ipynb is not None and r.html is not None}
    unreadable: dict[str, str] = {}
    board = scoreboard.build(executed, links, unreadable=unreadable)
    problems = problems + [
        f"{Path(p).relative_to(out).as_posix()} could not be read for the scoreboard, so its "
        f"numbers are missing: {why.replace(str(out) + os.sep, '')}" for p, why in unreadable.items()]

    rows = []
    for run in runs:
        status = f'<span class="{_STATUS_CLASS.get(run.status, "na")}">{html.escape(run.status)}</span>'
        if run.error:
            status += f'<div class="err">{html.escape(run.error)}</div>'
        links_out = []
        if run.html:
            links_out.append(f'<a href="{rel(run.html)}">rendered</a>')
        if run.ipynb:
            links_out.append(f'<a href="{rel(run.ipynb)}">executed .ipynb</a>')
        if run.figures:
            links_out.append(f'<a href="figures.html#{html.escape(run.path.stem)}">'
                             f"{len(run.figures)} figure(s)</a>")
        rows.append(
            f"<tr><td><code>{html.escape(run.path.name)}</code></td><td>{html.escape(run.title)}</td>"
            f"<td>{status}</td><td>{run.seconds:.1f} s{' (smoke)' if run.smoke else ''}</td>"
            f"<td>{' · '.join(links_out)}</td></tr>"
        )
    galleries = []
    for run in runs:
        if not run.figures:
            continue
        items = "".join(
            f'<figure><a href="{rel(f.path)}"><img src="{rel(f.path)}" alt="{html.escape(f.title)}" '
            f'loading="lazy"></a><figcaption>{f.index}. {html.escape(f.title)}</figcaption></figure>'
            for f in run.figures
        )
        link = f' · <a href="{rel(run.html)}">notebook</a>' if run.html else ""
        galleries.append(
            f'<h3 id="{html.escape(run.path.stem)}">{html.escape(run.path.stem)} — '
            f'{html.escape(run.title)}{link}</h3><div class="gallery">{items}</div>'
        )
    meta = _meta(runs, seconds)
    damaged = ("<h2>Not read</h2>\n<ul class=\"err\">"
               + "".join(f"<li>{html.escape(p)}</li>" for p in problems) + "</ul>\n"
               if problems else "")

    folder.write("scoreboard.csv", csv_text(board))
    index = _page("judgekit report", (
        "<h1>judgekit: reproduction scoreboard</h1>\n" + meta + "\n"
        "<p>Every number below was printed in one of the five reference papers and recomputed by a "
        "notebook of the series; the paper's value comes from <code>judgekit.published</code>, "
        "judgekit's from the executed notebook. Follow a section link for the computation, the "
        "figure and the discussion.</p>\n"
        + damaged
        + scoreboard.render_html(board)
        + "\n<h2>Notebooks</h2>\n<table><tr><th>file</th><th>title</th><th>status</th><th>time</th>"
        f"<th>output</th></tr>{''.join(rows)}</table>\n"
        '<p>All figures: <a href="figures.html">figures.html</a>.</p>'))
    path = folder.write("index.html", index)
    folder.write("figures.html", _page("judgekit figures", (
        '<h1>judgekit report: figures</h1>\n' + meta + '\n<p><a href="index.html">scoreboard and '
        "notebooks</a></p>\n" + ("".join(galleries) or "<p>No figures.</p>"))))
    manifest = [
        {"notebook": f.notebook, "index": f.index, "title": f.title, "png": f.path.relative_to(out).as_posix()}
        for run in runs for f in run.figures
    ]
    folder.write("figures.json", json.dumps(manifest, indent=1))
    return path


def _merge_runs(out: Path, runs: list[_Run], folder: OutputFolder) -> tuple[list[_Run], list[str]]:
    """This run's notebooks, plus those an earlier run wrote into ``out`` (by file name), and a
    sentence for each part of ``runs.json`` that could not be read (those parts are left out)."""
    from judgekit._jsonfile import parse_json

    manifest = out / "runs.json"
    merged: dict[str, _Run] = {}
    problems: list[str] = []
    entries: list = []
    if manifest.is_file():
        try:
            entries = parse_json(manifest.read_bytes(), "runs.json")
            if not isinstance(entries, list):
                raise ValueError(f"expected a list of entries, got a JSON {type(entries).__name__}")
        except (OSError, ValueError) as err:
            entries = []
            problems.append(f"runs.json could not be read: {str(err).removeprefix('runs.json: ')}; "
                            "notebooks of earlier runs into this folder are not listed")
    for i, entry in enumerate(entries, start=1):
        try:
            earlier = _Run.from_json(entry, out)
        except ValueError as err:
            problems.append(f"entry {i} of runs.json could not be read, so it is left out: {err}")
            continue
        if earlier.ipynb is not None and earlier.ipynb.is_file():
            merged[earlier.path.name] = earlier
    for run in runs:
        merged[run.path.name] = run
    result = [merged[name] for name in sorted(merged)]
    folder.write("runs.json", json.dumps([r.to_json(out) for r in result], indent=1))
    return result, problems


def _write_report(out: Path, runs: list[_Run], *, seconds: float) -> Path:
    """Merge this run's notebooks with the earlier entries of ``out`` and write the pages."""
    with OutputFolder(out) as folder:
        for name in _FOLDERS:
            folder.makedirs(name)
        merged, problems = _merge_runs(out, runs, folder)
        for problem in problems:
            print(f"judgekit reproduce: {problem}", file=sys.stderr, flush=True)
        return _index(merged, out, folder, seconds=seconds, problems=problems)


def reproduce(
    out: str | Path = "judgekit-report",
    smoke: bool = False,
    only: Sequence[str] | None = None,
    timeout: int = 1800,
    *,
    notebooks: str | Path | None = None,
    kernel_name: str = "python3",
) -> int:
    """Execute the notebook series headless and write an HTML report with every figure as PNG.

    Parameters
    ----------
    out : str or Path
        Report folder; gets ``index.html`` (the scoreboard and the notebooks), ``figures.html``,
        ``scoreboard.csv``, ``notebooks/NN_*.html`` and ``.ipynb`` (executed),
        ``figures/NN_*/fig-KK-<title>.png``, ``figures.json``, ``runs.json`` and ``logs/``.
        Notebooks of an earlier run into the same folder that this run does not repeat keep
        their entries.
    smoke : bool
        Fast mode (sets ``JUDGEKIT_SMOKE=1`` in the kernels): fewer bootstrap draws, smaller
        samples. The numbers in the README come from the full mode.
    only : sequence of str, optional
        Run only these notebooks, by number prefix (e.g. ``["00", "04"]``).
    timeout : int
        Per-cell time limit in seconds.
    notebooks : str or Path, optional
        Folder of the series (default: ``notebooks/`` of the judgekit checkout).
    kernel_name : str
        Jupyter kernel to run the notebooks in.

    Returns
    -------
    int
        0 when every notebook ran, 1 when some failed (the report says which, and why), 2 when
        nothing could be run.

    Examples
    --------
    From a shell: ``judgekit reproduce --out report`` (then open ``report/index.html``), or
    ``judgekit reproduce --smoke --only 00 04`` for a quick look.
    """
    try:
        paths = find_notebooks(notebooks, only)
    except (FileNotFoundError, ValueError) as err:
        print(f"judgekit reproduce: {err}", file=sys.stderr)
        return 2
    if not paths:
        print("judgekit reproduce: no numbered notebooks found", file=sys.stderr)
        return 2
    out = Path(out).resolve()
    folder = OutputFolder(out)
    try:
        for name in _FOLDERS:  # before hours of notebooks, not after
            folder.makedirs(name)
    except OutputPathError as err:
        folder.close()
        print(f"judgekit reproduce: {err.strerror}", file=sys.stderr)
        return 2
    env = dict(os.environ)
    env.setdefault("TQDM_DISABLE", "1")  # the pages are static: no progress bars in them
    if smoke:
        env["JUDGEKIT_SMOKE"] = "1"
    smoke_mode = env.get("JUDGEKIT_SMOKE", "").strip().lower() in {"1", "true", "yes"}
    runs = [_Run(path=p, title=p.stem) for p in paths]
    start = time.perf_counter()
    print(f"judgekit reproduce: {len(runs)} notebook(s) -> {out} "
          f"({'smoke' if smoke_mode else 'full'} mode)", flush=True)
    with folder:
        for i, run in enumerate(runs, 1):
            print(f"[{i}/{len(runs)}] {run.path.name} ...", end=" ", flush=True)
            try:
                _execute(run, folder, timeout=timeout, env=env, kernel_name=kernel_name)
            except OutputPathError as err:  # a link put into the folder while the series ran
                run.status, run.error = "failed", err.strerror
            print(f"{run.status} in {run.seconds:.1f} s, {len(run.figures)} figure(s)"
                  + (f"\n      {run.error}" if run.error else ""), flush=True)
    try:
        index = _write_report(out, runs, seconds=time.perf_counter() - start)
    except OutputPathError as err:
        print(f"judgekit reproduce: {err.strerror}", file=sys.stderr)
        return 2
    failed = [r.path.name for r in runs if r.status != "ok"]
    print(f"report: {index}" + (f"\nfailed: {', '.join(failed)}" if failed else ""), flush=True)
    return 1 if failed else 0
