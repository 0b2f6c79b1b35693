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

Every evaluation records the per-position loss (nats, averaged over the held-out sequences): a
within-window counterpart of the PI and YaRN papers' curves of perplexity against the evaluation
window length (related, not the same plot).

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

or, on a machine with free cores, in parts (by seed) and a merge. The stored file was made this
way: every rule in one run, seeds 0 and 1 and seed 2 as two single-thread processes, one after the other,
then merged (the file's ``parts`` record each part)::

    python -m posviz.extension --seeds 0 1 --out part0.json
    python -m posviz.extension --seeds 2 --out part1.json
    python -m posviz.extension --merge part0.json part1.json

A rule added later can be run alone (per seed, retraining the same base models) and added to a
stored file, whose other runs stay as they are; the retrained base models must agree with the
stored ones, and a rerun of a stored rule can come along as a control (the stored file needed no
such step: its ablation ran with the other rules)::

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
from .extension_results import (  # re-exported: notebook 05b reads the stored results through this module too
    ABLATIONS,
    EXTENSION_COLORS,
    EXTENSION_RULES,
    add_extension_rules,
    extension_label,
    load_extension_results,
    merge_extension_results,
    plot_position_loss,
    summarize_extension,
)
from .results import (
    provenance,
    results_dir,
    save_results,
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
        eval_samples: held-out sequences per evaluation: the same windows for every rule, seed and
            length (each length scores the first characters of the windows of the longest).
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
#: 13 CPU-minutes with one thread; the stored file records 13.2 CPU-minutes over its two parts).
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
