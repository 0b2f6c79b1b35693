"""Execute every course notebook and write readable output under build/.

    python tools/build_course.py [NAME_FILTER]

Writes build/executed/<notebook>.ipynb and build/html/<notebook>.html, prints each
notebook's wall time, and exits non-zero if a notebook fails or prints a warning.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from nbrun import ROOT, execute, notebook_paths

BUILD = ROOT / "build"


def main() -> int:
    pattern = sys.argv[1] if len(sys.argv) > 1 else ""
    (BUILD / "executed").mkdir(parents=True, exist_ok=True)
    (BUILD / "html").mkdir(parents=True, exist_ok=True)
    exporter = HTMLExporter()
    failed = 0
    for path in notebook_paths():
        if pattern not in path.name:
            continue
        print(f"running {path.name} ...", flush=True)
        try:
            run = execute(path)
        except Exception as error:  # report and continue with the next notebook
            print(f"  FAILED: {type(error).__name__}: {str(error)[-2000:]}")
            failed += 1
            continue
        nbformat.write(run.notebook, BUILD / "executed" / path.name)
        html, _ = exporter.from_notebook_node(run.notebook)
        (BUILD / "html" / f"{path.stem}.html").write_text(html, encoding="utf-8")
        print(f"  done in {run.seconds:.1f} s")
        for problem in run.problems:
            print(f"  problem: {problem}")
        failed += bool(run.problems)
    print(f"\nExecuted notebooks: {BUILD / 'executed'}\nHTML pages:         {BUILD / 'html'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
