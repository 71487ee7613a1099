"""The ``judgekit`` command line: ``reproduce``, ``serve-sim``, ``datasets`` and ``fetch``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="judgekit", description="Can you trust your LLM judge? Metrics, corrections and figures."
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command")

    rep = sub.add_parser("reproduce", help="execute the notebook series and write an HTML report")
    rep.add_argument("--out", default="judgekit-report", help="report directory (default: %(default)s)")
    rep.add_argument("--smoke", action="store_true", help="fast mode (as JUDGEKIT_SMOKE=1): fewer draws")
    rep.add_argument("--only", nargs="*", default=None, metavar="NN",
                     help="run only these notebooks, by number prefix (e.g. 00 04)")
    rep.add_argument("--timeout", type=int, default=1800, help="per-cell timeout in seconds")

    sim = sub.add_parser("serve-sim", help="serve a simulated OpenAI-compatible judge over HTTP")
    sim.add_argument("--host", default="127.0.0.1")
    sim.add_argument("--port", type=int, default=0, help="0 picks a free port (printed)")
    sim.add_argument("--config", default=None,
                     help="JSON or TOML file with the simulated judges' parameters, faults and rate limits")

    ds = sub.add_parser("datasets", help="list the datasets judgekit can load")
    ds.add_argument("--offline", action="store_true", help="only those available offline here")

    fetch = sub.add_parser("fetch", help="download (or verify from the mirror) a dataset's files")
    fetch.add_argument("name", nargs="+", help="dataset name(s), or 'all'")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``judgekit`` console script."""
    args = _parser().parse_args(argv)
    if args.version:
        from judgekit import __version__

        print(__version__)
        return 0
    if args.command == "reproduce":
        from judgekit.reproduce import reproduce

        return reproduce(out=args.out, smoke=args.smoke, only=args.only, timeout=args.timeout)
    if args.command == "serve-sim":
        from judgekit.sim import serve_forever

        return serve_forever(host=args.host, port=args.port, config=args.config)
    if args.command == "datasets":
        from judgekit.data import list_datasets

        table = list_datasets()
        if args.offline:
            table = table[table["offline"]]
        print(table.to_string(index=False))
        return 0
    if args.command == "fetch":
        return _fetch(args.name)
    _parser().print_help()
    return 1


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


if __name__ == "__main__":
    sys.exit(main())
