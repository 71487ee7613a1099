"""Build the API reference page (``docs/api.md``) from the public docstrings.

Run ``python -m judgekit._apiref`` after changing a public docstring; a test fails while the page
is out of date. Every name of the flat ``jk.*`` namespace (and the chart builders of
:mod:`judgekit.viz` and the simulators of :mod:`judgekit.sim`) gets one entry, grouped by the
question it answers, in the order of the README's "What it answers" table. The groups follow the subpackage a name lives in, so a new public
function lands in its group without editing this file.

The docstrings are parsed with numpydoc (a test dependency) and rendered as Markdown: the
signature, the summary, the parameters, what is returned, the notes, and the examples as code.
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

#: (group title, module prefixes), in the README's order; the first prefix that matches wins.
GROUPS: list[tuple[str, tuple[str, ...]]] = [
    ("Tables: pairs and judgments", ("judgekit.schema",)),
    ("Data: datasets, readers, sampling", ("judgekit.data",)),
    ("Running judges: templates, engine, cache, costs", ("judgekit.judging",)),
    ("Reliability metrics: accuracy, flips, position and length bias, consistency",
     ("judgekit.metrics",)),
    ("Calibration of A/B probabilities", ("judgekit.calibration",)),
    ("Win rates, length-controlled", ("judgekit.winrate",)),
    ("Bias suite (CALM)", ("judgekit.perturb",)),
    ("Human labels: prediction-powered inference and planning", ("judgekit.inference",)),
    ("Audit of your own judge", ("judgekit.auditing",)),
    ("Logs larger than memory: DuckDB, Spark, warehouses", ("judgekit.scale",)),
    ("Charts and the explorer (`jk.viz`)", ("judgekit.viz",)),
    ("Simulation: judges of known bias, their server, studies (`jk.sim`)", ("judgekit.sim",)),
    ("Published numbers and reproduction", ("judgekit.published", "judgekit.scoreboard",
                                            "judgekit.reproduce")),
    ("Exceptions, warnings and utilities", ("judgekit",)),
]

_SECTIONS = ["Parameters", "Returns", "Yields", "Raises", "Warns", "See Also", "Notes",
             "References", "Examples"]


def public_objects() -> list[tuple[str, object]]:
    """Every documented public name: ``jk.<name>`` for the flat namespace, ``jk.viz.<name>``,
    ``jk.sim.<name>``."""
    import judgekit as jk
    from judgekit import sim, viz

    out = []
    for prefix, module in (("jk", jk), ("jk.viz", viz), ("jk.sim", sim)):
        for name in sorted(module.__all__):
            obj = getattr(module, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                out.append((f"{prefix}.{name}", obj))
    return out


def group_of(obj: object) -> str:
    """The title of the group an object's defining module belongs to."""
    module = getattr(obj, "__module__", "") or ""
    for title, prefixes in GROUPS:
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return title
    return GROUPS[-1][0]


def _signature(name: str, obj: object) -> str:
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        sig = "(...)"
    sig = re.sub(r"<([\w.]+) object at 0x[0-9a-f]+>", r"\1()", sig)  # no memory addresses
    text = f"{name}{sig}"
    if len(text) <= 96:
        return text
    # one parameter per line for long signatures
    params = [str(p) for p in inspect.signature(obj).parameters.values()]
    params = [re.sub(r"<([\w.]+) object at 0x[0-9a-f]+>", r"\1()", p) for p in params]
    ret = "" if "->" not in sig else " ->" + sig.rsplit("->", 1)[1]
    return name + "(\n    " + ",\n    ".join(params) + ",\n)" + ret


def _params_md(items) -> list[str]:
    lines = []
    for p in items:
        if p.name:
            head = f"- **`{p.name}`**" + (f" : {p.type}" if p.type else "")
        else:  # an unnamed return value: its type only
            head = f"- {p.type}"
        desc = " ".join(line.strip() for line in p.desc).strip()
        lines.append(head + (f": {desc}" if desc else ""))
    return lines


def _entry(name: str, obj: object) -> list[str]:
    from numpydoc.docscrape import ClassDoc, FunctionDoc

    doc = ClassDoc(obj, config={"show_class_members": False}) if inspect.isclass(obj) \
        else FunctionDoc(obj)
    anchor = name.replace(".", "-").lower()
    lines = [f'### `{name}` <a id="{anchor}"></a>', "", "```python", _signature(name, obj),
             "```", ""]
    summary = " ".join(doc["Summary"]).strip()
    if summary:
        lines += [summary, ""]
    extended = "\n".join(doc["Extended Summary"]).strip()
    if extended:
        lines += [extended, ""]
    for section in _SECTIONS:
        content = doc[section]
        if not content:
            continue
        if section in ("Parameters", "Returns", "Yields", "Raises", "Warns"):
            lines += [f"**{section}**", ""] + _params_md(content) + [""]
        elif section == "See Also":
            refs = ", ".join(f"`{n}`" for group, _ in content for n, _ in group)
            lines += [f"**See also**: {refs}", ""]
        elif section == "Examples":
            code = "\n".join(content).strip()
            lines += ["**Examples**", "", "```pycon", code, "```", ""]
        else:
            lines += [f"**{section}**", "", "\n".join(content).strip(), ""]
    return lines


def build() -> str:
    """The whole page, as Markdown."""
    from judgekit import __version__

    objects = public_objects()
    by_group: dict[str, list[tuple[str, object]]] = {title: [] for title, _ in GROUPS}
    for name, obj in objects:
        by_group[group_of(obj)].append((name, obj))
    lines = ["# API reference", "",
             f"Generated from the docstrings of judgekit {__version__.split('+')[0]} by "
             "`python -m judgekit._apiref`; do not edit by hand. The same text is what "
             "`help(jk.<name>)` shows in a notebook.", ""]
    toc = []
    for title, entries in by_group.items():
        if entries:
            slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
            toc.append(f"- [{title}](#{slug}): " + ", ".join(
                f"[`{n.split('.')[-1]}`](#{n.replace('.', '-').lower()})" for n, _ in entries))
    lines += toc + [""]
    for title, entries in by_group.items():
        if not entries:
            continue
        lines += [f"## {title}", ""]
        for name, obj in entries:
            lines += _entry(name, obj)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    target = Path(argv[0]) if argv else Path(__file__).resolve().parents[1] / "docs" / "api.md"
    target.write_text(build(), encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
