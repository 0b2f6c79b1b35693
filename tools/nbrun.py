"""Execute a course notebook in a fresh kernel and report what a reader should never see.

Used by ``tools/build_course.py`` (``python3 course.py run``) and by ``tests/test_notebooks.py``,
so that the course a learner builds and the course the tests check run the same way.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
CELL_TIMEOUT = 180  # seconds, per cell
_WARNING = re.compile(r"\b\w*Warning\b|findfont:|Glyph \d+ .*missing")
# A cell ending in a plotting call shows e.g. "<Axes: ...>" or "Text(0.5, 1.0, ...)": noise for a reader.
_STRAY_REPR = re.compile(r"^(<(Axes|matplotlib|Figure)\b|Text\(|\[<matplotlib)")


@dataclass
class Run:
    """The executed notebook, its wall time in seconds, and problems found in its outputs."""

    notebook: nbformat.NotebookNode
    seconds: float
    problems: list[str] = field(default_factory=list)


def notebook_paths() -> list[Path]:
    """The course notebooks, in course order."""
    return sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb"))  # 05_rope sorts before 05b_context_extension


def execute(path: Path | str, *, timeout: int = CELL_TIMEOUT, notebook=None) -> Run:
    """Run every cell of ``path`` top to bottom in a fresh kernel started in ``notebooks/``.

    ``notebook`` may be given to run an already-loaded (e.g. one-language) version of it.
    A cell error raises ``nbclient.exceptions.CellExecutionError``. Any output on stderr and
    any text that looks like a warning is listed in ``Run.problems``.
    """
    path = Path(path)
    nb = notebook if notebook is not None else nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        # The kernel's own log (not the notebook's output) warns that a local kernel talks over
        # TCP without encryption; that is how Jupyter always runs locally, so keep it quiet.
        extra_arguments=["--IPKernelApp.log_level=ERROR"],
    )
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    problems = []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            text = ""
            if output.get("output_type") == "stream":
                text = output.get("text", "")
                if output.get("name") == "stderr" and text.strip():
                    problems.append(f"cell {index}: stderr: {text.strip()[:300]}")
                    continue
            elif "data" in output:
                text = output["data"].get("text/plain", "")
                if output.get("output_type") == "execute_result" and _STRAY_REPR.match(text):
                    problems.append(f"cell {index}: stray object repr (end the line with ';'): {text[:80]}")
            if _WARNING.search(text):
                problems.append(f"cell {index}: warning-like output: {text.strip()[:300]}")
    return Run(nb, seconds, problems)
