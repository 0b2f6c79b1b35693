"""Recurrent networks for notebook 01: a reference RNN step, tiny per-token RNN/GRU/LSTM
models, the gradient-norm measurement ‖∂h_T/∂x_t‖ and a forward-pass timer.

Sources:

* Elman 1990, "Finding structure in time", https://doi.org/10.1207/s15516709cog1402_1 (the
  simple recurrent network ``h_t = tanh(W_hh h_{t-1} + W_xh x_t + b)``).
* Bengio, Simard & Frasconi 1994, "Learning long-term dependencies with gradient descent is
  difficult", https://doi.org/10.1109/72.279181, and Pascanu, Mikolov & Bengio 2013, "On the
  difficulty of training recurrent neural networks", §2, https://arxiv.org/abs/1211.5063
  (``∂h_T/∂h_t`` is a product of ``T - t`` Jacobians ``diag(1 - h_k²) W_hh``. For tanh, with
  ``|tanh'| ≤ 1``, the conditions are on the largest singular value ``‖W_hh‖₂``: below 1 is
  sufficient for vanishing, above 1 is necessary for exploding. The spectral-radius version of
  these conditions holds for a *linear* RNN only: ``W_hh = 6·[[1, −1], [1, −1]]`` has spectral
  radius 0 and ``‖W_hh‖₂ = 12``, and a tanh RNN with it can still explode, see notebook 01).
* Hochreiter & Schmidhuber 1997, "Long short-term memory",
  https://doi.org/10.1162/neco.1997.9.8.1735 (LSTM).
* Cho et al. 2014, "Learning phrase representations using RNN encoder-decoder for statistical
  machine translation", §2.3, https://arxiv.org/abs/1406.1078 (GRU).
* Vaswani et al. 2017, "Attention is all you need", Table 1, https://arxiv.org/abs/1706.03762
  (per-layer cost, sequential operations and path length of recurrent vs self-attention layers).

Convention: the recurrence follows PyTorch's :class:`torch.nn.RNN`, with row vectors,
``h_t = tanh(x_t W_xhᵀ + b_xh + h_{t-1} W_hhᵀ + b_hh)``; the papers write the same thing with
column vectors and one bias ``b = b_xh + b_hh``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from ._checks import check_choice, check_int, check_positive_float

__all__ = [
    "CELLS",
    "TinyRecurrent",
    "VASWANI_TABLE_1",
    "jacobian_norms",
    "make_recurrent_layer",
    "median_seconds",
    "plot_rnn_unrolled",
    "rnn_forward",
    "set_spectral_radius",
]

#: Recurrent cells offered by :class:`TinyRecurrent` and :func:`make_recurrent_layer`.
CELLS = ("rnn", "gru", "lstm")

_TORCH_CELLS = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}

#: Vaswani et al. 2017, Table 1 (``n`` sequence length, ``d`` representation width): rows
#: are layer types, columns complexity per layer, sequential operations, maximum path length.
VASWANI_TABLE_1: dict[str, tuple[str, str, str]] = {
    "self-attention": ("O(n²·d)", "O(1)", "O(1)"),
    "recurrent": ("O(n·d²)", "O(n)", "O(n)"),
}


def rnn_forward(
    x: np.ndarray,
    w_xh: np.ndarray,
    w_hh: np.ndarray,
    b: np.ndarray,
    h0: np.ndarray | None = None,
) -> np.ndarray:
    """Run the simple (Elman) recurrence ``h_t = tanh(W_xh x_t + W_hh h_{t-1} + b)`` in float64.

    Args:
        x: inputs ``(seq_len, input_size)``, one row per step.
        w_xh: ``(hidden_size, input_size)``.
        w_hh: ``(hidden_size, hidden_size)``.
        b: ``(hidden_size,)`` (PyTorch's ``bias_ih + bias_hh``).
        h0: initial state ``(hidden_size,)``; zeros if ``None``.

    Returns:
        The states ``h_1 … h_T`` as a float64 array ``(seq_len, hidden_size)``; row ``t-1`` is
        ``h_t``. Matches ``torch.nn.RNN(nonlinearity="tanh")`` with the same weights.

    Raises:
        ValueError: if the shapes do not fit together.
    """
    x = np.asarray(x, dtype=np.float64)
    w_xh = np.asarray(w_xh, dtype=np.float64)
    w_hh = np.asarray(w_hh, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"x must have shape (seq_len, input_size), got {x.shape}")
    hidden = w_hh.shape[0]
    if w_hh.shape != (hidden, hidden):
        raise ValueError(f"w_hh must be square, got {w_hh.shape}")
    if w_xh.shape != (hidden, x.shape[1]):
        raise ValueError(f"w_xh must have shape ({hidden}, {x.shape[1]}), got {w_xh.shape}")
    if b.shape != (hidden,):
        raise ValueError(f"b must have shape ({hidden},), got {b.shape}")
    h = np.zeros(hidden) if h0 is None else np.asarray(h0, dtype=np.float64)
    if h.shape != (hidden,):
        raise ValueError(f"h0 must have shape ({hidden},), got {h.shape}")
    states = np.empty((x.shape[0], hidden))
    for step, x_t in enumerate(x):
        h = np.tanh(w_xh @ x_t + w_hh @ h + b)
        states[step] = h
    return states


def set_spectral_radius(layer: nn.RNN, radius: float, *, orthogonal: bool = True, seed: int = 0) -> nn.RNN:
    """Give a one-layer :class:`torch.nn.RNN` a recurrent matrix ``W_hh`` of spectral radius ``radius``.

    With ``orthogonal=True`` (default) ``W_hh = radius · Q`` for a random orthogonal ``Q``, so every
    eigenvalue *and* every singular value has size ``radius``: the linearised gradient shrinks or
    grows by exactly ``radius`` per step (Pascanu et al. 2013, §2.1). With ``orthogonal=False``
    the current ``W_hh`` is rescaled to that spectral radius.

    Args:
        layer: a single-layer ``nn.RNN``; modified in place.
        radius: target spectral radius, ``> 0``.
        orthogonal: draw a fresh orthogonal matrix (seeded by ``seed``) instead of rescaling.
        seed: seed for the orthogonal matrix.

    Returns:
        ``layer``.

    Raises:
        TypeError: if ``layer`` is not an ``nn.RNN``. ValueError: if it has more than one layer
        or ``radius`` is not positive.
    """
    if not isinstance(layer, nn.RNN):
        raise TypeError(f"layer must be a torch.nn.RNN, got {type(layer).__name__}")
    if layer.num_layers != 1:
        raise ValueError(f"layer must have one layer, got {layer.num_layers}")
    radius = check_positive_float("radius", radius)
    with torch.no_grad():
        w = layer.weight_hh_l0
        if orthogonal:
            generator = torch.Generator().manual_seed(seed)
            a = torch.randn(w.shape, generator=generator, dtype=torch.float64)
            q, r = torch.linalg.qr(a)
            q = q * torch.sign(torch.diagonal(r))  # a uniformly random orthogonal matrix
            new = radius * q
        else:
            current = torch.linalg.eigvals(w.double()).abs().max()
            new = w.double() * (radius / current)
        w.copy_(new.to(w.dtype))
    return layer


def make_recurrent_layer(
    cell: str,
    input_size: int,
    hidden_size: int,
    *,
    seed: int = 0,
    spectral_radius: float | None = None,
    dtype: torch.dtype = torch.float64,
) -> nn.RNNBase:
    """A one-layer, batch-first ``nn.RNN`` (tanh), ``nn.GRU`` or ``nn.LSTM`` at PyTorch's default initialisation.

    Args:
        cell: ``"rnn"``, ``"gru"`` or ``"lstm"``.
        input_size, hidden_size: sizes, ``>= 1``.
        seed: seeds the initial weights (through a forked RNG, so global state is untouched).
        spectral_radius: for ``"rnn"`` only: rebuild ``W_hh`` with :func:`set_spectral_radius`.
        dtype: parameter dtype (float64 by default, for gradient measurements).

    Returns:
        The layer, in eval mode.

    Raises:
        ValueError: for an unknown ``cell``, bad sizes, or ``spectral_radius`` with a gated cell.
    """
    check_choice("cell", cell, CELLS)
    input_size = check_int("input_size", input_size, minimum=1)
    hidden_size = check_int("hidden_size", hidden_size, minimum=1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        layer = _TORCH_CELLS[cell](input_size, hidden_size, batch_first=True).to(dtype)
    if spectral_radius is not None:
        if cell != "rnn":
            raise ValueError(f"spectral_radius applies to the plain 'rnn' cell only, got cell={cell!r}")
        set_spectral_radius(layer, spectral_radius, seed=seed)
    return layer.eval()


def jacobian_norms(layer: nn.RNNBase, x: torch.Tensor) -> torch.Tensor:
    """Frobenius norms ``‖∂h_T/∂x_t‖`` of the last state with respect to every input, by autograd.

    ``h_T`` is the layer's output at the last step (for an LSTM the hidden state ``h``, not the
    cell state ``c``). The Jacobian ``∂h_T/∂x_t`` is ``(hidden_size, input_size)``; it is built
    row by row with ``hidden_size`` backward passes, batched over samples. For the plain RNN it
    equals the product of Jacobians ``∏ₖ diag(1 - h_k²) W_hh`` times ``diag(1 - h_t²) W_xh``
    (Pascanu et al. 2013, §2.1).

    Args:
        layer: a batch-first, single-direction ``nn.RNN``, ``nn.GRU`` or ``nn.LSTM``.
        x: inputs ``(batch, seq_len, input_size)`` of the layer's dtype.

    Returns:
        ``(batch, seq_len)`` tensor (same dtype as ``x``); entry ``[b, t]`` is the norm for the
        input at step ``t`` (0-based), i.e. at distance ``seq_len - 1 - t`` from the last step.

    Raises:
        TypeError: if ``layer`` is not an ``nn.RNNBase``. ValueError: for a layer that is not
        batch-first or is bidirectional, or for an ``x`` of the wrong shape.
    """
    if not isinstance(layer, nn.RNNBase):
        raise TypeError(f"layer must be an nn.RNN, nn.GRU or nn.LSTM, got {type(layer).__name__}")
    if not layer.batch_first or layer.bidirectional:
        raise ValueError("layer must be batch_first=True and unidirectional")
    if x.ndim != 3 or x.shape[-1] != layer.input_size:
        raise ValueError(f"x must have shape (batch, seq_len, {layer.input_size}), got {tuple(x.shape)}")
    x = x.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        out, _ = layer(x)
        last = out[:, -1]  # (batch, hidden)
        squares = torch.zeros(x.shape[:2], dtype=x.dtype)
        for i in range(last.shape[1]):
            (grad,) = torch.autograd.grad(last[:, i].sum(), x, retain_graph=i + 1 < last.shape[1])
            squares += grad.pow(2).sum(-1)  # samples are independent, so rows do not mix
    return squares.sqrt().detach()


class TinyRecurrent(nn.Module):
    """A per-token recurrent tagger: embedding → one RNN/GRU/LSTM layer → linear head.

    The same interface as :class:`posviz.TinyTransformer`, so :func:`posviz.train` and
    :func:`posviz.evaluate` work unchanged. The recurrence runs left to right only, so the
    output at position ``i`` depends on tokens ``0 … i`` (like a causal Transformer).

    Args:
        vocab_size: number of token ids, ``>= 1``.
        num_outputs: size of the output layer (defaults to ``vocab_size``).
        cell: ``"rnn"`` (Elman, tanh), ``"gru"`` (Cho et al. 2014) or ``"lstm"``
            (Hochreiter & Schmidhuber 1997).
        hidden_size: width of the state ``h_t``.
        embed_dim: width of the token embedding (defaults to ``hidden_size``).

    Shapes:
        ``forward(tokens)``: ``tokens`` ``(batch, seq_len)`` int64 → logits
        ``(batch, seq_len, num_outputs)`` float32.

    Raises:
        ValueError: for an unknown ``cell`` or bad sizes.
    """

    def __init__(
        self,
        vocab_size: int,
        *,
        num_outputs: int | None = None,
        cell: str = "rnn",
        hidden_size: int = 32,
        embed_dim: int | None = None,
    ) -> None:
        super().__init__()
        vocab_size = check_int("vocab_size", vocab_size, minimum=1)
        num_outputs = vocab_size if num_outputs is None else check_int("num_outputs", num_outputs, minimum=1)
        self.cell = check_choice("cell", cell, CELLS)
        hidden_size = check_int("hidden_size", hidden_size, minimum=1)
        embed_dim = hidden_size if embed_dim is None else check_int("embed_dim", embed_dim, minimum=1)
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.rnn = _TORCH_CELLS[cell](embed_dim, hidden_size, batch_first=True)
        self.head = nn.Linear(hidden_size, num_outputs)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        if tokens.ndim != 2 or tokens.dtype.is_floating_point:
            raise ValueError(f"tokens must be an integer tensor of shape (batch, seq_len), got {tuple(tokens.shape)}")
        states, _ = self.rnn(self.embed(tokens))
        return self.head(states)

    def num_parameters(self) -> int:
        """Number of trainable parameters."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


