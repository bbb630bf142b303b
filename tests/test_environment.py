"""The conda environment and pyproject.toml must name the same packages with the same pins."""
import re
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10: pip carries a copy
    from pip._vendor import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def _key(req: str) -> tuple[str, str]:
    m = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*(.*)", req)
    return m.group(1).lower().replace("_", "-"), m.group(2).replace(" ", "")


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_key(r) for r in project["dependencies"]}
    for name, extra in project["optional-dependencies"].items():
        if name != "reference":  # optional, never installed by the workbook's commands
            wanted |= {_key(r) for r in extra}
    lines = (ROOT / "environment.yml").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "- pip:")
    pip = {_key(line.strip()[2:].split("#")[0]) for line in lines[start + 1:] if line.strip().startswith("- ")}
    assert pip == wanted, f"only in environment.yml: {sorted(pip - wanted)}; only in pyproject.toml: {sorted(wanted - pip)}"
