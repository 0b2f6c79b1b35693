"""Supported versions: the oldest-versions constraints match pyproject.toml, and the README says what was tested."""

import importlib.util
import re
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent


def _lower_bounds() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    bounds = {}
    for requirement in project["dependencies"] + project["optional-dependencies"]["course"]:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", requirement.replace(" ", ""))
        assert match, f"{requirement!r}: state a plain lower bound (name>=version)"
        bounds[match[1].lower()] = match[2]
    return bounds


def _pins() -> dict[str, str]:
    text = (ROOT / "tools" / "oldest-constraints.txt").read_text(encoding="utf-8")
    pins = {}
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[name.lower()] = version
    return pins


def _same(version: str, bound: str) -> bool:
    """``2.4.0`` pins the bound ``2.4``; ``6.29.0`` pins ``6.29``."""
    return version.split(".")[: len(bound.split("."))] == bound.split(".") and all(
        part == "0" for part in version.split(".")[len(bound.split(".")) :]
    )


def test_oldest_constraints_pin_every_lower_bound_that_matters():
    bounds, pins = _lower_bounds(), _pins()
    runtime = {"numpy", "matplotlib", "seaborn", "pandas", "torch", "tqdm", "ipywidgets", "nbclient", "ipykernel"}
    assert runtime <= set(bounds), "a runtime dependency left pyproject.toml: update this test"
    assert set(pins) == runtime
    wrong = {name: (pins[name], bounds[name]) for name in pins if not _same(pins[name], bounds[name])}
    assert not wrong, f"pin != lower bound in pyproject.toml: {wrong}"


def test_readme_states_the_tested_versions():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### 검증한 버전 · Tested versions", 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| 3.")]
    oldest = [row for row in rows if re.match(r"\| 3\.10(\.\d+)? \|", row)]
    assert oldest, "the README's table needs the oldest-versions row"
    pins = _pins()
    for name in ("numpy", "matplotlib", "torch", "ipywidgets"):
        assert pins[name] in oldest[0], f"README's oldest row does not show {name} {pins[name]}"
    assert "python3.10 tools/test_oldest.py" in readme


def _course_module():
    spec = importlib.util.spec_from_file_location("course_cli", ROOT / "course.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lab_passes_allow_root_only_as_root(monkeypatch):
    course = _course_module()
    monkeypatch.setattr(course.os, "geteuid", lambda: 0, raising=False)
    assert course.lab_arguments(["--port", "8890"]) == ["--port", "8890", "--allow-root"]
    assert course.lab_arguments(["--allow-root"]) == ["--allow-root"]  # not twice
    monkeypatch.setattr(course.os, "geteuid", lambda: 1000, raising=False)
    assert course.lab_arguments(["--port", "8890"]) == ["--port", "8890"]
    monkeypatch.delattr(course.os, "geteuid", raising=False)  # Windows has no geteuid
    assert course.lab_arguments([]) == []
