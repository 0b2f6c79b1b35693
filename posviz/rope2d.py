"""RoPE for images and for text + image + video sequences: axial and mixed 2-D RoPE, and M-RoPE.

Sources:

* Heo et al. 2024, "Rotary Position Embedding for Vision Transformer" (ECCV 2024),
  https://arxiv.org/abs/2403.13298 — RoPE-Axial (§3.2, eq. 12) and RoPE-Mixed with learnable
  frequencies (§3.2, eq. 14), and the resolution-extrapolation experiments (§4); code at
  https://github.com/naver-ai/rope-vit.
* Wang et al. 2024, "Qwen2-VL: Enhancing Vision-Language Model's Perception of the World at Any
  Resolution", https://arxiv.org/abs/2409.12191 — 2-D RoPE in the vision encoder and Multimodal
  RoPE (M-RoPE, §2.1): temporal, height and width position ids, and "the next modality starts at
  the largest position id so far plus one".
* Su et al. 2021, RoFormer, https://arxiv.org/abs/2104.09864 — the 1-D rotation (eq. 34) that
  every function here reuses (:func:`posviz.apply_rope`'s kernel).

Conventions:

* A patch at grid row ``r`` and column ``c`` has the integer position ``(r, c)``; a flattened
  image lists its patches row by row (``index = r · width + c``, as ``torch.flatten`` of an
  ``(h, w)`` grid does).
* Pair numbering and layouts are those of :mod:`posviz.rope`: pair ``j`` is dimensions
  ``(2j, 2j+1)`` (``"interleaved"``) or ``(j, j + d/2)`` (``"half"``, Hugging Face).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import torch

from ._checks import check_choice, check_head_dim, check_int, check_positive_float
from .rope import ROPE_LAYOUTS, _angle_dtype, _check_positions, _rotate, rope_frequencies

__all__ = [
    "apply_mrope",
    "axial_frequencies_2d",
    "axial_rope_2d",
    "grid_positions",
    "mixed_rope_2d",
    "mrope_position_ids",
    "qwen2_vl_rope_index",
]


def _check_x(x: object) -> torch.Tensor:
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError(f"x must be a floating torch.Tensor, got {getattr(x, 'dtype', type(x).__name__)}")
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., seq_len, head_dim), got {tuple(x.shape)}")
    return x


def _check_head_dim_4(head_dim: object) -> int:
    head_dim = check_head_dim(head_dim)
    if head_dim % 4:
        raise ValueError(
            f"head_dim must be divisible by 4 for 2-D RoPE (half of the pairs per axis), got {head_dim}"
        )
    return head_dim


def grid_positions(height: int, width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Row and column positions of an ``height × width`` grid of patches, flattened row by row.

    Returns:
        ``(rows, cols)``, two int64 tensors of shape ``(height · width,)``: patch ``k`` is at row
        ``k // width`` and column ``k % width``.

    Raises:
        TypeError / ValueError: unless both sizes are ints ``>= 1``.
    """
    height = check_int("height", height, minimum=1)
    width = check_int("width", width, minimum=1)
    rows, cols = torch.meshgrid(torch.arange(height), torch.arange(width), indexing="ij")
    return rows.flatten(), cols.flatten()


