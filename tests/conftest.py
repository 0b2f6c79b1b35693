import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import torch  # noqa: E402

# Tiny models: one thread is as fast as several, and test workers running side by side
# (pytest -n auto) must not fight over the cores (see posviz.setup's torch_threads).
torch.set_num_threads(1)
