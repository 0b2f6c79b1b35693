"""Regenerate data/results/vision_full.json: notebook 08's tiny-ViT grid-size experiment.

Every position method of posviz.vision is trained from the same initial weights per seed at a
6 × 6 grid and evaluated at 6, 9, 12 and 16 (posviz.vision.FULL_PRESET): larger grids at the
same patch scale, i.e. bigger pictures, not higher resolutions. On one CPU thread each
seed takes about 5 minutes of CPU time (all five methods). Seeds can run in parts, in parallel:

    python scripts/vision_experiment.py                          # every seed of FULL_PRESET, one file
    python scripts/vision_experiment.py --seeds 3 4 --out part.json
    python scripts/vision_experiment.py --merge a.json b.json    # combine parts into vision_full.json

The stored file was made in three parts: seeds 0–2 and seeds 3–4 with every method, when the
learned table started at std 0.02, and the learned table alone on every seed at ``table_std``
(see ``merge``), started after the first part had finished, while the second was still running
(data/README.md gives the times).
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, replace
from pathlib import Path

import torch

from posviz import results, vision

EARLY_STD = 0.02  # the learned table's initial scale in the first runs (ViT's), before table_std existed


def merge(paths: list[Path]) -> dict:
    """One result from parts that differ only in their seeds or methods (each part's provenance is kept).

    A part made before ``VisionConfig.table_std`` existed initialised the learned table with std
    0.02; its learned runs are kept under the method name ``"learned-0.02"``, so that every run
    that was made stays in the file next to the ``"learned"`` runs of the current setting.
    """
    parts = [results.load_results(p) for p in paths]
    current = asdict(vision.FULL_PRESET)
    runs, methods = [], []
    for part in parts:
        config = part["config"]
        early = "table_std" not in config
        core = {k: v for k, v in config.items() if k not in ("seeds", "methods", "table_std", "extra")}
        expected = {k: (list(v) if isinstance(v, tuple) else v) for k, v in current.items()
                    if k not in ("seeds", "methods", "table_std", "extra")}
        if core != expected:
            raise ValueError(f"a part's configuration differs from FULL_PRESET: {core} vs {expected}")
        for run in part["runs"]:
            name = "learned-0.02" if early and run["method"] == "learned" else run["method"]
            runs.append(dict(run, method=name))
            if name not in methods:
                methods.append(name)
    order = [m for m in current["methods"] if m in methods] + [m for m in methods if m not in current["methods"]]
    seeds = sorted({run["seed"] for run in runs})
    for method in order:
        if sorted(r["seed"] for r in runs if r["method"] == method) != seeds:
            raise ValueError(f"{method} does not have every seed {seeds}")
    config = dict(current, seeds=seeds, methods=order,
                  extra={"note": f"'learned-0.02': the learned table initialised with std {EARLY_STD} (ViT's) "
                                 "in the first runs; 'learned': std table_std, rerun on every seed"})
    return {"config": config, "runs": sorted(runs, key=lambda r: (r["seed"], order.index(r["method"]))),
            "provenance": [part["provenance"] for part in parts]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", help="run only these seeds of FULL_PRESET")
    parser.add_argument("--out", type=Path, help="where to write (default data/results/vision_full.json)")
    parser.add_argument("--merge", type=Path, nargs="+", help="combine these part files instead of running")
    args = parser.parse_args()
    out = args.out or results.results_dir() / vision.FULL_RESULT
    if args.merge:
        data = merge(args.merge)
    else:
        torch.set_num_threads(1)
        config = vision.FULL_PRESET if not args.seeds else replace(vision.FULL_PRESET, seeds=tuple(args.seeds))
        data = vision.run_vision_experiment(config, verbose=True)
    print(f"wrote {results.save_results(data, out)}")


if __name__ == "__main__":
    main()