def axial_frequencies_2d(head_dim: int, base: float = 10000.0) -> tuple[np.ndarray, np.ndarray]:
    """Axial RoPE written as per-pair row and column frequencies, the input of :func:`mixed_rope_2d`.

    Pair ``j < d/4`` gets ``f_row[j] = θ_j`` and ``f_col[j] = 0``; pair ``d/4 + j`` gets
    ``f_row = 0`` and ``f_col = θ_j``, with ``θ_j = base^(−4j/d)`` (RoFormer's frequencies for a
    head of ``d/2`` dimensions). ``mixed_rope_2d(x, r, c, *axial_frequencies_2d(d, b))`` equals
    ``axial_rope_2d(x, r, c, base=b)``.

    Returns:
        Two float64 arrays of shape ``(head_dim // 2,)``, in radians per patch.

    Raises:
        ValueError: if ``head_dim`` is not a positive multiple of 4 or ``base <= 0``.
    """
    head_dim = _check_head_dim_4(head_dim)
    theta = rope_frequencies(head_dim // 2, base)
    zeros = np.zeros_like(theta)
    return np.concatenate([theta, zeros]), np.concatenate([zeros, theta])


def _frequencies(name: str, value: object, pairs: int, device) -> torch.Tensor:
    """Frequencies as a float tensor ``(…, pairs)``, keeping autograd when given a tensor."""
    if isinstance(value, torch.Tensor):
        if not value.is_floating_point():
            raise TypeError(f"{name} must be a floating tensor or array-like of floats, got {value.dtype}")
        tensor = value.to(device)
    else:
        array = np.asarray(value, dtype=np.float64)
        tensor = torch.from_numpy(array).to(device)
    if tensor.ndim < 1 or tensor.shape[-1] != pairs:
        raise ValueError(f"{name} must have shape (..., {pairs}) (one per rotated pair), got {tuple(tensor.shape)}")
    if not bool(torch.isfinite(tensor.detach()).all()):
        raise ValueError(f"{name} must be finite")
    return tensor


def mixed_rope_2d(
    x: torch.Tensor,
    rows: torch.Tensor,
    cols: torch.Tensor,
    row_frequencies,
    col_frequencies,
    *,
    layout: str = "interleaved",
) -> torch.Tensor:
    """RoPE-Mixed (Heo et al. 2024, §3.2, eq. 14): pair ``j`` turns by ``rows · f_row[j] + cols · f_col[j]``.

    Each pair rotates along its own direction ``(f_row[j], f_col[j])`` of the image plane, so a
    score ``⟨R(p)q, R(p')k⟩`` depends on ``p' − p`` only, and a pair with both frequencies
    non-zero responds to diagonal offsets, which no axial pair does (every axial pair sees one
    axis; an axial score f(Δr) + g(Δc) depends on Δr + Δc alone only as a straight ramp). In RoPE-Mixed the frequencies are learned, per head and layer; Heo et al.'s code starts them
    at the base-10 axial magnitudes along a random direction per head (their RoPE-Axial uses
    base 100). Axial RoPE is the special case
    :func:`axial_frequencies_2d`.

    Args:
        x: floating tensor ``(..., seq_len, head_dim)``, ``head_dim`` even.
        rows, cols: integer tensors broadcastable to ``x.shape[:-1]``, e.g. ``(seq_len,)`` from
            :func:`grid_positions`; in patches.
        row_frequencies, col_frequencies: ``(..., head_dim // 2)`` in radians per patch (a tensor
            that requires grad stays differentiable); leading dimensions broadcast against
            ``x.shape[:-2]`` with a unit sequence axis, e.g. ``(heads, 1, head_dim // 2)`` for
            ``x`` of shape ``(batch, heads, seq_len, head_dim)``.
        layout: ``"interleaved"`` or ``"half"`` (see :mod:`posviz.rope`).

    Returns:
        Tensor of the (broadcast) shape and dtype of ``x``. Angles and the rotation are in
        float32 (float64 for float64 ``x``).

    Raises:
        TypeError: for a non-floating ``x``, non-integer positions or non-floating frequencies.
        ValueError: for an odd ``head_dim``, positions that do not broadcast, frequencies of the
            wrong length or not finite, or an unknown layout.
    """
    x = _check_x(x)
    head_dim = check_head_dim(x.shape[-1])
    check_choice("layout", layout, ROPE_LAYOUTS)
    pairs = head_dim // 2
    dtype = _angle_dtype(x.dtype)
    r = _check_positions(rows, x.shape[:-1], x.device).to(dtype)
    c = _check_positions(cols, x.shape[:-1], x.device).to(dtype)
    f_row = _frequencies("row_frequencies", row_frequencies, pairs, x.device).to(dtype)
    f_col = _frequencies("col_frequencies", col_frequencies, pairs, x.device).to(dtype)
    angles = r[..., None] * f_row + c[..., None] * f_col
    return _rotate(x, torch.cos(angles), torch.sin(angles), layout, head_dim)


def axial_rope_2d(
    x: torch.Tensor,
    rows: torch.Tensor,
    cols: torch.Tensor,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
) -> torch.Tensor:
    """Axial 2-D RoPE: the first half of the pairs turn with the row, the second half with the column.

    Pairs ``0 … d/4 − 1`` turn by ``rows · θ_j`` and pairs ``d/4 … d/2 − 1`` by ``cols · θ_j``, with
    ``θ_j = base^(−4j/d)`` (Heo et al. 2024, §3.2, eq. 12): 1-D RoPE on each half of the head, one
    half per axis, the layout of Heo et al.'s code (``compute_axial_cis`` in naver-ai/rope-vit,
    ``models/vit_rope.py``, concatenates the x pairs and the y pairs). The score
    ``⟨R(r, c)q, R(r', c')k⟩`` then depends on ``(r' − r, c' − c)`` only, and is a sum of a row
    part and a column part.

    Conventions readers meet:

    * ``layout="half"`` with the default base equals Qwen2-VL's vision RoPE (Hugging Face
      ``Qwen2VLVisionRotaryEmbedding`` + ``apply_rotary_pos_emb_vision``; row = height first).
    * RoPE-ViT (Heo et al.'s code) uses base 100 for axial RoPE and puts the x (column) axis
      first, in the interleaved layout: ``axial_rope_2d(x, cols, rows, base=100)``.
    * EVA-02 (Fang et al. 2023, https://arxiv.org/abs/2303.11331; code: baaivision/EVA,
      ``EVA-02/asuka/rope.py``) also gives one half of the head to each axis (interleaved pairs,
      rows first) and, fine-tuned at another resolution, rescales the positions to the pre-training
      grid. Check a model's code before reusing its weights.

    Args:
        x: floating tensor ``(..., seq_len, head_dim)`` with ``head_dim % 4 == 0``.
        rows, cols: integer tensors broadcastable to ``x.shape[:-1]`` (e.g. ``(seq_len,)`` from
            :func:`grid_positions`), in patches.
        base: frequency base ``> 0``.
        layout: ``"interleaved"`` (pairs ``(2j, 2j+1)``) or ``"half"`` (pairs ``(j, j + d/2)``).

    Returns:
        Tensor of the (broadcast) shape and dtype of ``x``; angles in float32 (float64 for
        float64 ``x``).

    Raises:
        TypeError: for a non-floating ``x`` or non-integer positions.
        ValueError: if ``head_dim`` is not a multiple of 4, positions do not broadcast,
            ``base <= 0`` or the layout is unknown.
    """
    x = _check_x(x)
    head_dim = _check_head_dim_4(x.shape[-1])
    base = check_positive_float("base", base)
    f_row, f_col = axial_frequencies_2d(head_dim, base)
    return mixed_rope_2d(x, rows, cols, f_row, f_col, layout=layout)


# --- M-RoPE (Qwen2-VL) ---------------------------------------------------------------------------


def _check_segment(index: int, segment: object) -> tuple[int, ...]:
    if isinstance(segment, bool):
        raise TypeError(f"segment {index} must be an int (text) or a (t, h, w) tuple (vision), got bool")
    if isinstance(segment, (int, np.integer)):
        if segment < 1:
            raise ValueError(f"segment {index}: a text run needs >= 1 token, got {segment}")
        return (int(segment),)
    if isinstance(segment, (tuple, list)) and len(segment) == 3:
        grid = tuple(check_int(f"segment {index} grid size", size, minimum=0) for size in segment)
        if min(grid) < 1:
            raise ValueError(f"segment {index}: an empty vision grid {grid}; t, h and w must all be >= 1")
        return grid
    raise TypeError(f"segment {index} must be an int (text length) or a (t, h, w) tuple (vision grid), got {segment!r}")


def mrope_position_ids(segments: Sequence) -> torch.Tensor:
    """The 3-D position ids (temporal, height, width) of a text + image + video sequence (Qwen2-VL M-RoPE).

    Rules (Wang et al. 2024, §2.1):

    * a text run of ``n`` tokens advances all three rows together: ``s, s+1, …, s+n−1``;
    * a vision grid ``(t, h, w)`` (in the language model's units, after patch merging) gets
      ``(s + τ, s + i, s + j)`` for temporal patch ``τ``, row ``i`` and column ``j``, listed
      temporal patch by temporal patch and row by row (Qwen2-VL's temporal patch is two frames);
    * whatever comes next starts at one past the largest id so far: after a grid,
      ``s + max(t, h, w)``, not ``s + t·h·w``.

    Here ``s`` is the current start (0 at the beginning). An image is a grid with ``t = 1``.
    This equals Hugging Face ``Qwen2VLModel.get_rope_index`` (checked with transformers 5.24; see
    :func:`qwen2_vl_rope_index`) whenever every grid has ``t <= max(h, w)``. For a video with more
    temporal patches (``t``) than rows and columns, transformers 5.24 continues at
    ``s + max(h, w)``, so the temporal ids of the last temporal patches reach into those of the
    following text; the paper's rule (and the ``max() + 1`` of transformers 4.x) continues at
    ``s + max(t, h, w)``, as this function does. The ids printed in huggingface/transformers issue
    #45381 show the Qwen2.5-VL code changing to this after 5.2.0; other versions were not checked.

    Args:
        segments: a sequence of text-run lengths (``int >= 1``) and vision grids (``(t, h, w)``,
            three ints ``>= 1``), in prompt order.

    Returns:
        int64 tensor of shape ``(3, total)``, ``total = Σ n + Σ t·h·w``; rows are temporal,
        height, width.

    Raises:
        TypeError: for a segment that is neither an int nor a 3-tuple of ints.
        ValueError: for no segments, an empty text run or a grid with a zero size.
    """
    if isinstance(segments, (str, bytes)) or not isinstance(segments, Sequence):
        raise TypeError(f"segments must be a sequence of ints and (t, h, w) tuples, got {type(segments).__name__}")
    if len(segments) == 0:
        raise ValueError("segments must not be empty")
    parts = []
    start = 0
    for index, segment in enumerate(segments):
        checked = _check_segment(index, segment)
        if len(checked) == 1:
            ids = torch.arange(start, start + checked[0]).expand(3, -1)
            start += checked[0]
        else:
            t, h, w = checked
            grids = torch.meshgrid(torch.arange(t), torch.arange(h), torch.arange(w), indexing="ij")
            ids = torch.stack([g.flatten() for g in grids]) + start
            start += max(t, h, w)
        parts.append(ids)
    return torch.cat(parts, dim=1).to(torch.int64)


def _check_section(mrope_section: object, pairs: int) -> list[int]:
    if isinstance(mrope_section, (str, bytes)) or not isinstance(mrope_section, Sequence) or len(mrope_section) != 3:
        raise ValueError(f"mrope_section must be three ints (temporal, height, width pairs), got {mrope_section!r}")
    section = [check_int("mrope_section entry", s, minimum=0) for s in mrope_section]
    if sum(section) != pairs:
        raise ValueError(
            f"mrope_section {section} must sum to head_dim / 2 = {pairs} (every rotated pair belongs to one axis), "
            f"got {sum(section)}"
        )
    return section


def apply_mrope(
    x: torch.Tensor, position_ids: torch.Tensor, mrope_section: Sequence[int], *, base: float = 10000.0
) -> torch.Tensor:
    """Multimodal RoPE (Qwen2-VL, §2.1) in the half layout: each pair takes one of three position rows.

    The ``d/2`` pairs keep RoFormer's frequencies ``θ_j = base^(−2j/d)`` and are split in order
    into ``mrope_section = [s_t, s_h, s_w]``: pairs ``0 … s_t − 1`` (the fastest) turn with the
    temporal id, the next ``s_h`` with the height id, the last ``s_w`` (the slowest) with the width
    id. Pair ``j`` rotates dimensions ``(j, j + d/2)``. Equal to Hugging Face
    ``Qwen2VLRotaryEmbedding`` + ``apply_rotary_pos_emb`` (Qwen2-VL uses ``[16, 24, 24]`` with
    head_dim 128), and to ``apply_rope(x, p, layout="half")`` when all three rows equal ``p``.

    Args:
        x: floating tensor ``(..., seq_len, head_dim)``, ``head_dim`` even.
        position_ids: integer tensor ``(3, *P)`` with ``P`` broadcastable to ``x.shape[:-1]``, e.g.
            ``(3, seq_len)`` from :func:`mrope_position_ids`, or ``(3, batch, 1, seq_len)`` for
            ``x`` of shape ``(batch, heads, seq_len, head_dim)``.
        mrope_section: three ints ``>= 0`` summing to ``head_dim / 2``.
        base: frequency base ``> 0``.

    Returns:
        Tensor of the (broadcast) shape and dtype of ``x``; angles in float32 (float64 for
        float64 ``x``).

    Raises:
        TypeError: for a non-floating ``x`` or non-integer ids.
        ValueError: for an odd ``head_dim``, ids whose first dimension is not 3 or that do not
            broadcast, or a section that does not fill the pairs.
    """
    x = _check_x(x)
    head_dim = check_head_dim(x.shape[-1])
    base = check_positive_float("base", base)
    pairs = head_dim // 2
    section = _check_section(mrope_section, pairs)
    if not isinstance(position_ids, torch.Tensor) or position_ids.ndim < 2 or position_ids.shape[0] != 3:
        raise ValueError(
            "position_ids must be an integer tensor of shape (3, ..., seq_len) (temporal, height, width), "
            f"got {tuple(getattr(position_ids, 'shape', ()))}"
        )
    ids = [_check_positions(position_ids[axis], x.shape[:-1], x.device) for axis in range(3)]
    dtype = _angle_dtype(x.dtype)
    freqs = torch.as_tensor(rope_frequencies(head_dim, base), dtype=dtype, device=x.device)
    axis_of_pair = torch.repeat_interleave(torch.arange(3), torch.tensor(section)).to(x.device)
    stacked = torch.stack(torch.broadcast_tensors(*ids)).to(dtype)  # (3, *P)
    angles = torch.stack([stacked[axis] for axis in range(3)], dim=-1)[..., axis_of_pair] * freqs
    return _rotate(x, torch.cos(angles), torch.sin(angles), "half", head_dim)


def _transformers_major_minor(version: str) -> tuple[int, int]:
    """``(major, minor)`` of a version string such as ``"5.3.0"`` or ``"5.10.0.dev0"``; ``(0, 0)`` if unreadable."""
    match = re.match(r"(\d+)\.(\d+)", version)
    return (int(match[1]), int(match[2])) if match else (0, 0)


def qwen2_vl_rope_index(segments: Sequence, *, spatial_merge_size: int = 2) -> torch.Tensor:
    """The position ids Hugging Face ``Qwen2VLModel.get_rope_index`` gives the prompt ``segments``.

    Needs transformers 5.3 or newer with PyTorch: ``get_rope_index`` takes ``mm_token_type_ids``
    from 5.3 on (transformers 4.x and 5.0–5.2 call it differently).

    Builds a tiny randomly initialised Qwen2-VL (a few hundred thousand parameters; no weights
    are downloaded), lays the prompt out as ``input_ids`` and ``mm_token_type_ids`` (a grid with
    ``t = 1`` is an image, otherwise a video) with the grids in vision-encoder patches
    (``h · spatial_merge_size``, ``w · spatial_merge_size``), and returns its ids. For reading
    :func:`mrope_position_ids` beside the reference; the tests use it as their oracle.

    No ``<|vision_start|>`` / ``<|vision_end|>`` tokens are laid out, so two images (or two
    videos) with no text segment between them are refused: ``get_rope_index`` would read their
    tokens as one grid. Real prompts have those marker tokens between grids; write them here as a
    text segment, e.g. ``[2, (1, 2, 2), 2, (1, 2, 3), 1]``.

    Args:
        segments: as :func:`mrope_position_ids` (grids in the language model's units).
        spatial_merge_size: Qwen2-VL merges ``2 × 2`` encoder patches into one token.

    Returns:
        int64 tensor ``(3, total)``.

    Raises:
        ImportError: unless ``transformers`` 5.3 or newer is installed and can use PyTorch
            (``ModuleNotFoundError``, its subclass, when it is missing).
        TypeError / ValueError: for bad segments, as :func:`mrope_position_ids`.
        ValueError: for two images (or two videos) with no text segment between them.
    """
    mrope_position_ids(segments)  # validate first
    kinds = [0 if not isinstance(s, (tuple, list)) else 1 if int(s[0]) == 1 else 2 for s in segments]
    for index in range(1, len(kinds)):
        if kinds[index] and kinds[index] == kinds[index - 1]:
            kind = "images" if kinds[index] == 1 else "videos"
            raise ValueError(f"segments {index - 1} and {index} are two {kind} with no text between them: Hugging Face's "
                             f"get_rope_index would read their tokens as one grid; put a text segment between them "
                             f"(real prompts have <|vision_end|> and <|vision_start|> tokens there)")
    merge = check_int("spatial_merge_size", spatial_merge_size, minimum=1)
    import transformers

    need = ("qwen2_vl_rope_index needs transformers >= 5.3 with PyTorch "
            "(get_rope_index takes mm_token_type_ids from 5.3 on)")
    if _transformers_major_minor(transformers.__version__) < (5, 3):
        raise ImportError(f'{need}, found transformers {transformers.__version__}: pip install "transformers>=5.3,<6"')
    if not transformers.is_torch_available():
        raise ImportError(f"{need}, but transformers {transformers.__version__} cannot use torch {torch.__version__} "
                          f"here (transformers 5 needs torch >= 2.6)")
    from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLConfig
    from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLModel

    text = dict(hidden_size=32, num_attention_heads=2, num_key_value_heads=1, num_hidden_layers=1,
                intermediate_size=32, vocab_size=200, bos_token_id=1, eos_token_id=2)
    vision = dict(depth=1, embed_dim=16, hidden_size=32, num_heads=2, spatial_merge_size=merge)
    config = Qwen2VLConfig(text_config=text, vision_config=vision, image_token_id=151, video_token_id=152,
                           vision_start_token_id=153, vision_end_token_id=154)
    model = Qwen2VLModel(config)
    tokens, types, images, videos = [], [], [], []
    for segment in segments:
        if not isinstance(segment, (tuple, list)):
            tokens += [5] * int(segment)
            types += [0] * int(segment)
            continue
        t, h, w = (int(s) for s in segment)
        kind = 1 if t == 1 else 2
        tokens += [config.image_token_id if kind == 1 else config.video_token_id] * (t * h * w)
        types += [kind] * (t * h * w)
        (images if kind == 1 else videos).append([t, h * merge, w * merge])
    with torch.no_grad():
        ids, _ = model.get_rope_index(
            torch.tensor([tokens]), torch.tensor([types]),
            image_grid_thw=torch.tensor(images) if images else None,
            video_grid_thw=torch.tensor(videos) if videos else None,
        )
    return ids[:, 0].to(torch.int64)
