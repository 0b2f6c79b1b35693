"""Run every notebook top to bottom in a fresh kernel; fail on an error or on any warning."""

import pytest
from nbrun import execute, notebook_paths


@pytest.mark.parametrize("path", notebook_paths(), ids=lambda p: p.stem)
def test_notebook_runs_clean(path):
    run = execute(path)
    slowest = max(run.cell_seconds().items(), key=lambda item: item[1])
    print(f"{path.name}: {run.seconds:.1f} s; slowest cell {slowest[0]}: {slowest[1]:.1f} s")
    assert not run.problems, "\n".join(run.problems)
