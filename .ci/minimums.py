"""Print pip constraints pinning every runtime dependency of pyproject.toml to its declared minimum."""
import re
import sys

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pip vendors a copy of tomli
    from pip._vendor import tomli as tomllib
from pathlib import Path

project = tomllib.loads(Path(sys.argv[1] if len(sys.argv) > 1 else "pyproject.toml").read_text())
for spec in project["project"]["dependencies"]:
    name, marker = spec.split(";")[0].strip(), spec.partition(";")[2].strip()
    m = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9A-Za-z.]*)", name)
    if not m:
        sys.exit(f"cannot read a minimum version from {spec!r}")
    print(f"{m[1]}=={m[2]}" + (f"; {marker}" if marker else ""))
