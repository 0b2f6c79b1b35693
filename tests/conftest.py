
import matplotlib

matplotlib.use("Agg")
import torch

# Tiny models: one thread is as fast as several, and test workers running side by side
# (pytest -n auto) must not fight over the cores (see posviz.setup's torch_threads).
torch.set_num_threads(1)


def pytest_collection_modifyitems(config, items):
    """A raised POSVIZ_CELL_TIMEOUT raises every test's time limit too (tools.nbrun.per_test_limit),
    unless ``--timeout`` or ``PYTEST_TIMEOUT`` sets the limit explicitly."""
    import os

    import pytest

    from tools.nbrun import per_test_limit

    configured = float(config.getini("timeout") or 0)
    if config.getoption("timeout", None) is not None or os.environ.get("PYTEST_TIMEOUT") or not configured:
        return
    limit = per_test_limit(configured)
    if limit != configured:
        for item in items:
            item.add_marker(pytest.mark.timeout(limit))
