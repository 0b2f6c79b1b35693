"""tools/ as a package: languages declared once, --lang both accepted, both ways of running a tool."""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from pathlib import Path

import pytest

import posviz
from tools import editions, languages, slides, website

ROOT = Path(__file__).resolve().parent.parent
TOOLS = sorted(p for p in (ROOT / "tools").glob("*.py") if p.name != "__init__.py")


def _parse_lang(main, argv):
    """The ``--lang`` value a tool's ``main`` would use (its parser, stopped before any work)."""
    seen = {}

    def stop(self, args=None, namespace=None):
        seen["args"] = original(self, args, namespace)
        raise SystemExit(0)

    original = argparse.ArgumentParser.parse_args
    argparse.ArgumentParser.parse_args = stop
    try:
        with pytest.raises(SystemExit):
            main(argv)
    finally:
        argparse.ArgumentParser.parse_args = original
    return seen["args"].lang


@pytest.mark.parametrize("main", [website.main, slides.main])
def test_site_and_decks_accept_every_edition_by_name(main):
    assert _parse_lang(main, ["--lang", "both"]) == ("both",)
    assert _parse_lang(main, ["--lang", "both,ko"]) == ("both", "ko")
    assert _parse_lang(main, []) == languages.EDITIONS


def test_one_language_editions_refuse_both():
    assert _parse_lang(editions.main, []) == ("ko", "en")
    with pytest.raises(argparse.ArgumentTypeError, match="editions are ko, en"):
        languages.parse_languages("both", languages.ONE_LANGUAGE)


def test_languages_are_the_figure_languages_of_posviz():
    assert set(languages.EDITIONS) == set(posviz.style.LANGUAGES)
    assert languages.ONE_LANGUAGE == tuple(e for e in languages.EDITIONS if e != "both")
    assert posviz.t.__kwdefaults__["sep"] == languages.SEP


def test_not_prose_keeps_the_text_between_a_less_than_and_a_greater_than():
    prose = "거리 i < j 인 쌍과 j > k 인 쌍 <b>굵게</b> `code` $x < y$ [링크](http://a.b/c)"
    kept = languages.NOT_PROSE.sub(" ", prose)
    assert "인 쌍과" in kept and "굵게" in kept
    assert "<b>" not in kept and "code" not in kept and "x < y" not in kept and "http" not in kept


def test_no_tool_edits_sys_path():
    for path in TOOLS:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("sys.path.insert", "sys.path.append"):
                raise AssertionError(f"{path.name} line {node.lineno} edits sys.path")


@pytest.mark.parametrize("name", ["website", "build_course"])
def test_a_tool_runs_as_a_script_and_as_a_module(name):
    for command in ([sys.executable, f"tools/{name}.py", "--help"], [sys.executable, "-m", f"tools.{name}", "--help"]):
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (command, done.stderr[-2000:])
        assert "usage:" in done.stdout
