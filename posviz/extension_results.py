"""Notebook 05b's stored results: the rules' names and colours, reading, merging, adding rules, summaries, the figure.

:mod:`posviz.extension` runs the experiment and writes the file; this module works on the result
dicts alone (it imports nothing of the experiment), so a notebook can read and plot the stored
results without the training code. Everything here is also importable from :mod:`posviz.extension`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .results import load_results, part_info, plot_band, require_same_config, seed_stats
from .rope_scaling import CONTEXT_RULES

__all__ = [
    "ABLATIONS",
    "EXTENSION_COLORS",
    "EXTENSION_RULES",
    "add_extension_rules",
    "extension_label",
    "load_extension_results",
    "merge_extension_results",
    "plot_position_loss",
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
