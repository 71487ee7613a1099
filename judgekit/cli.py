"""The ``judgekit`` command line: ``audit``, ``reproduce``, ``serve-sim``, ``datasets`` and ``fetch``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="judgekit", description="Can you trust your LLM judge? Metrics, corrections and figures."
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command")

    aud = sub.add_parser(
        "audit", help="audit a judge from its judgment file and write a report",
        description="Read a judgment file (AlpacaEval annotations.json, FastChat MT-Bench, "
                    "Arena-Hard, Chatbot Arena battles, LLMBar, Judging-the-Judges, or a "
                    "CSV/TSV/JSON/JSONL/parquet table), run every analysis the data supports and "
                    "write DIR/index.html with the charts (PNG) and tables (CSV). Prints one "
                    "summary line, and what to add to the data to measure the sections it could "
                    "not. To audit a judge against the crowd of a Chatbot Arena battles file, "
                    "give the judge's verdicts as FILE and the battles as --pairs.")
    aud.add_argument("file", help="the judgment file or results folder")
    aud.add_argument("--pairs", default=None,
                     help="a pairs table (for a table of judgments without texts), or a Chatbot "
                          "Arena battles file whose crowd votes label the pairs")
    aud.add_argument("--format", default="auto",
                     choices=["auto", "alpacaeval", "mtbench", "arena-hard", "arena-battles", "csv",
                              "llmbar", "jtj"],
                     help="the file's format (default: %(default)s, detected and reported)")
    aud.add_argument("--out", default="judgekit-audit", help="report directory (default: %(default)s)")
    aud.add_argument("--judge", default=None, help="the judge's name when the file has no judge column")
    aud.add_argument("--columns", default=None, metavar="YOURS=JUDGEKITS,...",
                     help="a table's column names mapped to judgekit's, e.g. "
                          "winner=verdict,id=pair_id (common names such as winner, id, question, "
                          "answer_a are recognised without it)")
    aud.add_argument("--baseline", default=None, help="the reference model of the win rates")
    aud.add_argument("--n-boot", type=int, default=None,
                     help="bootstrap resamples of the intervals (default: each metric's own)")
    aud.add_argument("--lc-boot", type=int, default=None,
                     help="bootstrap resamples of the length-controlled win rates")
    aud.add_argument("--margin", action="append", default=[], metavar="NAME=VALUE",
                     help="the smallest effect that counts as material, e.g. length_bias=0.05 "
                          "(repeatable; names and defaults: judgekit.auditing.MARGINS)")
    aud.add_argument("--single-as-pairs", action="store_true",
                     help="MT-Bench single-answer grades: compare each two models' grades")
    aud.add_argument("--no-progress", action="store_true", help="no progress bar")
    aud.add_argument("--traceback", action="store_true", help="show the traceback of an unexpected error")

    rep = sub.add_parser(
        "reproduce", help="execute the notebook series and write an HTML report",
        description="Execute every notebook of the series (or those chosen with --only) on the "
                    "real data (downloaded, or read from JUDGEKIT_DATA_MIRROR) and write "
                    "OUT/index.html with each notebook's rendered page, its figures and the "
                    "scoreboard of published numbers reproduced.")
    rep.add_argument("--out", default="judgekit-report", help="report directory (default: %(default)s)")
    rep.add_argument("--smoke", action="store_true", help="fast mode (as JUDGEKIT_SMOKE=1): fewer draws")
    rep.add_argument("--only", nargs="*", default=None, metavar="NN",
                     help="run only these notebooks, by number prefix (e.g. 00 04)")
    rep.add_argument("--timeout", type=int, default=1800, help="per-cell timeout in seconds")

    sim = sub.add_parser(
        "serve-sim", help="serve a simulated OpenAI-compatible judge over HTTP",
        description="Serve simulated judges behind an OpenAI-compatible chat completions "
                    "endpoint (with logprobs), for trying jk.run_judges without a paid API. "
                    "Prints the base URL; stop it with Ctrl-C.")
    sim.add_argument("--host", default="127.0.0.1")
    sim.add_argument("--port", type=int, default=0, help="0 picks a free port (printed)")
    sim.add_argument("--config", default=None,
                     help="JSON or TOML file with the simulated judges' parameters, faults and rate limits")

    ds = sub.add_parser(
        "datasets", help="list the datasets judgekit can load",
        description="List the datasets jk.load_dataset reads: name, what it holds, licence, "
                    "whether it is available offline here (downloaded or in the mirror), whether "
                    "it has published judge outputs, and its files here / all. Long cells are "
                    "cut to fit the terminal's width.")
    ds.add_argument("--offline", action="store_true", help="only those available offline here")

    fetch = sub.add_parser(
        "fetch", help="download (or verify from the mirror) a dataset's files",
        description="Download each named dataset's files into the cache (or take them from "
                    "JUDGEKIT_DATA_MIRROR) and check them against their published SHA-256 "
                    "checksums; prints one line per dataset. 'all' fetches every dataset.")
    fetch.add_argument("name", nargs="+", help="dataset name(s), or 'all'")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``judgekit`` console script."""
    args = _parser().parse_args(argv)
    if args.version:
        from judgekit import __version__

        print(__version__)
        return 0
    if args.command == "audit":
        return _audit(args)
    if args.command == "reproduce":
        from judgekit.reproduce import reproduce

        return reproduce(out=args.out, smoke=args.smoke, only=args.only, timeout=args.timeout)
    if args.command == "serve-sim":
        from judgekit.sim import serve_forever

        return serve_forever(host=args.host, port=args.port, config=args.config)
    if args.command == "datasets":
        import pandas as pd

        from judgekit.data import list_datasets

        table = list_datasets()
        if args.offline:
            table = table[table["offline"]]
        shown = pd.DataFrame({
            "name": table["name"], "description": table["description"],
            "license": table["license"], "offline": table["offline"],
            "judgments": table["has_judgments"],
            "files": [f"{a}/{n}" for a, n in zip(table["files_available"], table["files"])],
        })
        print(_fit_table(shown))
        return 0
    if args.command == "fetch":
        return _fetch(args.name)
    _parser().print_help()
    return 1


