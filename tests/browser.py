"""Headless Chromium for the tests: open built pages, ask which fonts drew a node, take screenshots.

    from browser import chromium_page, platform_fonts, screenshot
    with chromium_page() as page:
        page.goto(path.as_uri())
        fonts = platform_fonts(page, "p:lang(ko)")   # [{"familyName": ..., "isCustomFont": ..., "glyphCount": ...}]
        screenshot(page, "site_ko_00")               # build/screenshots/site_ko_00.png

Drives the system's Chromium (Debian package ``chromium``; ``.ci/run`` installs it when missing)
with Playwright for Python; no browser is downloaded. Where Chromium or Playwright is missing the
test is skipped with a message saying what to install, unless ``POSVIZ_BROWSER_TESTS=required``
(set by ``.ci/run``), where it fails instead.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "build" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox cannot start
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str | None:
    """The system Chromium executable, or None."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None


def _unavailable(reason: str) -> None:
    if os.environ.get("POSVIZ_BROWSER_TESTS") == "required":
        pytest.fail(f"browser test required but {reason}")
    pytest.skip(reason)


@contextmanager
def chromium_page(width: int = 1280, height: int = 800) -> Iterator:
    """A Playwright page in a fresh headless Chromium with a ``width`` x ``height`` viewport (CSS px).

    Requests to any host other than ``file://`` are aborted and recorded in ``page.blocked``
    (a list of URLs), so a test can assert that a page loads nothing from the network.
    """
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed (pip install playwright; no browser download needed)")
    executable = chromium_path()
    if executable is None:
        _unavailable("no Chromium found (Debian/Ubuntu: apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.blocked = []

            def _route(route):
                if route.request.url.startswith(("file:", "data:", "blob:")):
                    route.continue_()
                else:
                    page.blocked.append(route.request.url)
                    route.abort()

            page.route("**/*", _route)
            yield page
        finally:
            browser.close()


def platform_fonts(page, selector: str) -> list[dict]:
    """The fonts Chromium used to draw the text of the first node matching ``selector``.

    Asks the DevTools protocol (``CSS.getPlatformFontsForNode``); each entry has ``familyName``
    (the font file's own family name), ``isCustomFont`` (True for a web font) and
    ``glyphCount``. Raises ``LookupError`` if nothing matches ``selector``.
    """
    page.wait_for_load_state("load")
    page.evaluate("document.fonts.ready.then(() => true)")
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
        node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
        if not node:
            raise LookupError(f"no element matches {selector!r}")
        return cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    finally:
        cdp.detach()


def screenshot(page, name: str, *, full_page: bool = False) -> Path:
    """Save a PNG of ``page`` as ``build/screenshots/<name>.png`` (for people to look at); returns it."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
