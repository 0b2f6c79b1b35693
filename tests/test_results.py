"""posviz.results: seed statistics, paired differences, provenance, result files, the seed band."""

from __future__ import annotations

import json
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

import posviz
from posviz import results


def test_seed_stats_values():
    stats = results.seed_stats([1.0, 2.0, 4.0])
    assert stats == {"mean": pytest.approx(7 / 3), "std": pytest.approx(math.sqrt(7 / 3)), "min": 1.0, "max": 4.0, "n": 3}
    assert results.seed_stats([5.0])["std"] == 0.0
    with pytest.raises(ValueError, match="non-empty"):
        results.seed_stats([])
    with pytest.raises(ValueError, match="non-finite"):
        results.seed_stats([1.0, float("nan")])


def test_paired_stats_uses_within_seed_differences():
    # Seed spread is large (1 … 3) but b is above a by 0.1 … 0.3 on every seed: a paired design separates them.
    a, b = [1.0, 2.0, 3.0], [1.1, 2.3, 3.2]
    stats = posviz.paired_stats(a, b)
    assert stats["n"] == 3 and isinstance(stats["n"], int)
    assert stats["mean"] == pytest.approx(-0.2)
    assert stats["min"] == pytest.approx(-0.3) and stats["max"] == pytest.approx(-0.1)
    assert posviz.paired_stats(b, a)["min"] == pytest.approx(0.1)


@pytest.mark.parametrize(
    "a, b, message",
    [([1.0, 2.0], [1.0], "same order"), ([], [], "non-empty"), ([1.0, math.inf], [1.0, 2.0], "non-finite"),
     ([1.0, 2.0], [1.0, float("nan")], "non-finite"), (["x"], [1.0], "numbers")],
)
def test_paired_stats_errors(a, b, message):
    with pytest.raises(ValueError, match=message):
        posviz.paired_stats(a, b)


def test_provenance_records_versions_threads_and_times():
    record = posviz.provenance(0.0, 0.0, extra=("not_a_module_here",))
    assert record["versions"]["torch"] == torch.__version__ and record["versions"]["posviz"] == posviz.__version__
    assert "not_a_module_here" not in record["versions"]
    assert record["torch_threads"] == torch.get_num_threads()
    assert record["date"].endswith("+00:00") and record["seconds"] > 0 and record["cpu_seconds"] > 0
    assert "seconds" not in results.provenance()


def test_save_load_and_required_keys(tmp_path):
    path = results.save_results({"config": {"name": "x"}, "runs": [1], "models": object()}, tmp_path / "r.json")
    assert json.loads(path.read_text(encoding="utf-8")) == {"config": {"name": "x"}, "runs": [1]}
    assert results.load_results(path)["runs"] == [1]
    with pytest.raises(ValueError, match="missing"):
        results.load_results(path, required=("config", "base"))


def test_require_same_config():
    a, b = {"config": {"name": "a", "seeds": [0], "lr": 1}}, {"config": {"name": "b", "seeds": [1], "lr": 1}}
    results.require_same_config([a, b], ignore=("name", "seeds"))
    with pytest.raises(ValueError, match="differs"):
        results.require_same_config([a, {"config": {**b["config"], "lr": 2}}], ignore=("name", "seeds"))
    with pytest.raises(ValueError, match="at least one"):
        results.require_same_config([], ignore=())


def test_plot_band_draws_mean_and_min_max():
    fig, ax = plt.subplots()
    line = results.plot_band(ax, [1, 2, 4], [[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]], color="#123456", label="m")
    np.testing.assert_allclose(line.get_ydata(), [2.0, 3.0, 4.0])
    band = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert band.min() == 1.0 and band.max() == 5.0
    with pytest.raises(ValueError, match="shape"):
        results.plot_band(ax, [1, 2], [[1.0, 2.0, 3.0]])
    plt.close(fig)
