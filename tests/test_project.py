"""Project hygiene: set-up files agree, CI runs the README's command, notebooks are clean and bilingual."""

import json
import re
from pathlib import Path

import pytest
import yaml

from tools import nbtemplate
from tools.nbrun import notebook_paths

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = notebook_paths()
HANGUL = re.compile(r"[\uac00-\ud7a3]")


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _bounds(requirement: str) -> str:
    return requirement.strip()[len(_name(requirement)) :].replace(" ", "")


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = {_name(r): _bounds(r) for r in project["dependencies"] + project["optional-dependencies"]["course"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    assert "conda-forge" in env["channels"]
    conda = {}
    for dep in env["dependencies"]:
        if isinstance(dep, str) and _name(dep) not in {"python", "pip"}:
            conda[{"pytorch": "torch"}.get(_name(dep), _name(dep))] = _bounds(dep)
    assert conda == wanted
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python="))
    assert re.fullmatch(r"python=3\.1[0-3]", python), "pin the Python minor version"
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "-e ." in pip_section
    assert set(project["optional-dependencies"]["llm"]) <= set(pip_section), "notebook 07's [llm] extra goes under pip:"
    assert set(project["optional-dependencies"]["vision"]) <= set(pip_section), "notebook 08's [vision] extra goes under pip:"
    assert project["requires-python"] == ">=3.10"


def _dead_links(path: Path) -> list[str]:
    """Relative Markdown links of ``path`` (outside code blocks) whose target file is missing."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    targets = [t.split("#", 1)[0] for t in re.findall(r"\]\(([^)\s]+)\)", text)]
    return [t for t in targets if t and not re.match(r"[a-z]+:", t) and not (path.parent / t).exists()]


@pytest.mark.parametrize("path", [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_readme_and_docs_links_resolve(path):
    assert not _dead_links(path)


def test_dead_links_finds_a_missing_target_and_ignores_code_and_urls(tmp_path):
    (tmp_path / "here.md").write_text("x", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[a](here.md) [b](here.md#part) [c](https://example.org/x) [d](gone.md)\n```\n[e](also-gone.md)\n```\n",
        encoding="utf-8",
    )
    assert _dead_links(page) == ["gone.md"]


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 course.py test" in readme and "python3 course.py run" in readme
    commands = [line for line in ci.splitlines() if line.strip() and not line.lstrip().startswith(("#", "set ", "cd "))]
    assert commands[-1] == "python3 course.py test", "CI ends with the README's test command"
    # before it, only the system Chromium for the browser tests is installed (tests/browser.py)
    assert "apt-get install -y --no-install-recommends chromium" in ci
    assert "export POSVIZ_BROWSER_TESTS=required" in ci, "where Chromium is there, browser tests must run"
    assert not [c for c in commands if "pip " in c or "playwright install" in c], "nothing else is installed"


def test_there_are_notebooks():
    names = [p.name for p in NOTEBOOKS]
    assert "00_introduction.ipynb" in names and "03_sinusoidal_encoding.ipynb" in names


def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _tags(cell):
    return set(cell.get("metadata", {}).get("tags", []))


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_without_outputs(path):
    dirty = [i for i, c in enumerate(_cells(path)) if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count"))]
    assert not dirty, f"cells {dirty} hold outputs: run nbstripout (see README)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_korean_cell_has_an_english_twin(path):
    cells = _cells(path)
    for i, cell in enumerate(cells):
        tags = _tags(cell)
        if "lang-ko" in tags:
            assert cell["cell_type"] == "markdown"
            assert HANGUL.search(_source(cell)), f"cell {i} is tagged lang-ko but has no Korean"
            assert i + 1 < len(cells) and "lang-en" in _tags(cells[i + 1]), f"cell {i} (ko) is not followed by its lang-en twin"
            assert not HANGUL.search(_source(cells[i + 1])), f"cell {i + 1} is tagged lang-en but holds Korean"
        if "lang-en" in tags:
            assert i > 0 and "lang-ko" in _tags(cells[i - 1]), f"cell {i} (en) has no lang-ko twin before it"
    assert sum("lang-ko" in _tags(c) for c in cells) >= 5


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_badge_and_setup_cell(path):
    cells = _cells(path)
    assert nbtemplate.colab_url(path.name) in _source(cells[0]), "first cell needs this notebook's Colab badge"
    setup = [c for c in cells if c["cell_type"] == "code"][0]
    assert _source(setup).startswith(nbtemplate.setup_code(lang="both")), "first code cell must be the setup cell (tools/nbtemplate.py)"


def test_ruff_finds_nothing():
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
