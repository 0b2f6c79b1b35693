"""Export every course notebook as reveal.js slides, ready to present.

    python tools/slides.py                          # build/slides/{both,ko,en}/NN_name.slides.html
    python tools/slides.py --lang ko 05             # Korean slides of notebooks matching "05"
    python tools/slides.py --reveal-dir DIR         # offline: copy a local reveal.js 4 into build/slides/

The slides come from the executed editions that tools/website.py keeps in
build/executed-editions/ (notebooks not yet executed there are executed first), cut by the
slide metadata that tools/sync_notebooks.py sets on every cell: each ``##`` section is a
slide, each idea (prose pair, code cell with its figure) a sub-slide below it (press ↓ or
space), and in the bilingual deck the English text appears as a fragment under the Korean.
Press ``s`` for the speaker view and ``?`` for the keys.

Where reveal.js comes from: the pages load ``<prefix>/dist/reveal.js``, its CSS and the notes
plugin. By default the prefix is nbconvert's, a public CDN (unpkg), so the slides need the
network. To present offline, fetch reveal.js 4 once — e.g. ``npm pack reveal.js@4`` and
``tar xzf reveal.js-4.*.tgz`` give a ``package/`` folder, or unzip a release from the
reveal.js site — and pass that folder with ``--reveal-dir``: it is copied to
build/slides/reveal.js/ and the slides load it from there, so build/slides/ works anywhere
without a network. ``--reveal-prefix`` sets any other URL or path. Math is MathML made at
build time and nothing else is fetched.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import editions
import website
from nbrun import ROOT

SLIDES = ROOT / "build" / "slides"
CDN_PREFIX = "https://unpkg.com/reveal.js@4.0.2"  # nbconvert's own default


def export(executed: Path, lang: str, target: Path, reveal_prefix: str = CDN_PREFIX) -> Path:
    """Write the slides of one executed notebook (of edition ``lang``) to ``target``."""
    nb = website.for_static_page(nbformat.read(executed, as_version=4), lang, link_suffix=".slides.html")
    exporter = website.CourseSlidesExporter(
        reveal_url_prefix=reveal_prefix,
        reveal_scroll=True,
        reveal_width="1280",
        reveal_height="720",
        reveal_number="c/t",
    )
    body, _ = exporter.from_notebook_node(
        nb,
        resources={"metadata": {"name": nb.metadata["title"]}, "figure_alt": website.LABELS[lang]["figure"]},
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(body, encoding="utf-8")
    return target


def copy_reveal(reveal_dir: Path, out: Path = SLIDES) -> str:
    """Copy reveal.js's ``dist/`` and ``plugin/`` from ``reveal_dir`` to ``out/reveal.js``;
    returns the prefix the slides in ``out/<lang>/`` use to load it."""
    if not (reveal_dir / "dist" / "reveal.js").is_file() or not (reveal_dir / "plugin" / "notes").is_dir():
        raise SystemExit(f"{reveal_dir} is not a reveal.js 4 folder (no dist/reveal.js or plugin/notes/)")
    for part in ("dist", "plugin"):
        shutil.copytree(reveal_dir / part, out / "reveal.js" / part, dirs_exist_ok=True)
    license_file = reveal_dir / "LICENSE"
    if license_file.is_file():
        shutil.copy(license_file, out / "reveal.js" / "LICENSE")
    return "../reveal.js"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pattern", nargs="?", default="", help="only notebooks whose file name contains this")
    parser.add_argument(
        "--lang", type=editions.parse_languages, default=website.EDITIONS, help="comma-separated editions"
    )
    parser.add_argument(
        "--reveal-dir", type=Path, help="a local reveal.js 4 folder to copy next to the slides"
    )
    parser.add_argument(
        "--reveal-prefix", default=None, help=f"URL or path of reveal.js (default {CDN_PREFIX})"
    )
    parser.add_argument("--force", action="store_true", help="execute the notebooks again")
    args = parser.parse_args(argv)
    prefix = args.reveal_prefix or CDN_PREFIX
    if args.reveal_dir:
        prefix = copy_reveal(args.reveal_dir)
    executed, failed = website.execute_editions(args.lang, args.pattern, force=args.force)
    count = 0
    for lang, paths in executed.items():
        for path in paths:
            export(path, lang, SLIDES / lang / f"{path.stem}.slides.html", prefix)
            count += 1
    print(f"\n{count} slide deck(s) in {SLIDES} (reveal.js from {prefix})")
    if prefix == CDN_PREFIX:
        print(
            "these load reveal.js from the network; for offline slides see --reveal-dir in this script's help"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