def median_seconds(fn: Callable[[], object], *, repeats: int = 5, warmup: int = 1) -> float:
    """Median wall time of ``fn()`` in seconds, over ``repeats`` calls after ``warmup`` untimed ones.

    Runs under ``torch.inference_mode()``. The median resists the odd slow call caused by other
    programs; timings still depend on the machine and its load, so show them, never assert them.

    Args:
        fn: a callable taking no arguments (e.g. ``lambda: layer(x)``).
        repeats: timed calls, ``>= 1``.
        warmup: untimed calls first, ``>= 0``.

    Returns:
        Seconds (float).

    Raises:
        TypeError: if ``fn`` is not callable or the counts are not ints. ValueError: for counts
        out of range.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    repeats = check_int("repeats", repeats, minimum=1)
    warmup = check_int("warmup", warmup, minimum=0)
    times = []
    with torch.inference_mode():
        for _ in range(warmup):
            fn()
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def plot_rnn_unrolled(
    tokens: list[str] | tuple[str, ...],
    *,
    ax=None,
    title: str | None = None,
    cell_label: str = "RNN",
):
    """Draw a recurrent network unrolled over ``tokens``: x⟨t⟩ → cell → y⟨t⟩, with a⟨t⟩ passed right.

    One box per step, all labelled ``cell_label`` because every step uses the same weights
    (``W_ax``, ``W_aa``, ``W_ya``, written on the first step). The state ``a⟨0⟩`` enters on the
    left; the state ``a⟨t⟩`` leaves step ``t`` for step ``t + 1``. The notation (``x⟨t⟩``,
    ``a⟨t⟩``, ``y⟨t⟩``) follows the ``h⟨t⟩`` superscripts of Cho et al. 2014, eq. 1; ``a`` and
    ``h`` name the same hidden state.

    Args:
        tokens: the input tokens, 1 to 12 strings (drawn under ``x⟨1⟩ … x⟨T⟩``).
        ax: axes to draw on (a new wide figure if ``None``).
        title: axes title.
        cell_label: text inside every cell box.

    Returns:
        The axes (axis lines hidden, equal aspect).

    Raises:
        TypeError: if ``tokens`` is not a list or tuple of ``str``.
        ValueError: if it holds fewer than 1 or more than 12 tokens.
    """
    from matplotlib.patches import FancyBboxPatch

    from .style import t

    if not isinstance(tokens, (list, tuple)) or not all(isinstance(w, str) for w in tokens):
        raise TypeError("tokens must be a list or tuple of str")
    n = len(tokens)
    if not 1 <= n <= 12:
        raise ValueError(f"tokens must hold 1 to 12 items to stay readable, got {n}")
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(min(2.0 + 1.9 * n, 16.0), 4.6))
    gap, width, height = 2.0, 1.0, 0.7
    arrow = {"arrowstyle": "-|>", "lw": 1.6, "color": "0.25", "shrinkA": 0, "shrinkB": 0}
    state_colour, in_colour, out_colour = "C0", "C2", "C1"
    for step in range(1, n + 1):
        x = gap * step
        ax.add_patch(
            FancyBboxPatch(
                (x - width / 2, -height / 2), width, height,
                boxstyle="round,pad=0.05", facecolor="#dbe9f6", edgecolor=state_colour, lw=2,
                gid=f"cell-{step}",
            )
        )
        ax.text(x, 0, cell_label, ha="center", va="center", fontsize=12, fontweight="bold")
        # input x<t> and its token
        ax.annotate("", xy=(x, -height / 2 - 0.05), xytext=(x, -1.25), arrowprops=arrow)
        ax.text(x, -1.45, rf"$x^{{\langle {step} \rangle}}$", ha="center", va="center", fontsize=15, color=in_colour)
        ax.text(x, -1.95, tokens[step - 1], ha="center", va="center", fontsize=12,
                bbox={"boxstyle": "round,pad=0.25", "facecolor": "white", "edgecolor": in_colour})
        # output y<t>
        ax.annotate("", xy=(x, 1.25), xytext=(x, height / 2 + 0.05), arrowprops=arrow)
        ax.text(x, 1.5, rf"$\hat{{y}}^{{\langle {step} \rangle}}$", ha="center", va="center", fontsize=15, color=out_colour)
        # state a<t-1> arriving from the left
        ax.annotate("", xy=(x - width / 2 - 0.05, 0), xytext=(x - gap + width / 2 + 0.05, 0), arrowprops=arrow)
        ax.text(x - gap / 2, 0.22, rf"$a^{{\langle {step - 1} \rangle}}$", ha="center", va="bottom", fontsize=14, color=state_colour)
    # the last state leaves to the right
    last = gap * n
    ax.annotate("", xy=(last + gap - width / 2 - 0.05, 0), xytext=(last + width / 2 + 0.05, 0), arrowprops=arrow)
    ax.text(last + gap / 2, 0.22, rf"$a^{{\langle {n} \rangle}}$", ha="center", va="bottom", fontsize=14, color=state_colour)
    # shared weights, written once
    ax.text(gap - 0.1, -0.85, r"$W_{ax}$", ha="right", va="center", fontsize=11, color="0.3")
    ax.text(gap - 0.1, 0.85, r"$W_{ya}$", ha="right", va="center", fontsize=11, color="0.3")
    ax.text(gap / 2, -0.22, r"$W_{aa}$", ha="center", va="top", fontsize=11, color="0.3")
    ax.text(gap * (n + 1) / 2, -2.55, t("모든 단계가 같은 가중치를 쓴다", "every step uses the same weights"),
            ha="center", va="center", fontsize=11, color="0.3")
    ax.set_xlim(gap / 2 - 0.6, last + gap - 0.1)
    ax.set_ylim(-2.85, 1.9)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title)
    return ax
