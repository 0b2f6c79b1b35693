"""Context extension measured (notebook 05b): a small RoPE language model run at 2×, 4×, 8× its length.

One causal :class:`~posviz.models.TinyTransformer` with RoPE per seed is trained on the character
task of notebook 06 (:class:`~posviz.tasks.CharLMTask`, Genesis KJV) at ``train_len`` tokens,
with the showdown's model builder and seeding (:func:`posviz.showdown.build_model`, the same
``torch.manual_seed(seed)`` before it), for a fixed number of steps. Then, for every target
factor ``s`` and every rule of
:func:`posviz.scaled_rope_frequencies` (``original_context = train_len``):

* **no fine-tuning**: the trained weights with the rule's frequencies, evaluated at ``s · train_len``;
* **fine-tuned**: a copy fine-tuned at ``s · train_len`` with the rule's frequencies for
  ``finetune_fraction`` of the original steps, with the same number of tokens per step
  (batch size ``batch_size / s``), the same data for every rule; then evaluated the same way.

Every evaluation records the per-position loss (nats, averaged over the held-out sequences):
the curve the PI and YaRN papers plot as perplexity against context length.

``"dynamic"`` uses YaRN §3.3's rule ``s = max(1, L/L₀)`` for the current length ``L`` (Hugging
Face ``"dynamic"`` with ``factor = 1``). It is scored block by block, a coarse version of
generation without a KV cache (which would change the base at every token): positions
``[(j−1)·L₀, j·L₀)`` are scored by a forward pass over the first ``j·L₀`` tokens with the
frequencies for that length. Its fine-tune uses the fixed ``s = factor`` of the target length
(dynamic scaling is an inference-time rule, YaRN §3.3), so the fine-tuned ``"dynamic"`` model is
trained at one ``s`` and evaluated with ``s = 1 … factor``.

Besides the rules of :data:`~posviz.rope_scaling.CONTEXT_RULES`, the experiment knows the
ablations of :data:`ABLATIONS`: ``"yarn_no_temperature"`` is YaRN's frequencies with
``attention_factor = 1`` (NTK-by-parts alone, YaRN §3.2), which separates YaRN's ramp from its
attention temperature (§3.4).

Run the full configuration from the repository root (writes
``data/results/context_extension_full.json`` with configuration, seeds, versions and date)::

    python -m posviz.extension --preset full

or, on a machine with free cores, one process per seed and a merge (what produced the file)::

    python -m posviz.extension --seeds 0 --out part0.json   # likewise --seeds 1, --seeds 2
    python -m posviz.extension --merge part0.json part1.json part2.json

A rule added later is run alone (per seed, retraining the same base models) and added to the
stored file, whose other runs stay as they are; the retrained base models must agree with the
stored ones, and a rerun of a stored rule can come along as a control (what added the ablation)::

    python -m posviz.extension --rules yarn_no_temperature --seeds 0 --out ab0.json   # likewise 1, 2
    python -m posviz.extension --rules yarn --seeds 0 --out control0.json
    python -m posviz.extension --add-rules ab0.json ab1.json ab2.json control0.json

Sources: Chen et al. 2023 (PI), https://arxiv.org/abs/2306.15595; Peng et al. 2023 (YaRN),
https://arxiv.org/abs/2309.00071.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from ._checks import check_int, check_positive_float
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
from .rope_scaling import CONTEXT_RULES, scaled_rope_frequencies, set_rope_frequencies
from .showdown import build_model
from .tasks import Task, TaskSpec, load_corpus, make_tasks
from .training import train

__all__ = [
    "ABLATIONS",
    "EXTENSION_COLORS",
    "EXTENSION_FULL",
    "EXTENSION_RULES",
    "EXTENSION_SMALL",
    "ExtensionConfig",
    "add_extension_rules",
    "extension_label",
    "load_extension_results",
    "merge_extension_results",
    "plot_position_loss",
    "position_losses",
    "run_extension",
    "summarize_extension",
]

#: Ablations: a name, and the keywords of :func:`posviz.scaled_rope_frequencies` it stands for.
#: ``"yarn_no_temperature"``: YaRN's frequencies with cos/sin left unscaled (NTK-by-parts, YaRN §3.2).
ABLATIONS: dict[str, dict] = {"yarn_no_temperature": {"rule": "yarn", "attention_factor": 1.0}}

#: Everything :class:`ExtensionConfig` can run: the rules, then the ablations.
EXTENSION_RULES: tuple[str, ...] = (*CONTEXT_RULES, *ABLATIONS)

#: One colour per rule (Okabe–Ito palette), the same in every figure of notebook 05b; an ablation
#: takes its rule's colour and a dashed line.
EXTENSION_COLORS: dict[str, str] = {
    "none": "#000000",
    "linear": "#E69F00",
    "ntk": "#56B4E9",
    "dynamic": "#009E73",
    "yarn": "#D55E00",
    "llama3": "#CC79A7",
    "yarn_no_temperature": "#D55E00",
}

#: Display names (Korean, English), as the prose of notebook 05b names the rules.
_LABELS: dict[str, tuple[str, str]] = {
    "none": ("RoPE 그대로", "plain RoPE"),
    "linear": ("PI", "PI"),
    "ntk": ("NTK-aware", "NTK-aware"),
    "dynamic": ("동적 NTK", "dynamic NTK"),
    "yarn": ("YaRN", "YaRN"),
    "llama3": ("Llama 3", "Llama 3"),
    "yarn_no_temperature": ("온도 없는 YaRN", "YaRN without temperature"),
}


def extension_label(rule: str, lang: str | None = None) -> str:
    """The display name of ``rule`` (e.g. ``"none"`` → "RoPE 그대로" / "plain RoPE") in the figure
    language of :func:`posviz.t`, or in ``lang`` (``"ko"`` or ``"en"``) when given.

    Raises:
        ValueError: for a name not in :data:`EXTENSION_RULES`, or another ``lang``.
    """
    if rule not in _LABELS:
        raise ValueError(f"unknown rule {rule!r}; choose from {EXTENSION_RULES}")
    ko, en = _LABELS[rule]
    if lang is None:
        from .style import t

        return en if ko == en else t(ko, en)
    if lang not in ("ko", "en"):
        raise ValueError(f"lang must be 'ko' or 'en', got {lang!r}")
    return ko if lang == "ko" else en


@dataclass(frozen=True)
class ExtensionConfig:
    """The whole experiment.

    Attributes:
        name: results file name (``data/results/<name>.json``).
        rules: rules of :func:`posviz.scaled_rope_frequencies` and ablations (:data:`EXTENSION_RULES`).
        seeds: one base model per seed (initial weights, training and fine-tuning data follow it).
        train_len, steps, batch_size, lr: the base training (the ``"charlm"`` task of notebook 06).
        factors: target lengths as multiples of ``train_len``.
        finetune_fraction: fine-tuning steps as a fraction of ``steps`` (the same for every rule).
        finetune_lr: AdamW learning rate of the fine-tune (not tuned).
        eval_samples: held-out sequences per evaluation (same for every rule at one length; new per length).
        curve_bin: positions per bin of the stored per-position loss curves.
        d_model, num_heads, num_layers: model size (06's full configuration by default).
    """

    name: str
    rules: tuple[str, ...] = CONTEXT_RULES
    seeds: tuple[int, ...] = (0, 1, 2)
    train_len: int = 64
    steps: int = 800
    batch_size: int = 32
    lr: float = 3e-3
    factors: tuple[int, ...] = (2, 4, 8)
    finetune_fraction: float = 0.1
    finetune_lr: float = 1e-3
    eval_samples: int = 64
    curve_bin: int = 8
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 2

    def __post_init__(self) -> None:
        if not self.rules or not self.seeds or not self.factors:
            raise ValueError("rules, seeds and factors must all be non-empty")
        for rule in self.rules:
            if rule not in EXTENSION_RULES:
                raise ValueError(f"unknown rule {rule!r}; choose from {EXTENSION_RULES}")
        for factor in self.factors:
            check_int("factor", factor, minimum=2)
        for seed in self.seeds:
            check_int("seed", seed, minimum=0)
        check_int("train_len", self.train_len, minimum=2)
        check_int("steps", self.steps, minimum=1)
        check_int("curve_bin", self.curve_bin, minimum=1)
        if self.train_len % self.curve_bin:
            raise ValueError(f"curve_bin={self.curve_bin} must divide train_len={self.train_len}")
        if not 0 < self.finetune_fraction <= 1:
            raise ValueError(f"finetune_fraction must lie in (0, 1], got {self.finetune_fraction}")
        check_positive_float("finetune_lr", self.finetune_lr)

    @property
    def finetune_steps(self) -> int:
        """Fine-tuning steps, ``round(finetune_fraction · steps)`` (at least 1)."""
        return max(1, round(self.finetune_fraction * self.steps))

    def task_spec(self) -> TaskSpec:
        """The :class:`~posviz.tasks.TaskSpec` of the base training."""
        return TaskSpec(
            "charlm",
            train_len=self.train_len,
            steps=self.steps,
            batch_size=self.batch_size,
            lr=self.lr,
            eval_factors=(1, *self.factors),
            eval_samples=self.eval_samples,
        )


#: What ``python -m posviz.extension --preset full`` runs: every rule and the ablation (about
#: 12 CPU-minutes in all with one thread: 11 for the six rules; run alone, with the base models
#: retrained, the ablation took 1.3–1.5 CPU-minutes per seed).
EXTENSION_FULL = ExtensionConfig(name="context_extension_full", rules=EXTENSION_RULES)

#: The live version of notebook 05b (well under a minute on 2 cores).
EXTENSION_SMALL = ExtensionConfig(
    name="context_extension_small",
    rules=("none", "linear", "ntk", "yarn"),
    train_len=32,
    steps=300,
    factors=(4,),
    eval_samples=32,
    d_model=32,
    num_heads=2,
)

PRESETS = {"small": EXTENSION_SMALL, "full": EXTENSION_FULL}


def _settings(rule: str, factor: int, train_len: int, seq_len: int) -> dict:
    """Keywords of :func:`scaled_rope_frequencies` for one rule or ablation at target factor ``factor``."""
    if rule in ABLATIONS:
        return {**_settings(ABLATIONS[rule]["rule"], factor, train_len, seq_len), **ABLATIONS[rule]}
    if rule == "dynamic":
        return {"rule": "dynamic", "factor": 1.0, "original_context": train_len, "seq_len": seq_len}
    return {"rule": rule, "factor": float(factor), "original_context": train_len}


@torch.no_grad()
def position_losses(
    model: torch.nn.Module,
    task: Task,
    *,
    seq_len: int,
    rule: str = "none",
    factor: float = 1.0,
    train_len: int,
    num_samples: int = 128,
    seed: int = 12345,
) -> np.ndarray:
    """Per-position cross-entropy of a RoPE model with one extension rule, averaged over sequences.

    The rule's frequencies (from :func:`posviz.scaled_rope_frequencies` with
    ``original_context = train_len``) are set in ``model`` for the call; ``"dynamic"`` is scored
    block by block (see the module docstring). The model is left with plain RoPE frequencies.

    Args:
        model: a causal :class:`~posviz.models.TinyTransformer` with ``position="rope"``.
        task: a per-token task whose every position is scored (:class:`~posviz.tasks.CharLMTask`).
        seq_len: evaluation length in tokens.
        rule, factor: the rule (or ablation, :data:`EXTENSION_RULES`) and its extension factor ``s``.
        train_len: the training length ``L₀``.
        num_samples, seed: held-out sequences (one batch) and their generator's seed.

    Returns:
        float64 array ``(seq_len,)``: mean loss in nats at each position.

    Raises:
        ValueError: for an unknown rule, or if ``model`` has no rotary module.
    """
    generator = torch.Generator().manual_seed(seed)
    tokens, targets = task.sample(num_samples, seq_len, generator=generator)
    was_training = model.training
    model.eval()
    ends = range(train_len, seq_len + train_len, train_len) if rule == "dynamic" else [seq_len]
    losses = torch.empty(num_samples, seq_len, dtype=torch.float64)
    start = 0
    try:
        for end in ends:
            end = min(end, seq_len)
            if set_rope_frequencies(model, **_settings(rule, factor, train_len, end)) == 0:
                raise ValueError("model has no RotaryEmbedding (use position='rope')")
            logits = model(tokens[:, :end])[:, start:end]
            part = F.cross_entropy(logits.transpose(1, 2), targets[:, start:end], reduction="none")
            losses[:, start:end] = part.double()
            start = end
    finally:
        set_rope_frequencies(model, rule="none")
        model.train(was_training)
    return losses.mean(0).numpy()


def _binned(curve: np.ndarray, width: int) -> list[float]:
    return [float(v) for v in curve.reshape(-1, width).mean(1)]


def _finetune(base, train_task, rule, factor, seed, config: ExtensionConfig):
    model = copy.deepcopy(base)
    length = factor * config.train_len
    set_rope_frequencies(model, **_settings(rule, factor, config.train_len, length))
    batch = max(1, round(config.batch_size / factor))  # same tokens per step as the base training
    result = train(
        model,
        train_task,
        seq_len=length,
        steps=config.finetune_steps,
        batch_size=batch,
        lr=config.finetune_lr,
        seed=10_000 + 100 * seed + factor,  # the same fine-tuning data for every rule
    )
    set_rope_frequencies(model, rule="none")
    return model, result


def run_extension(config: ExtensionConfig, *, progress: bool = False) -> dict:
    """Run the experiment of the module docstring.

    Returns:
        ``{"config", "seeds", "versions", "date", "platform", "torch_threads", "seconds", "cpu_seconds",
        "base", "runs"}`` (``seconds``: wall time; ``cpu_seconds``: CPU time of the process). ``base``: one record per seed (``seed``, ``final_loss``, ``seconds``, ``loss_at_train_len``).
        ``runs``: one record per (seed, rule, factor, fine-tuned or not) with ``seed``, ``rule``,
        ``factor``, ``length`` (tokens), ``finetuned`` (bool), ``attention_factor``, ``loss``
        (mean over positions, nats), ``curve`` (per-position loss averaged over bins of
        ``curve_bin`` positions), ``loss_at_train_len`` (the same rule evaluated at
        ``train_len``), and for fine-tuned runs ``finetune_loss`` (mean training loss of the last
        tenth of the fine-tune) and ``finetune_seconds``.
    """
    start, cpu_start = time.perf_counter(), time.process_time()
    spec = config.task_spec()
    train_task, eval_task = make_tasks(spec, load_corpus())
    L = config.train_len
    base_records, runs = [], []

    def record(model, seed, rule, factor, finetuned, extra=None):
        length = factor * L

        def losses_at(seq_len: int) -> np.ndarray:
            return position_losses(
                model, eval_task, seq_len=seq_len, rule=rule, factor=factor, train_len=L, num_samples=config.eval_samples
            )

        curve, short = losses_at(length), losses_at(L)
        _, att = scaled_rope_frequencies(config.d_model // config.num_heads, **_settings(rule, factor, L, length))
        runs.append(
            {
                "seed": seed,
                "rule": rule,
                "factor": factor,
                "length": length,
                "finetuned": finetuned,
                "attention_factor": att,
                "loss": float(curve.mean()),
                "curve": _binned(curve, config.curve_bin),
                "loss_at_train_len": float(short.mean()),
                **(extra or {}),
            }
        )

    for seed in config.seeds:
        torch.manual_seed(seed)  # as posviz.showdown.run_one
        base = build_model("rope", spec, config, train_task.vocab_size)
        result = train(
            base,
            train_task,
            seq_len=L,
            steps=config.steps,
            batch_size=config.batch_size,
            lr=config.lr,
            seed=seed,
        )
        losses = np.asarray(result.losses)
        at_l = position_losses(base, eval_task, seq_len=L, train_len=L, num_samples=config.eval_samples)
        base_records.append(
            {
                "seed": seed,
                "final_loss": float(losses[-max(1, len(losses) // 10) :].mean()),
                "seconds": result.seconds,
                "loss_at_train_len": float(at_l.mean()),
                "curve_at_train_len": _binned(at_l, config.curve_bin),
            }
        )
        for factor in config.factors:
            for rule in config.rules:
                record(base, seed, rule, factor, False)
                tuned, ft = _finetune(base, train_task, rule, factor, seed, config)
                tail = np.asarray(ft.losses)[-max(1, len(ft.losses) // 10) :]
                record(
                    tuned,
                    seed,
                    rule,
                    factor,
                    True,
                    {"finetune_loss": float(tail.mean()), "finetune_seconds": ft.seconds},
                )
                if progress:
                    print(
                        f"seed {seed} s={factor} {rule}: {runs[-2]['loss']:.3f} -> {runs[-1]['loss']:.3f}",
                        flush=True,
                    )
    return {
        "config": dataclasses.asdict(config),
        "seeds": list(config.seeds),
        **provenance(start, cpu_start),
        "base": base_records,
        "runs": runs,
    }


def load_extension_results(path: str | Path) -> dict:
    """Read a results file of :func:`run_extension` (or :func:`merge_extension_results`).

    Files that name the rule with the older keys (``config["methods"]``, ``run["method"]``) are read
    with the current ones.

    Raises:
        FileNotFoundError, ValueError: as :func:`posviz.results.load_results`.
    """
    data = load_results(path, required=("config", "runs"))
    config = data["config"]
    if "methods" in config and "rules" not in config:
        config["rules"] = config.pop("methods")
    for run in data["runs"]:
        if "method" in run and "rule" not in run:
            run["rule"] = run.pop("method")
    return data


def merge_extension_results(*parts: dict) -> dict:
    """Combine results of one configuration run in parts (e.g. one process per seed).

    The parts must agree on everything in ``config`` except ``seeds``. The merged result lists
    every seed, ``base`` and ``runs`` of every part (sorted by seed), the sum of ``seconds`` and
    ``cpu_seconds``, and keeps each part's date, versions, platform and times under ``parts``.

    Raises:
        ValueError: if no part is given, if the configurations differ, or if a seed appears twice.
    """
    require_same_config(parts, ignore=("seeds",), what="context-extension results")
    seeds = [seed for part in parts for seed in part["seeds"]]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"a seed appears in more than one part: {sorted(seeds)}")
    seeds = sorted(seeds)
    info = [part_info(part) | {"seeds": part["seeds"]} for part in parts]
    return {
        "config": {**parts[0]["config"], "seeds": seeds},
        "seeds": seeds,
        "versions": parts[0]["versions"],
        "date": max(part["date"] for part in parts),
        "platform": parts[0].get("platform"),
        "torch_threads": parts[0].get("torch_threads"),
        "seconds": sum(part["seconds"] for part in parts),
        "cpu_seconds": sum(part["cpu_seconds"] for part in parts),
        "parts": info,
        "base": sorted((b for part in parts for b in part["base"]), key=lambda b: b["seed"]),
        "runs": sorted((r for part in parts for r in part["runs"]), key=lambda r: r["seed"]),
    }


_BASE_KEYS = ("final_loss", "loss_at_train_len")


def _largest_relative_difference(a: Sequence[float], b: Sequence[float]) -> float:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(x - y) / np.abs(y)))


def add_extension_rules(results: dict, *parts: dict, base_rtol: float = 1e-5) -> dict:
    """Add rules run later (e.g. an ablation, one part per seed) to a stored results file.

    Each part is a :func:`run_extension` result of the same configuration except ``rules`` and
    ``seeds``. A part retrains the base models from the same seeds, so its ``base`` records
    (final training loss, loss at ``train_len``) must agree with the stored ones to ``base_rtol``
    (code changes since the stored run may move float32 rounding, not more); the largest
    relative difference is recorded. Two kinds of part:

    * **new rules**: together these parts cover every stored seed once, with rules ``results``
      does not have; their runs follow the stored ones, which are kept as they are, and
      ``config["rules"]`` lists the stored rules, then the new ones;
    * **controls**: a part that reruns stored rules is compared run by run with the stored
      numbers (largest absolute difference of ``loss`` and ``loss_at_train_len``, in nats) and
      only that comparison is kept.

    ``parts`` keeps the provenance of every part (stored, new and control) with its seeds and
    rules; ``seconds``, ``cpu_seconds`` and ``date`` cover all of them.

    Raises:
        ValueError: if no new-rule part is given, the configurations differ (besides rules and
            seeds), the new parts' rules differ from each other or overlap the stored ones, the
            seeds do not match, or a base model differs from the stored one by more than
            ``base_rtol``.
    """
    require_same_config([results, *parts], ignore=("seeds", "rules"), what="context-extension results")
    old_rules = list(results["config"]["rules"])
    controls = [part for part in parts if set(part["config"]["rules"]) <= set(old_rules)]
    adds = [part for part in parts if not set(part["config"]["rules"]) <= set(old_rules)]
    if not adds:
        raise ValueError("add_extension_rules needs at least one part with rules that are not stored yet")
    new_rules = list(adds[0]["config"]["rules"])
    for part in adds:
        if list(part["config"]["rules"]) != new_rules:
            raise ValueError(f"every new part must run the same rules; got {new_rules} and {part['config']['rules']}")
    if set(new_rules) & set(old_rules):
        raise ValueError(f"rules {sorted(set(new_rules) & set(old_rules))} are already stored")
    seeds = [seed for part in adds for seed in part["seeds"]]
    if sorted(seeds) != sorted(results["seeds"]):
        raise ValueError(f"the parts must cover the stored seeds {results['seeds']} once each, got {sorted(seeds)}")
    stored_base = {b["seed"]: b for b in results["base"]}

    def base_difference(part: dict) -> float:
        worst = 0.0
        for b in part["base"]:
            if b["seed"] not in stored_base:
                raise ValueError(f"seed {b['seed']} is not stored")
            old = stored_base[b["seed"]]
            diff = _largest_relative_difference([b[k] for k in _BASE_KEYS], [old[k] for k in _BASE_KEYS])
            if not diff <= base_rtol:
                raise ValueError(
                    f"seed {b['seed']}: the retrained base model differs from the stored one "
                    f"(largest relative difference {diff:.1e} > base_rtol={base_rtol:g})"
                )
            worst = max(worst, diff)
        return worst

    stored_runs = {(r["seed"], r["rule"], r["factor"], r["finetuned"]): r for r in results["runs"]}
    old_parts = results.get("parts") or [part_info(results) | {"seeds": results["seeds"]}]
    info = [p | {"rules": p.get("rules", old_rules)} for p in old_parts]
    for part in adds:
        info.append(
            part_info(part)
            | {"seeds": part["seeds"], "rules": new_rules, "base_relative_difference": base_difference(part)}
        )
    for part in controls:
        pairs = [(r, stored_runs[r["seed"], r["rule"], r["factor"], r["finetuned"]]) for r in part["runs"]]
        info.append(
            part_info(part)
            | {
                "seeds": part["seeds"],
                "rules": list(part["config"]["rules"]),
                "control": True,
                "base_relative_difference": base_difference(part),
                "max_loss_difference": max(abs(r["loss"] - old["loss"]) for r, old in pairs),
                "max_loss_at_train_len_difference": max(
                    abs(r["loss_at_train_len"] - old["loss_at_train_len"]) for r, old in pairs
                ),
            }
        )
    new_runs = sorted((r for part in adds for r in part["runs"]), key=lambda r: r["seed"])
    return {
        **results,
        "config": {**results["config"], "rules": old_rules + new_rules},
        "date": max([results["date"], *(part["date"] for part in parts)]),
        "seconds": results["seconds"] + sum(part["seconds"] for part in parts),
        "cpu_seconds": results["cpu_seconds"] + sum(part["cpu_seconds"] for part in parts),
        "parts": info,
        "runs": [*results["runs"], *new_runs],
    }


def summarize_extension(results: dict, key: str = "loss") -> dict[tuple[str, int, bool], dict[str, float]]:
    """Mean, sample std, min, max and count over seeds of ``key`` for each (rule, factor, fine-tuned).

    Raises:
        ValueError: if ``key`` is not a numeric field of the run records.
    """
    if key not in ("loss", "loss_at_train_len", "finetune_loss"):
        raise ValueError(f"key must be 'loss', 'loss_at_train_len' or 'finetune_loss', got {key!r}")
    groups: dict[tuple[str, int, bool], list[float]] = {}
    for run in results["runs"]:
        if key in run:
            groups.setdefault((run["rule"], int(run["factor"]), bool(run["finetuned"])), []).append(
                run[key]
            )
    return {k: seed_stats(values) for k, values in groups.items()}


def plot_position_loss(
    results: dict,
    factor: int,
    *,
    finetuned: bool,
    rules: Sequence[str] | None = None,
    ax=None,
    ylim: tuple[float, float] | None = None,
):
    """Per-position loss (mean over seeds, min–max shaded) of every rule at ``factor × train_len``.

    ``rules`` (default: every rule of the file) are drawn under their display names
    (:func:`extension_label`), ablations dashed. A dotted line marks the training length.
    Returns the axes.
    """
    import matplotlib.pyplot as plt

    from .style import t

    cfg = results["config"]
    L, width = cfg["train_len"], cfg["curve_bin"]
    rules = rules or cfg["rules"]
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    for rule in rules:
        curves = [
            r["curve"]
            for r in sorted(results["runs"], key=lambda r: r["seed"])
            if r["rule"] == rule and r["factor"] == factor and r["finetuned"] == finetuned
        ]
        if not curves:
            continue
        x = (np.arange(len(curves[0])) + 0.5) * width
        plot_band(
            ax,
            x,
            curves,
            color=EXTENSION_COLORS.get(rule),
            label=extension_label(rule),
            linestyle="--" if rule in ABLATIONS else "-",
        )
    ax.axvline(L, color="grey", linestyle=":", linewidth=1.5, label=t("학습 길이", "training length"))
    ax.set_xlabel(t("위치 (토큰)", "position (tokens)"))
    ax.set_ylabel(t("손실 (nats/글자)", "loss (nats per character)"))
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.legend(fontsize=8, ncol=2)
    return ax


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m posviz.extension",
        description="Train small RoPE models, extend their context with each rule, write data/results/<name>.json.",
    )
    parser.add_argument(
        "--preset", choices=sorted(PRESETS), default="full", help="configuration (default: full)"
    )
    parser.add_argument("--seeds", nargs="+", type=int, help="seeds (default: the preset's)")
    parser.add_argument(
        "--rules", nargs="+", choices=EXTENSION_RULES, metavar="RULE", help="rules to run (default: the preset's)"
    )
    parser.add_argument("--out", type=Path, help="output file (default: data/results/<name>.json)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default: 1)")
    parser.add_argument(
        "--merge",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="instead of running, merge results files of the same configuration (e.g. one per seed) into --out",
    )
    parser.add_argument(
        "--add-rules",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="instead of running, add the runs of rules run later (files from --rules, one per seed; a file "
        "that reruns stored rules is a control) to the preset's stored file (or --into), written to --out "
        "(default: that file)",
    )
    parser.add_argument("--into", type=Path, help="the stored file for --add-rules (default: data/results/<name>.json)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (see the module docstring)."""
    args = _parse(argv)
    config = PRESETS[args.preset]
    if args.merge:
        merged = merge_extension_results(*(load_extension_results(path) for path in args.merge))
        path = save_results(merged, args.out or results_dir() / f"{merged['config']['name']}.json")
        print(f"wrote {path} (seeds {merged['seeds']}, {merged['cpu_seconds'] / 60:.1f} CPU minutes in all)")
        return 0
    if args.add_rules:
        into = args.into or results_dir() / f"{config.name}.json"
        added = add_extension_rules(
            load_extension_results(into), *(load_extension_results(path) for path in args.add_rules)
        )
        path = save_results(added, args.out or into)
        print(f"wrote {path} (rules {added['config']['rules']}, {len(added['runs'])} runs)")
        return 0
    if args.seeds:
        config = dataclasses.replace(config, seeds=tuple(args.seeds))
    if args.rules:
        config = dataclasses.replace(config, rules=tuple(args.rules))
    torch.set_num_threads(check_int("threads", args.threads, minimum=1))
    results = run_extension(config, progress=True)
    path = save_results(results, args.out or results_dir() / f"{config.name}.json")
    print(
        f"wrote {path} ({len(results['runs'])} runs, {results['seconds']:.0f} s wall, "
        f"{results['cpu_seconds'] / 60:.1f} CPU minutes)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