def _fit_table(table, width: int | None = None) -> str:
    """A table as text no wider than the terminal: long cells are cut with "..." (widest column
    first) until each line fits."""
    import shutil

    width = width or shutil.get_terminal_size((100, 24)).columns
    shown = table.astype(str)
    limits = {c: max([len(str(c)), *shown[c].str.len().tolist()]) for c in shown.columns}
    while True:
        text = shown.to_string(index=False)
        if max((len(line) for line in text.splitlines()), default=0) <= width:
            return text
        # the wider of the description and the licence gives way (to 16 characters), then the
        # widest column
        prose = {c: limits[c] for c in ("description", "license") if limits.get(c, 0) > 16}
        column = max(prose or limits, key=(prose or limits).get)
        if limits[column] <= max(8, len(str(column))):
            return text  # nothing left to cut: a terminal narrower than the column names
        limits[column] = max(8, len(str(column)), limits[column] - max(4, limits[column] // 5))
        cut = limits[column]
        shown[column] = shown[column].map(lambda v, cut=cut: v if len(v) <= cut else v[:cut - 3] + "...")


def _mapping(text: str | None) -> dict[str, str]:
    """``--columns winner=verdict,id=pair_id`` as a mapping."""
    if not text:
        return {}
    out = {}
    for part in [p.strip() for p in text.split(",") if p.strip()]:
        yours, sep, ours = part.partition("=")
        if not sep or not yours.strip() or not ours.strip():
            raise ValueError(f"--columns: {part!r} is not YOURS=JUDGEKITS (e.g. winner=verdict)")
        out[yours.strip()] = ours.strip()
    return out


def _audit(args: argparse.Namespace) -> int:
    """``judgekit audit``: a one-line summary on stdout; bad input is a short message naming the
    file on stderr and exit code 2; any other failure exit code 1; never a traceback unless
    asked."""
    from judgekit._deferred import defer_iri_grammar
    from judgekit.viz._audit_worker import ChartWorker

    defer_iri_grammar()  # about 2 s of start-up that no chart uses (see judgekit._deferred)
    import pandas  # noqa: F401  both processes need it: imported once, before the fork

    # forked next, so that altair and vl-convert start while this process reads and computes
    worker = ChartWorker()
    try:
        return _audit_run(args, worker)
    finally:
        worker.close()


def _audit_run(args: argparse.Namespace, worker: Any) -> int:
    import json
    import time
    from pathlib import Path

    from judgekit.exceptions import DataFileError, OutputPathError

    start = time.perf_counter()
    path = Path(args.file)
    progress = not args.no_progress

    def fail(message: str, code: int) -> int:
        if str(path) not in message and path.name not in message:
            message = f"{path}: {message}"
        print(f"judgekit audit: {message}", file=sys.stderr, flush=True)
        return code

    try:
        from judgekit.auditing import audit
        from judgekit.auditing.verdicts import margins_with
        from judgekit.data.formats import detect_format, read_any

        margins = {}
        for item in args.margin:
            name, _, value = item.partition("=")
            try:
                margins[name.strip()] = float(value)
            except ValueError:
                raise ValueError(f"--margin {item!r}: expected NAME=VALUE with a number") from None
        margins_with(margins)  # an unknown name or a margin <= 0 is refused before any work

        fmt, why = (args.format, "as given") if args.format != "auto" else detect_format(path)
        if args.format == "auto":
            print(f"judgekit audit: reading {path} as {fmt} ({why})", file=sys.stderr, flush=True)
        options = {}
        if fmt == "mtbench" and args.single_as_pairs:
            options["single_as_pairs"] = True
        if fmt == "arena-hard" and args.baseline:
            options["baseline"] = args.baseline
        if fmt == "csv" and args.judge:
            options["judge"] = args.judge
        columns = _mapping(args.columns)
        if columns and fmt != "csv":
            raise ValueError(f"--columns maps the columns of a table; this file is read as {fmt}")
        if columns:
            options["columns"] = columns
        pairs, judgments = read_any(path, fmt, pairs=args.pairs if fmt == "csv" else None, **options)
        if args.pairs is not None and fmt != "csv":
            pairs = args.pairs
    except (FileNotFoundError, IsADirectoryError, PermissionError, DataFileError, ValueError,
            TypeError, KeyError, UnicodeDecodeError, json.JSONDecodeError) as err:
        return fail(str(err).strip("'\""), 2)
    except Exception as err:  # a file judgekit could not make sense of: still no traceback
        if args.traceback:
            raise
        return fail(f"could not read the file ({type(err).__name__}: {err}); run again with "
                    "--traceback for details", 2)
    from judgekit.data.table import NOTES_KEY

    for note in judgments.attrs.get(NOTES_KEY, []):
        print(f"judgekit audit: note: {note}", file=sys.stderr, flush=True)
    try:
        from judgekit.viz.audit_report import report_folder, warm_templates

        report_folder(args.out).close()  # a linked charts/ or tables/ is refused before the work
        report = audit(judgments, pairs, judge=args.judge, baseline=args.baseline,
                       n_boot=args.n_boot, lc_boot=args.lc_boot, progress=progress,
                       source=f"{path} ({fmt})", margins=margins or None, on_section=worker.send)
        _first_answer(report)
        warm_templates()  # while the worker draws the last chart
        worker.collect(report)
        page = report.save(args.out, progress=progress)
    except OutputPathError as err:  # about the output folder, not the input file
        if args.traceback:
            raise
        print(f"judgekit audit: {err.strerror}", file=sys.stderr, flush=True)
        return 2
    except (ValueError, TypeError, FileNotFoundError) as err:
        if args.traceback:
            raise
        return fail(str(err), 2)
    except Exception as err:  # the command line reports, it does not dump a traceback
        if args.traceback:
            raise
        return fail(f"{type(err).__name__}: {err} (run again with --traceback for details)", 1)
    print(f"{path} ({fmt}): {report.summary()}; report: {page} "
          f"({time.perf_counter() - start:.1f} s)", flush=True)
    for key, fix in report.to_measure_more().items():  # stdout keeps its one line
        print(f"judgekit audit: to measure {report.sections[key].title.lower()}, add {fix}",
              file=sys.stderr, flush=True)
    return 0


#: How the first answer marks a finding (as the page's list markers do).
_MARKS = {"bad": "x", "warn": "!", "open": "?"}


def _first_answer(report: Any, shown: int = 5) -> None:
    """The answer, on stderr, as soon as the analysis is done (the report is written after it):
    the summary and the problems, warnings and inconclusive findings, most serious first."""
    print(f"judgekit audit: {report.summary()}", file=sys.stderr, flush=True)
    concerns = [f for f in report.findings if f.level in _MARKS]
    for f in concerns[:shown]:
        print(f"judgekit audit: {_MARKS[f.level]} {f.text}", file=sys.stderr, flush=True)
    if len(concerns) > shown:
        print(f"judgekit audit: ... {len(concerns) - shown} more in the report", file=sys.stderr,
              flush=True)


def _fetch(names: Sequence[str]) -> int:
    """``judgekit fetch``: one summary line per dataset, or a short error (no traceback), exit 1."""
    from judgekit.data import fetch_dataset
    from judgekit.exceptions import DataFileError

    code = 0
    for name in names:
        try:
            table = fetch_dataset(name)
        except (DataFileError, ValueError) as err:
            print(f"judgekit fetch {name}: {err}", file=sys.stderr, flush=True)
            code = 1
            continue
        counts = ", ".join(f"{n} from the {src}" if src != "download" else f"{n} downloaded"
                           for src, n in table["source"].value_counts().items())
        print(f"{name}: {len(table)} file{'s' if len(table) != 1 else ''} verified ({counts})",
              flush=True)
    return code


def run() -> None:
    """The ``judgekit`` console script: :func:`main`, then exit with its code. The process ends
    there, so its objects are frozen out of the garbage collector first: the interpreter's
    teardown then skips collecting them (about 0.2 s after ``judgekit audit``)."""
    code = main()
    import gc

    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    run()
