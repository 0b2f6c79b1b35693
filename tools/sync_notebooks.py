"""Bring every course notebook in step with tools/nbtemplate.py.

    python tools/sync_notebooks.py            # rewrite notebooks/NN_*.ipynb where needed
    python tools/sync_notebooks.py --check    # change nothing; exit 1 if a notebook is out of step
    python tools/sync_notebooks.py FILE ...   # only these notebooks

For each notebook: the title cell (title, Colab badge, prerequisites and time, in both
languages) and the last navigation cell ("← previous · next →" over the notebooks that exist)
are written from the course table in tools/course_table.py, the Colab badge points at the
notebook's own path in the repository named in pyproject.toml, the first code cell starts
with the current setup code,
and every cell carries reveal.js slide metadata derived from the notebook's structure (see
``nbtemplate.slide_types``), so that ``python tools/slides.py`` gives lecture slides with no
hand editing. Running it twice changes nothing the second time.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

if __package__:  # python -m tools.NAME, or imported as tools.NAME
    from . import course_table, nbtemplate
    from .nbrun import notebook_paths
else:  # python tools/NAME.py: tools/ itself is on sys.path
    import course_table
    import nbtemplate
    from nbrun import notebook_paths


def sync_file(path: Path, *, write: bool = True) -> list[str]:
    """Sync one notebook file; returns what changed (or would change, with ``write=False``)."""
    nb = nbformat.read(path, as_version=4)
    changes = nbtemplate.sync_cells(nb.cells, path.name)
    if changes and write:
        nbformat.write(nb, path)
    return changes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "notebooks", nargs="*", type=Path, help="notebook files (default: notebooks/NN_*.ipynb)"
    )
    parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if a notebook is out of step"
    )
    args = parser.parse_args(argv)
    paths = args.notebooks or notebook_paths()
    stale = 0
    for path in paths:
        if path.name not in course_table.BY_FILE:
            print(f"{path.name}: not in the course table (tools/course_table.py), so its title and navigation are left as they are")
        changes = sync_file(path, write=not args.check)
        if changes:
            stale += 1
            verb = "out of step" if args.check else "updated"
            print(f"{path.name}: {verb} ({', '.join(changes)})")
    if args.check and stale:
        print("run: python tools/sync_notebooks.py")
        return 1
    if not stale:
        print(f"{len(paths)} notebook(s) in step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
