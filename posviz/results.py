"""Stored experiment results: provenance, statistics over seeds, result files, and the seed band.

Every experiment of the course (notebook 05b's :mod:`posviz.extension`, notebook 06's
:mod:`posviz.showdown`, notebook 08's vision experiment and the scripts in ``scripts/``) writes
one JSON file under ``data/results/`` that carries :func:`provenance` (library versions, date,
platform, torch threads, wall and CPU time), and reads it back with :func:`load_results`.

Statistics follow one convention everywhere: :func:`seed_stats` summarises one cell over seeds
(mean, sample standard deviation, min, max); :func:`paired_stats` summarises the per-seed
*differences* of two methods that started from the same weights per seed, which is what an
ordering claim rests on (a paired design: the spread between seeds cancels).
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from ._version import __version__
from .data import data_dir

__all__ = [
    "load_results",
    "paired_stats",
    "part_info",
    "plot_band",
    "provenance",
    "require_same_config",
    "results_dir",
    "save_results",
    "seed_stats",
    "versions",
]

#: Provenance keys a part keeps when result files are merged.
PROVENANCE_KEYS = ("date", "versions", "platform", "torch_threads", "seconds", "cpu_seconds")


def versions(*extra: str) -> dict[str, str]:
    """Versions of Python, torch, numpy, matplotlib and posviz, plus each installed module named in
    ``extra`` (e.g. ``"transformers"``; a module that is not installed is left out)."""
    import importlib

    import matplotlib
    import torch

    out = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "matplotlib": matplotlib.__version__,
        "posviz": __version__,
    }
    for name in extra:
        try:
            out[name] = importlib.import_module(name).__version__
        except ImportError:
            continue
    return out


def provenance(start: float | None = None, cpu_start: float | None = None, *, extra: Sequence[str] = ()) -> dict:
    """What every stored result carries.

    Args:
        start, cpu_start: ``time.perf_counter()`` and ``time.process_time()`` taken when the work
            began; when given, ``seconds`` (wall) and ``cpu_seconds`` (CPU time of this process)
            since then are added.
        extra: more module names for :func:`versions`.

    Returns:
        ``{"versions", "date" (ISO-8601, UTC, seconds), "platform", "torch_threads"[, "seconds",
        "cpu_seconds"]}``.
    """
    import torch

    out = {
        "versions": versions(*extra),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "torch_threads": torch.get_num_threads(),
    }
    if start is not None:
        out["seconds"] = time.perf_counter() - start
    if cpu_start is not None:
        out["cpu_seconds"] = time.process_time() - cpu_start
    return out


def _finite_array(name: str, values: Iterable[float]) -> np.ndarray:
    try:
        arr = np.asarray(list(values), dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be a sequence of numbers: {error}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of numbers, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} holds a non-finite value: {arr.tolist()}")
    return arr


def seed_stats(values: Sequence[float]) -> dict[str, float]:
    """Mean, sample standard deviation (``ddof=1``; 0 for one value), min, max and count ``n`` of
    one cell's values over seeds.

    Raises:
        ValueError: if ``values`` is empty or holds a non-finite number.
    """
    arr = _finite_array("values", values)
    return {
        "mean": float(arr.mean()),
        "std": float(arr.std(ddof=1)) if len(arr) > 1 else 0.0,
        "min": float(arr.min()),
        "max": float(arr.max()),
        "n": len(arr),
    }


def paired_stats(a: Sequence[float], b: Sequence[float]) -> dict[str, float]:
    """Per-seed differences ``a[i] − b[i]`` of two methods measured on the same seeds (same order).

    When both methods start from the same initial weights (and data) per seed, the difference
    within a seed is what separates them: ``a`` is below ``b`` on every seed exactly when
    ``max < 0``. That is the test the course uses before it states an ordering.

    Args:
        a, b: one value per seed each, in the same seed order.

    Returns:
        ``{"mean", "min", "max", "n"}`` of the differences (``n`` an int).

    Raises:
        ValueError: if the lengths differ, either is empty, or a value is not finite.
    """
    x, y = _finite_array("a", a), _finite_array("b", b)
    if len(x) != len(y):
        raise ValueError(f"a and b need one value per seed each, in the same order; got {len(x)} and {len(y)}")
    diff = x - y
    return {"mean": float(diff.mean()), "min": float(diff.min()), "max": float(diff.max()), "n": len(diff)}


def results_dir() -> Path:
    """``data/results/`` (created if missing)."""
    path = data_dir() / "results"
    path.mkdir(exist_ok=True)
    return path


def save_results(results: dict, path: str | Path) -> Path:
    """Write ``results`` as indented UTF-8 JSON (a ``"models"`` entry, if any, is not saved)."""
    path = Path(path)
    payload = {k: v for k, v in results.items() if k != "models"}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load_results(path: str | Path, *, required: Sequence[str] = ("config", "runs")) -> dict:
    """Read a results file written by :func:`save_results`.

    Raises:
        FileNotFoundError: if ``path`` does not exist.
        ValueError: if it is not a JSON object with every key in ``required``.
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    missing = [key for key in required if not isinstance(data, dict) or key not in data]
    if missing:
        raise ValueError(f"{path} is not a results file of this kind (missing {missing})")
    return data


def require_same_config(parts: Sequence[dict], *, ignore: Sequence[str], what: str = "results") -> None:
    """Check that every part's ``config`` agrees with the first one's except for the keys in ``ignore``.

    Raises:
        ValueError: if ``parts`` is empty or two configurations differ.
    """
    if not parts:
        raise ValueError(f"merging {what} needs at least one results dict")

    def core(part: dict) -> dict:
        return {k: v for k, v in part["config"].items() if k not in ignore}

    for part in parts[1:]:
        if core(part) != core(parts[0]):
            name = part["config"].get("name", "?")
            raise ValueError(f"cannot merge {name!r}: its configuration differs from the first part (besides {list(ignore)})")


def part_info(part: dict, *keys: str) -> dict:
    """What a merged file keeps of one part: its provenance (:data:`PROVENANCE_KEYS`) and ``keys``
    of its ``config``."""
    return {k: part.get(k) for k in PROVENANCE_KEYS} | {k: part["config"].get(k) for k in keys}


def plot_band(
    ax,
    x: Sequence[float],
    values: Sequence[Sequence[float]],
    *,
    color: str | None = None,
    label: str | None = None,
    linestyle: str = "-",
    marker: str | None = None,
    alpha: float = 0.15,
):
    """Draw the mean over seeds as a line and the min–max over seeds as a shaded band.

    Args:
        ax: matplotlib axes.
        x: the ``n_points`` x-values.
        values: array-like ``(n_seeds, n_points)``, one row per seed.
        color, label, linestyle, marker: of the mean line (the band takes the same colour).
        alpha: the band's opacity.

    Returns:
        the mean line (a ``Line2D``).

    Raises:
        ValueError: if ``values`` is not 2-D with ``len(x)`` columns.
    """
    arr = np.asarray(values, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != len(x) or arr.shape[0] == 0:
        raise ValueError(f"values must have shape (n_seeds, {len(x)}), got {arr.shape}")
    (line,) = ax.plot(x, arr.mean(0), color=color, label=label, linestyle=linestyle, marker=marker)
    ax.fill_between(x, arr.min(0), arr.max(0), color=line.get_color(), alpha=alpha, linewidth=0)
    return line

