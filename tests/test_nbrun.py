"""The notebook runner (tools/nbrun.py): what it reports, and that a widget cell never stalls it."""

import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbclient.exceptions import CellTimeoutError
from nbformat.v4 import new_code_cell, new_notebook

from tools.nbrun import NOTEBOOKS, _seconds, execute, per_test_limit

pytest.importorskip("ipywidgets")


def _three_cells(widget_output: str) -> nbformat.NotebookNode:
    """Setup, an ``interact`` cell whose function prints ``widget_output``, and a next cell."""
    return new_notebook(
        cells=[
            new_code_cell("import ipywidgets as widgets"),
            new_code_cell(
                f"def show(x=1):\n    print({widget_output})\n\n"
                "widgets.interact(show, x=widgets.IntSlider(value=1, min=0, max=5));"
            ),
            new_code_cell("print('next')"),
        ]
    )


def test_cell_after_an_interact_cell_starts_at_once():
    """Regression test for the widget stall (jupyter/nbclient#312, fixed in nbrun._OutputWidget).

    ``interact`` prints into an Output widget; nbclient echoes that output to the kernel on the
    shell socket while it awaits the cell's reply there, and (before the fix) lost the reply's
    wake-up, so the next cell started only when the cell timeout ran out. A 2 MB print makes the
    client busy while the reply arrives, which made the stall happen on every run (8 of 8, gap
    = timeout); with the fix the gap is about 0.2 s. The timeout is 60 s here so that a
    regression fails in a minute, and the bound (20 s) is far from both.
    """
    run = execute(NOTEBOOKS / "widget_stall.ipynb", timeout=60, notebook=_three_cells("'x' * 2_000_000"))
    widget, after = (run.notebook.cells[i].metadata.execution for i in (1, 2))
    gap = _seconds(after["iopub.status.busy"]) - _seconds(widget["shell.execute_reply"])
    assert 0 <= gap < 20, f"the cell after the interact cell started {gap:.1f} s after its reply"
    assert run.notebook.cells[2].outputs[0]["text"] == "next\n"
    # The widget's printout is kept in the notebook's widget state (what a saved notebook shows).
    states = run.notebook.metadata.widgets["application/vnd.jupyter.widget-state+json"]["state"]
    outputs = [s["state"]["outputs"] for s in states.values() if s["model_name"] == "OutputModel"]
    assert outputs and outputs[0][0]["text"] == "x" * 2_000_000 + "\n"


def test_runner_reports_stderr_and_warnings():
    nb = new_notebook(
        cells=[
            new_code_cell("import sys\nprint('oops', file=sys.stderr)"),
            new_code_cell("import warnings\nwarnings.warn('careful', UserWarning)"),
            new_code_cell("print('fine')"),
        ]
    )
    run = execute(NOTEBOOKS / "report.ipynb", notebook=nb)
    problems = run.problems
    assert sorted(run.cell_seconds()) == [0, 1, 2] and all(0 <= s < 10 for s in run.cell_seconds().values())
    assert problems[0] == "cell 0: stderr: oops"
    assert problems[1].startswith("cell 1: stderr:") and "UserWarning: careful" in problems[1]
    assert len(problems) == 2


def test_a_hanging_cell_fails_at_the_timeout():
    nb = new_notebook(cells=[new_code_cell("import time\ntime.sleep(60)")])
    start = time.perf_counter()
    with pytest.raises(CellTimeoutError):
        execute(NOTEBOOKS / "hang.ipynb", timeout=3, notebook=nb)
    assert time.perf_counter() - start < 30


def test_cell_profile_reads_the_kernel_timestamps():
    from nbformat.v4 import new_code_cell, new_notebook

    from tools.nbrun import cell_profile

    cells = [new_code_cell("fast = 1"), new_code_cell("slow = 2\nmore"), new_code_cell("never run")]
    stamps = [("2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.500Z"), ("2026-01-01T00:00:01Z", "2026-01-01T00:00:04.25Z")]
    for cell, (busy, reply) in zip(cells, stamps):
        cell.metadata["execution"] = {"iopub.status.busy": busy, "shell.execute_reply": reply}
    profile = cell_profile(new_notebook(cells=cells), top=5)
    assert [(i, round(s, 2), first) for i, s, first in profile] == [(1, 3.25, "slow = 2"), (0, 0.5, "fast = 1")]


def test_a_raised_cell_timeout_raises_the_per_test_limit():
    assert per_test_limit(600.0, 180) == 600.0  # the default cell timeout leaves pyproject.toml's limit
    assert per_test_limit(600.0, 60) == 600.0  # a lowered one too
    assert per_test_limit(600.0, 300) == 900.0
    assert per_test_limit(600.0, 900) == 2700.0


def test_the_conftest_hook_marks_each_test_with_the_raised_limit(request):
    marker = request.node.get_closest_marker("timeout")
    expected = per_test_limit(float(request.config.getini("timeout")))
    if expected == float(request.config.getini("timeout")):
        assert marker is None
    else:
        assert marker is not None and marker.args == (expected,)


def test_posviz_cell_timeout_alone_raises_the_limit_in_a_pytest_run():
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "POSVIZ_CELL_TIMEOUT": "400"}
    env.pop("PYTEST_TIMEOUT", None)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n0", "-p", "no:cacheprovider",
         "tests/test_nbrun.py::test_the_conftest_hook_marks_each_test_with_the_raised_limit"],
        cwd=root, env=env, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout + run.stderr
