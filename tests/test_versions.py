"""Supported versions: the oldest-versions constraints match pyproject.toml, and docs/setup.md says what was tested."""

import importlib.util
import re
import sys
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


def test_setup_page_states_the_tested_versions():
    setup = (ROOT / "docs" / "setup.md").read_text(encoding="utf-8")
    section = setup.split("## 검증한 버전 · Tested versions", 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| 3.")]
    oldest = [row for row in rows if re.match(r"\| 3\.10(\.\d+)? \|", row)]
    assert oldest, "the tested-versions table needs the oldest-versions row"
    pins = _pins()
    for name in ("numpy", "matplotlib", "torch", "ipywidgets"):
        assert pins[name] in oldest[0], f"the oldest row does not show {name} {pins[name]}"
    assert "python3.10 tools/test_oldest.py" in setup


def _course_module():
    spec = importlib.util.spec_from_file_location("course_cli", ROOT / "course.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lab_passes_allow_root_only_as_root(monkeypatch):
    course = _course_module()
    css = "--LabApp.custom_css=True"
    monkeypatch.setattr(course.os, "geteuid", lambda: 0, raising=False)
    assert course.lab_arguments(["--port", "8890"]) == ["--port", "8890", css, "--allow-root"]
    assert course.lab_arguments(["--allow-root"]) == ["--allow-root", css]  # not twice
    monkeypatch.setattr(course.os, "geteuid", lambda: 1000, raising=False)
    assert course.lab_arguments(["--port", "8890"]) == ["--port", "8890", css]
    monkeypatch.delattr(course.os, "geteuid", raising=False)  # Windows has no geteuid
    assert course.lab_arguments([]) == [css]


def test_cpu_torch_option_installs_the_cpu_build_before_the_course(monkeypatch, tmp_path):
    course = _course_module()
    cpu = "https://download.pytorch.org/whl/cpu"
    assert course.torch_index(["--port", "8890", "--cpu-torch"], {}) == (cpu, ["--port", "8890"])
    assert course.torch_index(["-k", "rope"], {"POSVIZ_TORCH_INDEX": "https://example.org/simple"}) == (
        "https://example.org/simple", ["-k", "rope"])
    assert course.torch_index([], {}) == (None, [])
    assert course.torch_install_arguments("torch==2.13.0", cpu) == ["install", "torch==2.13.0", "--index-url", cpu]
    assert course.torch_install_arguments("torch==2.13.0", None) == ["install", "torch==2.13.0"]
    # the order on a fresh clone: make .venv, torch from the CPU index, then the course
    calls = []
    monkeypatch.setattr(course, "VENV", tmp_path / ".venv")
    monkeypatch.setattr(course.venv, "EnvBuilder", lambda **kw: type("B", (), {"create": lambda self, path: calls.append(("venv",))})())
    monkeypatch.setattr(course, "_venv_python", lambda: tmp_path / ".venv" / "python")
    monkeypatch.setattr(course.subprocess, "run", lambda *a, **kw: type("R", (), {"returncode": 1})())  # no torch yet
    monkeypatch.setattr(course, "_pip", lambda *args: calls.append(args))
    monkeypatch.delenv("POSVIZ_TORCH", raising=False)
    (tmp_path / ".venv").mkdir()
    course.ensure_environment(cpu)
    assert calls[0] == ("venv",)
    assert calls[1] == ("install", "torch==2.13.0", "--index-url", cpu)
    assert calls[2][:2] == ("install", "-e")


def test_lab_draws_korean_with_the_course_font(tmp_path):
    course = _course_module()
    from fontTools.ttLib import TTFont

    css_path = course.write_lab_font_css(tmp_path / "lab", sys.executable)
    css = css_path.read_text(encoding="utf-8")
    assert css_path == tmp_path / "lab" / "custom" / "custom.css"
    assert (css_path.parent / "OFL.txt").read_bytes() == (ROOT / "posviz" / "fonts" / "OFL.txt").read_bytes()
    for name in ("NanumGothic.ttf", "NanumGothicBold.ttf"):
        # the copy keeps every glyph but drops the empty VTT tables that Chromium refuses ("TSI3: zero-length table")
        original, copy = TTFont(ROOT / "posviz" / "fonts" / name), TTFont(css_path.parent / name)
        assert any(t.startswith("TSI") for t in original.keys()) and not any(t.startswith("TSI") for t in copy.keys())
        assert copy.getGlyphOrder() == original.getGlyphOrder() and ord("한") in copy.getBestCmap()
    assert css.count("@font-face") == 2 and 'src: url("NanumGothic.ttf") format("truetype")' in css
    assert "font-weight: 700" in css and 'url("NanumGothicBold.ttf")' in css
    assert "unicode-range: U+1100-11FF, U+3000-303F, U+3130-318F, U+A960-A97F, U+AC00-D7AF, U+D7B0-D7FF, U+FF00-FFEF;" in css
    for variable in ("--jp-content-font-family", "--jp-ui-font-family", "--jp-code-font-family"):
        assert re.search(rf'{variable}: "Course NanumGothic", [^;]+ !important;', css), variable
    # the same family and Korean blocks as the website's web font
    spec = importlib.util.spec_from_file_location("webfont", ROOT / "tools" / "webfont.py")
    webfont = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(webfont)
    assert course.KOREAN_RANGES == webfont.KOREAN_RANGES and course.FONT_FAMILY == webfont.FAMILY
    # JupyterLab serves custom/custom.css from its config folder; the learner's own settings stay put
    home = tmp_path / "home"
    env = course.lab_environment(tmp_path / "lab", {"PATH": "/bin"}, home)
    assert env["JUPYTER_CONFIG_DIR"] == str(tmp_path / "lab")
    assert env["JUPYTER_CONFIG_PATH"] == str(home / ".jupyter")
    assert env["JUPYTERLAB_SETTINGS_DIR"] == str(home / ".jupyter" / "lab" / "user-settings")
    assert env["JUPYTERLAB_WORKSPACES_DIR"] == str(home / ".jupyter" / "lab" / "workspaces")
    assert env["PATH"] == "/bin"
    mine = course.lab_environment(tmp_path / "lab", {"JUPYTER_CONFIG_DIR": "/cfg", "JUPYTERLAB_SETTINGS_DIR": "/s"}, home)
    assert mine["JUPYTER_CONFIG_PATH"] == "/cfg" and mine["JUPYTERLAB_SETTINGS_DIR"] == "/s"
