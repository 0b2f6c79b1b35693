"""The showdown (notebook 06): seven position methods trained the same way, measured short to long.

One tiny causal :class:`~posviz.models.TinyTransformer` per (task, method, seed); the only thing
that changes between runs is ``position``. Each model is trained at one length and evaluated at
multiples of it (1×, 2×, 4×, 8×) and at the training length with every position shifted.

Tasks:

* ``"copy"``: :class:`~posviz.tasks.OffsetCopyTask` (output the token ``offset`` steps back), scored
  by per-token accuracy and exact match (every scored token of a sequence right).
* ``"charlm"``: :class:`~posviz.tasks.CharLMTask` on the Book of Genesis (King James Version,
  public domain, ``data/kjv_genesis.txt``), scored by per-character perplexity on a held-out
  last part of the text.

Run the full configuration from the repository root (writes ``data/results/<name>.json`` with
the configuration, seeds, library versions and the date)::

    python -m posviz.showdown --preset full

Sources: Press et al. 2022, "Train Short, Test Long", https://arxiv.org/abs/2108.12409 (the
protocol: train at one length, evaluate longer); Kazemnejad et al. 2023, "The Impact of
Positional Encoding on Length Generalization in Transformers", https://arxiv.org/abs/2305.19466.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import torch

from ._checks import check_choice, check_int
from .methods import BUILTIN_METHODS, POSITION_METHODS, method_color, method_label
from .models import TinyTransformer
from .results import (
    load_results,
    part_info,
    plot_band,
    provenance,
    require_same_config,
    results_dir,
    save_results,
    seed_stats,
)
from .tasks import CORPUS_FILE, TASK_NAMES, Task, TaskSpec, load_corpus, make_tasks
from .training import evaluate, train

__all__ = [
    "CORPUS_FILE",
    "FULL",
    "METHODS",
    "METHOD_COLORS",
    "SMALL",
    "ShowdownConfig",
    "TaskSpec",
    "CHECK_SEED",
    "LM_FIT_LOSS",
    "build_model",
    "fit_check",
    "fit_counts",
    "load_corpus",
    "load_results",
    "make_tasks",
    "merge_results",
    "method_label",
    "plot_metric_vs_length",
    "results_dir",
    "run_one",
    "run_showdown",
    "save_results",
    "summarize",
]

#: The seven contenders, in the order the course introduces them (the registry's built-in methods).
METHODS: tuple[str, ...] = BUILTIN_METHODS

#: The full configuration's language-model fit criterion: loss <= 1.5 nats (perplexity <= 4.48)
#: on training-text windows (the copy task's is token accuracy >= 0.95).
LM_FIT_LOSS = 1.5

#: Seed of the fit-check sequences (drawn from the training task; the evaluation uses its own seed).
CHECK_SEED = 2024

#: One colour per method, the same in every figure (from each method's registration).
METHOD_COLORS: dict[str, str] = {name: POSITION_METHODS[name].color for name in METHODS}

#: The y-axis label of each metric :func:`plot_metric_vs_length` draws, (Korean, English).
_METRIC_LABELS: dict[str, tuple[str, str]] = {
    "token_accuracy": ("토큰 정확도", "token accuracy"),
    "sequence_accuracy": ("완전 일치 비율", "exact match"),
    "loss": ("손실 (nats)", "loss (nats)"),
    "perplexity": ("퍼플렉서티", "perplexity"),
}


@dataclass(frozen=True)
class ShowdownConfig:
    """A whole experiment: which methods, seeds, model size and tasks.

    Attributes:
        name: used for the results file name (``data/results/<name>.json``).
        methods: names in :data:`posviz.POSITION_METHODS`.
        seeds: one run per seed (initial weights and training data both follow it).
        tasks: the :class:`TaskSpec` of each task.
        d_model, num_heads, num_layers: the model size (the same for every method).
    """

    name: str
    methods: tuple[str, ...] = METHODS
    seeds: tuple[int, ...] = (0, 1, 2)
    tasks: tuple[TaskSpec, ...] = ()
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 2

    def __post_init__(self) -> None:
        if not self.methods or not self.seeds or not self.tasks:
            raise ValueError("methods, seeds and tasks must all be non-empty")
        for seed in self.seeds:
            check_int("seed", seed, minimum=0)
        if len({t.name for t in self.tasks}) != len(self.tasks):
            raise ValueError("each task may appear only once")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> ShowdownConfig:
        """Inverse of :meth:`to_dict` (lists from JSON become tuples again)."""
        data = dict(data)
        tasks = []
        for spec in data.pop("tasks"):
            spec = dict(spec)
            spec["eval_factors"] = tuple(spec["eval_factors"])
            tasks.append(TaskSpec(**spec))
        return cls(
            tasks=tuple(tasks),
            methods=tuple(data.pop("methods")),
            seeds=tuple(data.pop("seeds")),
            **data,
        )

    def runs(self) -> list[tuple[TaskSpec, str, int]]:
        """Every ``(task, method, seed)`` of the experiment, in running order."""
        return [(spec, method, seed) for spec in self.tasks for method in self.methods for seed in self.seeds]


#: The configuration the notebook trains live (about a minute on a quiet 2-core CPU): copy to token
#: accuracy >= 0.95, the language model to loss <= 2.2 nats (a lower bar for a smaller model), checked
#: every 25 steps, at most 300 / 150 steps, so slow methods may stay unfit.
SMALL = ShowdownConfig(
    name="showdown_small",
    seeds=(0, 1, 2),
    d_model=32,
    num_heads=4,
    num_layers=2,
    tasks=(
        TaskSpec("copy", train_len=16, steps=300, check_every=25, fit_accuracy=0.95,
                 eval_factors=(1, 2, 4, 8), eval_samples=128, vocab_size=8, offset=1),
        TaskSpec("charlm", train_len=32, steps=150, check_every=25, fit_loss=2.2,
                 eval_factors=(1, 2, 4, 8), eval_samples=64),
    ),
)

#: The configuration ``python -m posviz.showdown --preset full`` runs (tens of minutes on CPU).
FULL = ShowdownConfig(
    name="showdown_full",
    seeds=(0, 1, 2),
    d_model=64,
    num_heads=4,
    num_layers=2,
    tasks=(
        # trained to the fit criterion, checked every 50 steps; steps is the maximum
        TaskSpec("copy", train_len=32, steps=3000, check_every=50, fit_accuracy=0.95,
                 eval_factors=(1, 2, 4, 8), eval_samples=128, vocab_size=16, offset=2),
        TaskSpec("charlm", train_len=64, steps=1500, check_every=50, fit_loss=LM_FIT_LOSS,
                 eval_factors=(1, 2, 4, 8), eval_samples=64),
    ),
)

PRESETS = {"small": SMALL, "full": FULL}


class ModelSize(Protocol):
    """What :func:`build_model` reads from a configuration (:class:`ShowdownConfig`,
    :class:`posviz.extension.ExtensionConfig`)."""

    d_model: int
    num_heads: int
    num_layers: int


def build_model(method: str, spec: TaskSpec, config: ModelSize, vocab_size: int) -> TinyTransformer:
    """The causal model of one run, with ``max_len = spec.max_len`` for every method and the
    size (``d_model``, ``num_heads``, ``num_layers``) of ``config``.

    For ``"learned"`` this means the table has rows for every evaluated position, but only rows
    ``0 … train_len - 1`` are ever trained: the rest keep their random initial values.
    """
    if method not in POSITION_METHODS:
        raise ValueError(f"unknown position method {method!r}; registered: {sorted(POSITION_METHODS)}")
    return TinyTransformer(
        vocab_size,
        d_model=config.d_model,
        num_heads=config.num_heads,
        num_layers=config.num_layers,
        position=method,
        causal=True,
        max_len=spec.max_len,
    )


def _meets(spec: TaskSpec, value: float) -> bool:
    return value >= spec.fit_accuracy if spec.name == "copy" else value <= spec.fit_loss


def fit_check(spec: TaskSpec, train_task: Task) -> Callable[[torch.nn.Module], tuple[bool, float]]:
    """The fit criterion of ``spec`` as a ``stop`` function for :func:`posviz.train`.

    The returned function scores a model on ``spec.check_samples`` sequences of length
    ``spec.train_len`` drawn from ``train_task`` with seed :data:`CHECK_SEED` (the same sequences
    at every check and for every method) and returns ``(met, value)``: token accuracy
    ``>= spec.fit_accuracy`` for ``"copy"``, loss (nats) ``<= spec.fit_loss`` for ``"charlm"``.
    """

    def check(model: torch.nn.Module) -> tuple[bool, float]:
        metrics = evaluate(model, train_task, seq_len=spec.train_len, num_samples=spec.check_samples, seed=CHECK_SEED)
        value = metrics["token_accuracy"] if spec.name == "copy" else metrics["loss"]
        return _meets(spec, value), float(value)

    return check


def _shifted(shift: int) -> Callable[[torch.nn.Module, torch.Tensor], torch.Tensor]:
    def forward(model, tokens):
        return model(tokens, positions=torch.arange(tokens.shape[1]) + shift)

    return forward


def run_one(
    method: str,
    spec: TaskSpec,
    seed: int,
    config: ShowdownConfig,
    *,
    tasks: tuple[Task, Task] | None = None,
    eval_seed: int = 12345,
) -> tuple[dict, TinyTransformer]:
    """Train one model and evaluate it at every length and at the shifted positions.

    Args:
        method, spec, seed, config: what to run; ``torch.manual_seed(seed)`` fixes the initial
            weights and ``seed`` the training batches.
        tasks: ``(train_task, eval_task)`` from :func:`make_tasks` (built when omitted).
        eval_seed: seed of the evaluation data, the same for every method and seed, so all runs
            are scored on the same sequences.

    Returns:
        ``(record, model)``. ``record`` is a JSON-ready dict: ``task``, ``method``, ``seed``,
        ``num_parameters``, ``seconds_per_step`` (wall time, machine-dependent), ``steps`` (optimiser
        steps made), ``fit`` (the fit criterion of ``spec`` met at the end), ``fit_value`` (the
        checked token accuracy or loss), ``fit_checks`` (``[step, value]`` of every check while
        training to the criterion), ``final_loss`` (mean
        training loss over the last tenth of the steps, nats), ``loss_curve`` (one mean per tenth of
        training), and ``evals``: one dict per evaluation with ``length``, ``shift`` (tokens),
        ``token_accuracy``, ``sequence_accuracy`` (exact match), ``loss`` (nats per token) and
        ``perplexity`` (``exp(loss)``).
    """
    train_task, eval_task = make_tasks(spec) if tasks is None else tasks
    torch.manual_seed(seed)
    model = build_model(method, spec, config, train_task.vocab_size)
    check = fit_check(spec, train_task)
    result = train(
        model,
        train_task,
        seq_len=spec.train_len,
        steps=spec.steps,
        batch_size=spec.batch_size,
        lr=spec.lr,
        seed=seed,
        check_every=spec.check_every,
        stop=check if spec.check_every is not None else None,
    )
    steps_done = len(result.losses)
    if result.checks and result.checks[-1][0] == steps_done:
        fit_value = result.checks[-1][1]
    else:
        fit_value = check(model)[1]
    fit = _meets(spec, fit_value)
    losses = np.asarray(result.losses)
    tail = max(1, len(losses) // 10)
    curve = [float(chunk.mean()) for chunk in np.array_split(losses, min(10, len(losses)))]
    points = [(spec.train_len * f, 0) for f in spec.eval_factors] + [(spec.train_len, spec.eval_shift)]
    evals = []
    for length, shift in points:
        metrics = evaluate(
            model,
            eval_task,
            seq_len=length,
            num_samples=spec.eval_samples,
            seed=eval_seed,
            forward=_shifted(shift) if shift else None,
        )
        metrics["perplexity"] = math.exp(metrics["loss"])
        evals.append({"length": length, "shift": shift, **metrics})
    record = {
        "task": spec.name,
        "method": method,
        "seed": seed,
        "num_parameters": model.num_parameters(),
        "seconds_per_step": result.seconds_per_step,
        "steps": steps_done,
        "fit": fit,
        "fit_value": fit_value,
        "fit_checks": [list(c) for c in result.checks],
        "final_loss": float(losses[-tail:].mean()),
        "loss_curve": curve,
        "evals": evals,
    }
    return record, model


def run_showdown(
    config: ShowdownConfig,
    *,
    progress: bool = True,
    keep_models: bool = False,
    save_to: str | Path | None = None,
) -> dict:
    """Run every ``(task, method, seed)`` of ``config`` and collect the records.

    Args:
        config: the experiment.
        progress: show a tqdm progress bar over the runs.
        keep_models: also return the trained models under ``"models"`` (keyed
            ``(task, method, seed)``; not saved by :func:`save_results`).
        save_to: if given, the results so far are written there after every run (with
            ``"complete": False`` until the last), so an interrupted experiment keeps what it did.

    Returns:
        ``{"config": …, "seeds": …, "versions": …, "date": ISO-8601 UTC, "platform": …,
        "torch_threads": …, "seconds": total wall time, "cpu_seconds": CPU time of this process,
        "complete": True, "runs": [record, …]}`` (see :func:`run_one`).

    Raises:
        ValueError: if a method is not registered (before anything is trained).
    """
    from tqdm.auto import tqdm

    missing = [m for m in config.methods if m not in POSITION_METHODS]
    if missing:
        raise ValueError(f"position methods not registered: {missing}; registered: {sorted(POSITION_METHODS)}")
    start, cpu_start = time.perf_counter(), time.process_time()
    corpus = load_corpus() if any(spec.name == "charlm" for spec in config.tasks) else None
    task_pairs = {spec.name: make_tasks(spec, corpus) for spec in config.tasks}
    records, models = [], {}

    def collect(complete: bool) -> dict:
        return {
            "config": config.to_dict(),
            "seeds": list(config.seeds),
            **provenance(start, cpu_start),
            "complete": complete,
            "runs": records,
        }

    bar = tqdm(config.runs(), desc=config.name, disable=not progress)
    for spec, method, seed in bar:
        bar.set_postfix_str(f"{spec.name} {method} seed {seed}")
        record, model = run_one(method, spec, seed, config, tasks=task_pairs[spec.name])
        records.append(record)
        if keep_models:
            models[(spec.name, method, seed)] = model
        if save_to is not None:
            save_results(collect(complete=len(records) == len(config.runs())), save_to)
    results = collect(complete=True)
    if keep_models:
        results["models"] = models
    return results


def merge_results(*parts: dict) -> dict:
    """Combine results files of one configuration run in parts (e.g. a few methods at a time).

    The parts must agree on everything in ``config`` except ``name``, ``methods``, ``seeds`` and
    ``tasks``, and a task present in several parts must have the same settings in each. The merged
    ``config["methods"]`` lists every method present (course order), ``config["tasks"]`` every
    task present, ``seeds`` every seed present, ``runs`` holds every run of every part, and ``parts`` keeps each part's name,
    methods, tasks, date, versions, wall and CPU time and whether it completed.

    Raises:
        ValueError: if no part is given, if the configurations differ, or if a run appears twice.
    """
    require_same_config(parts, ignore=("name", "methods", "tasks", "seeds"), what="showdown results")
    tasks: dict[str, dict] = {}
    for part in parts:
        for spec in part["config"]["tasks"]:
            if tasks.setdefault(spec["name"], spec) != spec:
                raise ValueError(f"cannot merge {part['config']['name']!r}: task {spec['name']!r} has other settings")
    runs = [run for part in parts for run in part["runs"]]
    keys = [(r["task"], r["method"], r["seed"]) for r in runs]
    if len(set(keys)) != len(keys):
        raise ValueError("a (task, method, seed) run appears in more than one part")
    methods = {r["method"] for r in runs}
    ordered = [m for m in METHODS if m in methods] + sorted(methods - set(METHODS))
    info = [
        part_info(part, "name", "methods") | {"complete": part.get("complete"), "tasks": [t["name"] for t in part["config"]["tasks"]]}
        for part in parts
    ]
    ordered_tasks = [tasks[name] for name in TASK_NAMES if name in tasks]
    seeds = sorted({r["seed"] for r in runs})
    config = {**parts[0]["config"], "methods": ordered, "tasks": ordered_tasks, "seeds": seeds}
    return {"config": config, "seeds": seeds, "parts": info, "runs": runs}


def fit_counts(results: dict | Sequence[dict]) -> dict[tuple[str, str], tuple[int, int]]:
    """``{(task, method): (runs that met the fit criterion, runs)}``.

    Raises:
        ValueError: if a run has no ``fit`` status.
    """
    runs = results["runs"] if isinstance(results, dict) else results
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for record in runs:
        if "fit" not in record:
            raise ValueError(f"run {record['task']}/{record['method']}/{record['seed']} has no fit status")
        fitted, total = out.get((record["task"], record["method"]), (0, 0))
        out[(record["task"], record["method"])] = (fitted + bool(record["fit"]), total + 1)
    return out


def summarize(
    results: dict | Sequence[dict], metric: str, *, fitted_only: bool = False
) -> dict[tuple[str, str, int, int], dict[str, float]]:
    """Aggregate one metric over seeds.

    Args:
        results: a results dict or a list of run records.
        metric: ``"token_accuracy"``, ``"sequence_accuracy"``, ``"loss"`` or ``"perplexity"``.
        fitted_only: keep only runs that met their task's fit criterion (a group with no such
            run is left out).

    Returns:
        ``{(task, method, length, shift): {"mean", "std", "min", "max", "n"}}`` (``std`` is the
        sample standard deviation over seeds, 0 for one seed).

    Raises:
        ValueError: for an unknown metric.
    """
    check_choice("metric", metric, ("token_accuracy", "sequence_accuracy", "loss", "perplexity"))
    runs = results["runs"] if isinstance(results, dict) else results
    if fitted_only:
        fit_counts(runs)  # every run must carry a fit status
        runs = [r for r in runs if r["fit"]]
    groups: dict[tuple[str, str, int, int], list[float]] = {}
    for record in runs:
        for point in record["evals"]:
            key = (record["task"], record["method"], int(point["length"]), int(point["shift"]))
            groups.setdefault(key, []).append(float(point[metric]))
    return {key: seed_stats(values) for key, values in groups.items()}


def plot_metric_vs_length(
    results: dict,
    task: str,
    metric: str,
    *,
    methods: Sequence[str] | None = None,
    train_len: int | None = None,
    log_y: bool = False,
    mark_unfit: bool = False,
    ax=None,
):
    """Mean ± spread (min–max over seeds, shaded) of ``metric`` against evaluation length.

    One line per method in its registered colour, named in the legend by its display name in
    the figure language (:func:`posviz.methods.method_label`: "사인파" / "sinusoidal", not the
    key); a dotted vertical line marks the training length. Only unshifted evaluations are
    drawn. With ``mark_unfit`` (results with a fit status), a method is drawn from its fitted
    runs only, labelled ``"name, fit k/n"`` when some runs did not fit; a method with no fitted
    run is drawn from all its runs, dashed and labelled ``"name, unfit"``. Returns the axes.

    Raises:
        ValueError: for an unknown ``metric``.
    """
    import matplotlib.pyplot as plt

    from .style import t

    summary = summarize(results, metric)  # checks metric
    counts = fit_counts(results) if mark_unfit else {}
    runs = {"all": results["runs"], "fitted": [r for r in results["runs"] if r.get("fit")] if mark_unfit else results["runs"]}
    if methods is None:
        methods = [m for m in METHODS if any(k[0] == task and k[1] == m for k in summary)]
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    for method in methods:
        label, style, source = method_label(method), "-", "fitted"
        ko, en = method_label(method, "ko"), method_label(method, "en")
        if mark_unfit:
            k, n = counts.get((task, method), (0, 0))
            if k == 0:
                label, style, source = t(f"{ko}, 기준 미달", f"{en}, unfit"), "--", "all"
            elif k < n:
                label = t(f"{ko}, 기준 충족 {k}/{n}", f"{en}, fit {k}/{n}")
        x, rows = _per_seed(runs[source], task, method, metric)
        if not x:
            continue
        plot_band(ax, x, rows, color=method_color(method), label=label, linestyle=style, marker="o")
    ax.set_xscale("log", base=2)
    if log_y:
        ax.set_yscale("log")
    ticks = sorted({k[2] for k in summary if k[0] == task and k[3] == 0})
    ax.set_xticks(ticks, [str(v) for v in ticks])
    ax.minorticks_off()
    if train_len is not None:
        ax.axvline(train_len, color="grey", linestyle=":", linewidth=1.5, label=t("학습 길이", "training length"))
    ax.set_xlabel(t("평가 길이 (토큰)", "evaluation length (tokens)"))
    ax.set_ylabel(t(*_METRIC_LABELS[metric]))
    ax.legend(fontsize=9, ncol=2)
    return ax


def _per_seed(runs: Sequence[dict], task: str, method: str, metric: str) -> tuple[list[int], list[list[float]]]:
    """Unshifted evaluation lengths and one row of ``metric`` per seed, for one (task, method)."""
    chosen = sorted((r for r in runs if r["task"] == task and r["method"] == method), key=lambda r: r["seed"])
    if not chosen:
        return [], []
    lengths = sorted(int(e["length"]) for e in chosen[0]["evals"] if int(e["shift"]) == 0)
    rows = [
        [next(float(e[metric]) for e in r["evals"] if int(e["length"]) == n and int(e["shift"]) == 0) for n in lengths]
        for r in chosen
    ]
    return lengths, rows


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m posviz.showdown",
        description="Train tiny Transformers with each position method and write data/results/<name>.json.",
    )
    parser.add_argument("--preset", choices=sorted(PRESETS), default="full", help="configuration (default: full)")
    parser.add_argument("--methods", nargs="+", help=f"subset of methods (default: all of {', '.join(METHODS)})")
    parser.add_argument("--seeds", nargs="+", type=int, help="seeds (default: the preset's)")
    parser.add_argument("--tasks", nargs="+", choices=TASK_NAMES, help="subset of tasks (default: both)")
    parser.add_argument("--name", help="results name (default: the preset's name)")
    parser.add_argument("--out", type=Path, help="output file (default: data/results/<name>.json)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (see the module docstring)."""
    args = _parse(argv)
    config = PRESETS[args.preset]
    changes: dict = {}
    if args.methods:
        changes["methods"] = tuple(args.methods)
    if args.seeds:
        changes["seeds"] = tuple(args.seeds)
    if args.tasks:
        changes["tasks"] = tuple(s for s in config.tasks if s.name in args.tasks)
    if args.name:
        changes["name"] = args.name
    config = dataclasses.replace(config, **changes)
    if args.threads:
        torch.set_num_threads(check_int("threads", args.threads, minimum=1))
    path = args.out or results_dir() / f"{config.name}.json"
    results = run_showdown(config, progress=True, save_to=path)
    path = save_results(results, path)
    print(f"wrote {path} ({len(results['runs'])} runs, {results['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
