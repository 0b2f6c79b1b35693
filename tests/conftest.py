
import matplotlib

matplotlib.use("Agg")
import torch

# Tiny models: one thread is as fast as several, and test workers running side by side
# (pytest -n auto) must not fight over the cores (see posviz.setup's torch_threads).
torch.set_num_threads(1)
