"""Execute every course notebook and write its page of the offline website (bilingual edition).

    python tools/build_course.py [NAME_FILTER] [--jobs N]

The same pipeline as ``tools/website.py --lang both``: the notebooks are executed in parallel
(one worker process per core, each kernel on one torch thread) into
build/executed-editions/both/, and rendered into build/site/both/<notebook>.html (offline
pages: MathML formulas, embedded figures, the Korean web font, links only to pages that exist)
with build/site/index.html. ``run`` always executes the notebooks afresh (that is its point: the
course runs here); ``course.py site`` and ``slides`` then reuse these executions while the
notebook, posviz/ and data/ are unchanged. Prints each notebook's wall time and exits non-zero
if a notebook fails or prints a warning.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__:  # python -m tools.NAME, or imported as tools.NAME
    from . import website
else:  # python tools/NAME.py: tools/ itself is on sys.path
    import website


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pattern", nargs="?", default="", help="only notebooks whose file name contains this")
    parser.add_argument("--jobs", type=int, default=None, help="worker processes (default: one per core)")
    parser.add_argument("--out", type=Path, default=website.SITE, help="site folder (default build/site)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    executed, failed = website.execute_editions(("both",), args.pattern, force=True, jobs=args.jobs)
    pages = website.render_pages(executed, args.out)
    print(f"\n{len(pages) - 1} notebook(s) executed and rendered in {time.perf_counter() - start:.0f} s")
    print(f"Executed notebooks: {website.EXECUTED / 'both'}")
    print(f"HTML pages:         {args.out / 'both'}  (open {args.out / 'index.html'})")
    if failed or website.MathMLRenderer.problems:
        print(f"{len(failed) + len(website.MathMLRenderer.problems)} problem(s), see above")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
