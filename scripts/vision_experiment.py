"""Regenerate data/results/vision_full.json: notebook 08's tiny-ViT resolution experiment.

Every position method of posviz.vision is trained from the same initial weights per seed at a
6 × 6 grid and evaluated at 6, 9, 12 and 16 (posviz.vision.FULL_PRESET). On one CPU thread it
takes about 15 minutes:

    python scripts/vision_experiment.py
"""

from __future__ import annotations

import torch

from posviz import results, vision


def main() -> None:
    torch.set_num_threads(1)
    out = vision.run_vision_experiment(vision.FULL_PRESET, verbose=True)
    path = results.save_results(out, results.results_dir() / vision.FULL_RESULT)
    print(f"wrote {path.name}")


if __name__ == "__main__":
    main()
