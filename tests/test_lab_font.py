"""JupyterLab started as ``course.py lab`` starts it draws Korean prose with the course's own font.

Starts JupyterLab headless on a free local port (127.0.0.1 only) with the CSS, environment and
arguments that ``course.py`` produces, opens notebook 00 in the system's Chromium, and asks
Chromium which fonts drew a Korean paragraph: the web font NanumGothic, not a system font (on a
machine without a Korean font the system fallback draws boxes). Skips where Chromium, Playwright
or JupyterLab is missing (``tests/browser.py``).
"""

import importlib.util
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from browser import CHROMIUM_ARGS, _unavailable, chromium_path, platform_fonts, screenshot

ROOT = Path(__file__).resolve().parent.parent


def _course():
    spec = importlib.util.spec_from_file_location("course_cli", ROOT / "course.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_jupyterlab_draws_korean_prose_with_the_course_font(tmp_path):
    pytest.importorskip("jupyterlab", reason="pip install '.[course]'")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed (pip install playwright; no browser download needed)")
    if chromium_path() is None:
        _unavailable("no Chromium found (Debian/Ubuntu: apt-get install chromium)")
    course = _course()
    lab_dir = tmp_path / "lab"
    course.write_lab_font_css(lab_dir, sys.executable)
    env = course.lab_environment(lab_dir, dict(os.environ), tmp_path / "home")
    port, token = _free_port(), secrets.token_hex(8)
    args = course.lab_arguments(["--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
                                 f"--IdentityProvider.token={token}"])
    log = (tmp_path / "lab.log").open("w")
    lab = subprocess.Popen([sys.executable, "-m", "jupyter", "lab", str(ROOT / "notebooks"), *args],
                           env=env, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not start:\n" + (tmp_path / "lab.log").read_text())
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                refused = []
                page.on("console", lambda m: refused.append(m.text) if "font" in m.text.lower() else None)
                page.goto(f"{base}/lab/tree/00_introduction.ipynb?token={token}")
                page.wait_for_selector(".jp-RenderedMarkdown li", timeout=120_000)
                page.evaluate("""() => {
                    const items = Array.from(document.querySelectorAll('.jp-RenderedMarkdown li'));
                    items.find(e => /[\\uac00-\\ud7a3]/.test(e.textContent)).id = 'korean-probe';
                }""")
                page.wait_for_function("document.fonts.status === 'loaded'", timeout=60_000)
                fonts = platform_fonts(page, "#korean-probe")
                screenshot(page, "jupyterlab_00_ko")
            finally:
                browser.close()
    finally:
        lab.terminate()
        lab.wait(timeout=30)
        log.close()
    assert not refused, refused
    korean = [f for f in fonts if f["familyName"] == "NanumGothic"]
    assert korean and all(f["isCustomFont"] for f in korean), fonts
