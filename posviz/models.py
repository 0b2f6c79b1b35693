"""One small Transformer family with a pluggable position method.

The only thing that changes between two models built here with different ``position`` is
where and how position enters; embedding, blocks, head, initialisation and training are the
same. This is what lets notebooks 02, 04, 05 and 06 compare methods fairly. The methods
themselves, and how each plugs in, are in :mod:`posviz.methods`.

Paired initial weights: after ``torch.manual_seed(s)``, two models that differ only in
``position`` start from identical token-embedding, attention-projection, MLP, norm and head
weights (every parameter both have, with the same name and shape, is equal). The shared parts
draw from the global random stream in the order a ``"none"`` model draws them; the
method-specific modules (a learned table, Shaw's tables, T5's bias, …) are built from their
own generator, seeded from the state of the global stream without consuming it. So a method
that draws nothing of its own (``"none"``, ``"sinusoidal"``, ``"rope"``, ``"alibi"``) leaves
the global stream exactly where a ``"none"`` model leaves it.
"""

from __future__ import annotations

import contextlib
import hashlib
import math

import torch
from torch import nn

from ._checks import check_int
from .attention import MultiheadSelfAttention
from .methods import POSITION_METHODS, PositionMethod

__all__ = ["TinyTransformer"]


def _stream_key() -> bytes:
    """The state of torch's global CPU generator, read without drawing from it."""
    return torch.random.get_rng_state().numpy().tobytes()


@contextlib.contextmanager
def _own_stream(key: bytes, tag: str):
    """Run the body on a private random stream seeded by ``(key, tag)``; restore the global one after."""
    seed = int.from_bytes(hashlib.blake2b(key + tag.encode(), digest_size=8).digest(), "little") >> 1
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def _copy_shared(source: nn.Module, target: nn.Module) -> None:
    """Copy every parameter of ``source`` into the parameter of ``target`` with its name and shape."""
    own = dict(target.named_parameters())
    with torch.no_grad():
        for name, value in source.named_parameters():
            if name in own and own[name].shape == value.shape:
                own[name].copy_(value)


class _Block(nn.Module):
    """Pre-LayerNorm Transformer block: x + attn(LN(x)), then x + MLP(LN(x))."""

    def __init__(self, attention: MultiheadSelfAttention, d_model: int, mlp_ratio: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = attention
        self.norm2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, mlp_ratio * d_model), nn.GELU(), nn.Linear(mlp_ratio * d_model, d_model)
        )

    def forward(self, x, positions, key_padding_mask):
        attended, weights = self.attn(self.norm1(x), positions=positions, key_padding_mask=key_padding_mask)
        x = x + attended
        return x + self.mlp(self.norm2(x)), weights


class TinyTransformer(nn.Module):
    """A small Transformer encoder (or decoder, with ``causal=True``) that predicts per token.

    token embedding × √d_model → optional input position layer → ``num_layers`` pre-LN blocks
    → LayerNorm → linear head. Sequence-level tasks read the output at one position (e.g. a
    ``[CLS]`` token at position 0), so every task in :mod:`posviz.tasks` is per-token.

    Args:
        vocab_size: number of token ids, ``>= 1``.
        num_outputs: size of the output layer (defaults to ``vocab_size``).
        d_model, num_heads, num_layers, mlp_ratio: the usual sizes.
        position: a name in :data:`posviz.POSITION_METHODS` or a :class:`~posviz.methods.PositionMethod`.
        max_len: rows of an absolute table (``"sinusoidal"``, ``"learned"``) or the cache
            size of an attention method; positions ``>= max_len`` raise ``ValueError`` for the
            learned table.
        causal: decoder-style masking.

    Initial weights are paired across position methods: after the same ``torch.manual_seed``,
    every parameter two models share (same name and shape) is equal, and method-specific
    parameters come from their own random stream (module docstring).

    Shapes:
        ``forward(tokens, positions=None, key_padding_mask=None, return_attention=False)``:
        ``tokens`` is ``(batch, seq_len)`` int64; returns logits ``(batch, seq_len, num_outputs)``
        float32, plus (if ``return_attention``) a list of ``num_layers`` weight tensors of shape
        ``(batch, num_heads, seq_len, seq_len)``.

    Raises:
        ValueError: for an unknown position method or bad sizes.
    """

    def __init__(
        self,
        vocab_size: int,
        *,
        num_outputs: int | None = None,
        d_model: int = 64,
        num_heads: int = 4,
        num_layers: int = 2,
        mlp_ratio: int = 4,
        position: str | PositionMethod = "sinusoidal",
        max_len: int = 512,
        causal: bool = False,
    ) -> None:
        super().__init__()
        vocab_size = check_int("vocab_size", vocab_size, minimum=1)
        num_outputs = vocab_size if num_outputs is None else check_int("num_outputs", num_outputs, minimum=1)
        check_int("num_layers", num_layers, minimum=1)
        self.max_len = check_int("max_len", max_len, minimum=1)
        if isinstance(position, str):
            if position not in POSITION_METHODS:
                raise ValueError(f"unknown position method {position!r}; choose from {sorted(POSITION_METHODS)}")
            position = POSITION_METHODS[position]
        if not isinstance(position, PositionMethod):
            raise TypeError(f"position must be a str or PositionMethod, got {type(position).__name__}")
        self.position_method = position.name
        self.d_model = check_int("d_model", d_model, minimum=1)
        self.causal = bool(causal)
        self.embed = nn.Embedding(vocab_size, d_model)
        # std d^-1/2, so that after the ×√d_model scale (Vaswani §3.4) tokens have unit-size
        # entries, comparable with a [-1, 1] position table.
        nn.init.normal_(self.embed.weight, std=d_model**-0.5)
        # Pairing (see the module docstring): shared parts from the global stream, in the order a
        # "none" model draws them; method-specific modules from their own stream.
        key = _stream_key()
        self.input_position = None
        if position.input_layer is not None:
            with _own_stream(key, "input_position"):
                self.input_position = position.input_layer(d_model, max_len)
        sizes = (d_model, num_heads, self.causal, max_len)
        shared = ()
        if position.shared is not None:
            with _own_stream(key, "shared"):
                shared = (position.shared(*sizes),)
        blocks = []
        for index in range(num_layers):
            plain = MultiheadSelfAttention(d_model, num_heads, causal=self.causal)
            if position.attention is None:
                attention = plain
            else:
                with _own_stream(key, f"blocks.{index}.attn"):
                    attention = position.attention(*sizes, *shared)
                _copy_shared(plain, attention)
            blocks.append(_Block(attention, d_model, mlp_ratio))
        self.blocks = nn.ModuleList(blocks)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, num_outputs)

    def forward(
        self,
        tokens: torch.Tensor,
        positions: torch.Tensor | None = None,
        key_padding_mask: torch.Tensor | None = None,
        return_attention: bool = False,
    ):
        if tokens.ndim != 2 or tokens.dtype.is_floating_point:
            raise ValueError(f"tokens must be an integer tensor of shape (batch, seq_len), got {tuple(tokens.shape)}")
        x = self.embed(tokens) * math.sqrt(self.d_model)
        if self.input_position is not None:
            x = self.input_position(x, positions)
        if positions is None:
            positions = torch.arange(tokens.shape[1], device=tokens.device)
        maps = []
        for block in self.blocks:
            x, weights = block(x, positions, key_padding_mask)
            maps.append(weights)
        logits = self.head(self.norm(x))
        return (logits, maps) if return_attention else logits

    def num_parameters(self) -> int:
        """Number of trainable parameters."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)
