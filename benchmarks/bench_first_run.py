"""The first run on a fresh machine: ``judgekit reproduce`` with no mirror and an empty cache.

Every dataset the notebooks use is downloaded on first use, through judgekit's real download
path, from a loopback HTTP server that serves the offline mirror's files in GitHub's raw layout
(``JUDGEKIT_DATA_URL``), so this runs without the internet::

    JUDGEKIT_DATA_MIRROR=/path/to/mirror python benchmarks/bench_first_run.py [--full] [--only 00 06]

Prints the exit code, the wall time, the files and bytes downloaded per dataset, and checks that
no file was downloaded twice. ``--full`` runs the notebooks in full mode (default: smoke).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from judgekit.data import fetch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))  # the maintainers' tools
from mirror_server import MirrorServer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="full mode instead of smoke")
    parser.add_argument("--only", nargs="*", default=None, metavar="NN")
    args = parser.parse_args()
    mirror = os.environ.get("JUDGEKIT_DATA_MIRROR")
    if not mirror or not Path(mirror).is_dir():
        print("set JUDGEKIT_DATA_MIRROR to the offline mirror (it is served, not read)")
        return 2
    by_url = {f"/{f.repo}/{f.commit}/{f.path}": f for f in fetch.registry_files() if f.github}
    with tempfile.TemporaryDirectory(prefix="judgekit-first-run-") as tmp, MirrorServer(mirror) as srv:
        env = {k: v for k, v in os.environ.items() if k != "JUDGEKIT_DATA_MIRROR"}
        env.update(JUDGEKIT_DATA_URL=srv.url, JUDGEKIT_CACHE_DIR=str(Path(tmp) / "cache"))
        cmd = [sys.executable, "-m", "judgekit.cli", "reproduce", "--out", str(Path(tmp) / "report")]
        cmd += [] if args.full else ["--smoke"]
        cmd += ["--only", *args.only] if args.only else []
        start = time.perf_counter()
        code = subprocess.run(cmd, env=env).returncode
        seconds = time.perf_counter() - start
        files, size = Counter(), Counter()
        for path in srv.served:
            entry = by_url[path]
            files[entry.dataset] += 1
            size[entry.dataset] += entry.size or 0
    print(f"\nexit code {code}, {seconds:.0f} s wall (no mirror, empty cache, loopback downloads)")
    for name in sorted(files):
        print(f"  {name:<24} {files[name]:>4} files {size[name] / 1e6:8.1f} MB")
    print(f"  {'total':<24} {sum(files.values()):>4} files {sum(size.values()) / 1e6:8.1f} MB; "
          f"downloaded twice: {sum(1 for n in srv.served.values() if n > 1)}")
    return code


if __name__ == "__main__":
    sys.exit(main())
