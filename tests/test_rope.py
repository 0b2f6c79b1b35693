"""Rotary position embedding: values against the paper's formulas, conventions, dtypes, errors."""

import math

import numpy as np
import pytest
import torch

import posviz
from posviz import (
    RotaryEmbedding,
    RotaryMultiheadAttention,
    apply_rope,
    interleaved_to_half,
    ntk_scaled_base,
    rope_decay_bound,
    rope_frequencies,
    rope_rotation_matrix,
)


def _block_matrix(m, d, base=10000.0, layout="interleaved"):
    """R^d_{Θ,m} of RoFormer eq. 15, written out pair by pair (independent of posviz)."""
    r = np.zeros((d, d))
    for i in range(d // 2):
        theta = base ** (-2.0 * i / d)
        a, b = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + d // 2)
        c, s = math.cos(m * theta), math.sin(m * theta)
        r[a, a], r[a, b], r[b, a], r[b, b] = c, -s, s, c
    return r


def test_frequencies_known_values():
    np.testing.assert_allclose(rope_frequencies(8), [1.0, 0.1, 0.01, 0.001], rtol=1e-15)
    np.testing.assert_allclose(rope_frequencies(4, base=100.0), [1.0, 0.1], rtol=1e-15)
    freqs = rope_frequencies(128, base=500000.0)
    assert freqs.shape == (64,) and freqs.dtype == np.float64
    assert freqs[-1] == pytest.approx(500000.0 ** (-126 / 128), rel=1e-14)


def test_small_example_by_hand():
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64).expand(4, 4)  # positions 0..3
    out = apply_rope(x)
    c0, s0, c1, s1 = math.cos(3.0), math.sin(3.0), math.cos(0.03), math.sin(0.03)
    expected = [1 * c0 - 2 * s0, 2 * c0 + 1 * s0, 3 * c1 - 4 * s1, 4 * c1 + 3 * s1]
    np.testing.assert_allclose(out[3], expected, atol=1e-14)
    np.testing.assert_allclose(out[0], [1.0, 2.0, 3.0, 4.0], atol=1e-15)  # position 0: identity
    # half layout pairs (0, 2) and (1, 3)
    half = apply_rope(x, layout="half")
    expected = [1 * c0 - 3 * s0, 2 * c1 - 4 * s1, 3 * c0 + 1 * s0, 4 * c1 + 2 * s1]
    np.testing.assert_allclose(half[3], expected, atol=1e-14)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("base", [10000.0, 500000.0])
def test_matches_block_diagonal_matrix(layout, base):
    gen = torch.Generator().manual_seed(0)
    d = 16
    x = torch.randn(2, 3, 50, d, dtype=torch.float64, generator=gen)
    positions = torch.tensor([0, 1, 7, 49, 1000, 4095] + list(range(44)))
    out = apply_rope(x, positions, base=base, layout=layout)
    for col, m in enumerate(positions.tolist()):
        r = _block_matrix(m, d, base, layout)
        np.testing.assert_allclose(out[:, :, col], x[:, :, col].numpy() @ r.T, atol=1e-12)
        np.testing.assert_allclose(rope_rotation_matrix(m, d, base=base, layout=layout), r, atol=1e-15)


def test_interleaved_is_the_complex_multiplication():
    """Meta's Llama form: view pairs as complex numbers and multiply by e^{i m θ}."""
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(3, 40, 32, dtype=torch.float64, generator=gen)
    angles = torch.arange(40, dtype=torch.float64)[:, None] * torch.from_numpy(rope_frequencies(32))
    z = torch.view_as_complex(x.reshape(3, 40, 16, 2).contiguous()) * torch.polar(torch.ones_like(angles), angles)
    np.testing.assert_allclose(apply_rope(x), torch.view_as_real(z).reshape(3, 40, 32), atol=1e-12)


def test_layouts_differ_by_a_fixed_permutation():
    gen = torch.Generator().manual_seed(2)
    d = 64
    perm = torch.from_numpy(interleaved_to_half(d))
    np.testing.assert_array_equal(perm[:4], [0, 2, 4, 6])
    np.testing.assert_array_equal(perm[32:36], [1, 3, 5, 7])
    np.testing.assert_array_equal(perm[torch.from_numpy(posviz.half_to_interleaved(d))], np.arange(d))
    q, k = (torch.randn(30, d, dtype=torch.float64, generator=gen) for _ in range(2))
    np.testing.assert_allclose(
        apply_rope(q[:, perm], layout="half"), apply_rope(q, layout="interleaved")[:, perm], atol=1e-12
    )
    scores_inter = apply_rope(q) @ apply_rope(k).T
    scores_perm = apply_rope(q[:, perm], layout="half") @ apply_rope(k[:, perm], layout="half").T
    scores_raw = apply_rope(q, layout="half") @ apply_rope(k, layout="half").T
    np.testing.assert_allclose(scores_perm, scores_inter, atol=1e-10)
    assert (scores_raw - scores_inter).abs().max() > 1.0  # without the permutation they differ


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_scores_depend_only_on_the_offset(layout):
    gen = torch.Generator().manual_seed(3)
    q, k = (torch.randn(1, 32, dtype=torch.float64, generator=gen) for _ in range(2))
    for offset in (-7, 0, 3, 50):
        scores = []
        for m in (0, 1, 10, 123, 999):
            qm = apply_rope(q, torch.tensor([m]), layout=layout)
            kn = apply_rope(k, torch.tensor([m + offset]), layout=layout)
            scores.append(float(qm @ kn.T))
        expected = float(q @ torch.from_numpy(_block_matrix(offset, 32, layout=layout)) @ k.T)  # eq. 16
        np.testing.assert_allclose(scores, expected, atol=1e-10)


def test_norms_are_preserved_and_position_zero_is_identity():
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(4, 100, 48, dtype=torch.float64, generator=gen)
    for layout in ("interleaved", "half"):
        out = apply_rope(x, layout=layout)
        np.testing.assert_allclose(out.norm(dim=-1), x.norm(dim=-1), rtol=1e-13)
        np.testing.assert_allclose(out[:, 0], x[:, 0], atol=0)


@pytest.mark.parametrize("dtype, tol", [(torch.float16, 4e-3), (torch.bfloat16, 3e-2)])
def test_half_precision_inputs_at_long_positions(dtype, tol):
    gen = torch.Generator().manual_seed(5)
    x64 = torch.randn(2, 2048, 128, dtype=torch.float64, generator=gen)
    x = x64.to(dtype)
    out = apply_rope(x)
    assert out.dtype == dtype and out.shape == x.shape
    reference = apply_rope(x.double())  # same (rounded) input, exact rotation
    err = (out.double() - reference).abs().max().item()
    assert err <= tol * reference.abs().max().item() / 4  # about one rounding of the output
    # angles in the input's half precision are far worse at position ~2000
    pos = torch.arange(2048, dtype=dtype)[:, None]
    naive = pos * torch.from_numpy(rope_frequencies(128)).to(dtype)
    exact = torch.arange(2048, dtype=torch.float64)[:, None] * torch.from_numpy(rope_frequencies(128))
    assert (naive.double() - exact).abs().max().item() > 0.2  # radians
    # the cached module (tables from float64 angles) is as accurate
    cached = RotaryEmbedding(128, 2048)(x)
    assert cached.dtype == dtype
    assert (cached.double() - reference).abs().max().item() <= tol * reference.abs().max().item() / 4


def test_per_row_positions_for_left_padding():
    gen = torch.Generator().manual_seed(6)
    seq = torch.randn(5, 8, dtype=torch.float64, generator=gen)
    padded = torch.cat([torch.zeros(3, 8, dtype=torch.float64), seq])  # 3 pad tokens on the left
    batch = torch.stack([torch.cat([seq, torch.zeros(3, 8, dtype=torch.float64)]), padded])  # (2, 8, 8)
    mask = torch.tensor([[1] * 5 + [0] * 3, [0] * 3 + [1] * 5])
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    out = apply_rope(batch, positions)
    np.testing.assert_allclose(out[1, 3:], apply_rope(seq), atol=1e-14)
    np.testing.assert_allclose(out[0, :5], apply_rope(seq), atol=1e-14)
    # (batch, heads, seq, dim) with positions (batch, 1, seq)
    heads = batch[:, None].expand(2, 3, 8, 8)
    np.testing.assert_allclose(apply_rope(heads, positions[:, None])[:, 1], out, atol=0)


def test_attention_module_left_padding_and_shift_invariance():
    torch.manual_seed(0)
    layer = RotaryMultiheadAttention(16, 2, causal=False, max_len=16).double().eval()
    x = torch.randn(1, 6, 16, dtype=torch.float64)
    with torch.no_grad():
        plain, _ = layer(x)
        shifted, _ = layer(x, positions=torch.arange(6) + 100)  # beyond the cache
        np.testing.assert_allclose(shifted, plain, atol=1e-10)  # only offsets matter
        padded = torch.cat([torch.randn(1, 2, 16, dtype=torch.float64), x], dim=1)
        mask = torch.tensor([[False, False] + [True] * 6])
        positions = (mask.long().cumsum(-1) - 1).clamp(min=0)
        out, weights = layer(padded, positions=positions, key_padding_mask=mask)
        np.testing.assert_allclose(out[:, 2:], plain, atol=1e-10)
        assert torch.all(weights[..., :2] == 0)
    # no extra parameters compared with plain attention
    assert sum(p.numel() for p in layer.parameters()) == sum(
        p.numel() for p in posviz.MultiheadSelfAttention(16, 2).parameters()
    )


def test_rotary_embedding_cache_matches_function():
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(2, 4, 20, 32, generator=gen)
    rotary = RotaryEmbedding(32, max_len=64, layout="half", base=500.0)
    for positions in (None, torch.arange(20) + 30, torch.arange(20) + 60, torch.arange(20) - 5):
        exact = apply_rope(x.double(), positions, layout="half", base=500.0)
        np.testing.assert_allclose(rotary(x, positions), exact, atol=3e-5)
        np.testing.assert_allclose(apply_rope(x, positions, layout="half", base=500.0), exact, atol=3e-5)
    assert "cos" not in rotary.state_dict()


def test_rope_model_is_registered():
    assert "rope" in posviz.POSITION_METHODS
    torch.manual_seed(0)
    model = posviz.TinyTransformer(10, d_model=16, num_heads=2, position="rope", causal=True, max_len=8)
    assert model.input_position is None
    assert isinstance(model.blocks[0].attn, RotaryMultiheadAttention)
    assert model(torch.zeros(2, 12, dtype=torch.long)).shape == (2, 12, 10)  # longer than max_len


def test_partial_rotary():
    gen = torch.Generator().manual_seed(8)
    x = torch.randn(10, 8, dtype=torch.float64, generator=gen)
    for layout in ("interleaved", "half"):
        out = apply_rope(x, layout=layout, rotary_dim=4)
        np.testing.assert_allclose(out[:, 4:], x[:, 4:], atol=0)
        np.testing.assert_allclose(out[:, :4], apply_rope(x[:, :4], layout=layout), atol=0)


def test_position_interpolation_and_ntk_base():
    gen = torch.Generator().manual_seed(9)
    x = torch.randn(16, 8, dtype=torch.float64, generator=gen)
    even = apply_rope(x, torch.arange(16) * 2)
    np.testing.assert_allclose(apply_rope(x, torch.arange(16) * 4, position_scale=0.5), even, atol=1e-12)
    np.testing.assert_allclose(
        posviz.rope_angles([0, 2], 8, position_scale=0.25)[1], 0.5 * rope_frequencies(8), rtol=1e-15
    )
    new_base = ntk_scaled_base(10000.0, 128, 4.0)
    assert new_base == pytest.approx(10000.0 * 4.0 ** (128 / 126), rel=1e-14)
    old, new = rope_frequencies(128), rope_frequencies(128, new_base)
    assert new[0] == old[0]  # fastest pair unchanged
    assert new[-1] == pytest.approx(old[-1] / 4.0, rel=1e-12)  # slowest pair interpolated


def test_long_term_decay_bound():
    d = 128
    freqs = 10000.0 ** (-np.arange(64) * 2.0 / d)
    for r in (0, 1, 10, 100, 250):
        s = [abs(sum(complex(math.cos(r * freqs[k]), math.sin(r * freqs[k])) for k in range(j))) for j in range(1, 65)]
        assert rope_decay_bound(r, d) == pytest.approx(sum(s) / 64, rel=1e-12)
    assert rope_decay_bound(0, d) == pytest.approx(65 / 2)
    bound = rope_decay_bound(np.arange(0, 257), d)
    assert bound.shape == (257,)
    assert bound[200:].max() < bound[0] / 3  # it decays with distance (not monotonically)
    # a larger base decays more slowly
    assert rope_decay_bound(100, d, base=500000.0) > rope_decay_bound(100, d)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_gradients_flow_and_match_the_no_grad_path(layout):
    gen = torch.Generator().manual_seed(10)
    x = torch.randn(2, 5, 8, dtype=torch.float64, generator=gen, requires_grad=True)
    positions = torch.tensor([[0, 1, 2, 3, 4], [3, 9, 27, 81, 243]])
    assert torch.autograd.gradcheck(lambda t: apply_rope(t, positions, layout=layout, rotary_dim=6), (x,))
    np.testing.assert_allclose(  # autograd path vs in-place path
        apply_rope(x, positions, layout=layout).detach(), apply_rope(x.detach(), positions, layout=layout), atol=1e-15
    )
    # the gradient of a rotation is the inverse rotation: d/dx sum(w * R x) = Rᵀ w
    w = torch.randn(2, 5, 8, dtype=torch.float64, generator=gen)
    (apply_rope(x, positions, layout=layout) * w).sum().backward()
    np.testing.assert_allclose(x.grad, apply_rope(w, -positions, layout=layout), atol=1e-13)


@pytest.mark.parametrize(
    ("shape", "positions_shape"),
    [((1, 8, 1500, 128), None), ((3, 2, 2800, 96), (3, 1, 2800)), ((5, 4100, 64), None), ((300000, 4), None)],
)
def test_blocked_half_kernel_is_bit_for_bit_the_plain_one(shape, positions_shape):
    """Large inputs are rotated block by block (posviz.rope._blocks); the numbers are exactly those
    of the one-pass formula, which the autograd path computes out of place."""
    from posviz.rope import _BLOCK_ELEMENTS, _blocks

    gen = torch.Generator().manual_seed(3)
    x = torch.randn(*shape, generator=gen)
    positions = None if positions_shape is None else torch.randint(0, 9000, positions_shape, generator=gen)
    half = x.shape[-1] // 2
    assert math.prod(x.shape[:-1]) * half > 2 * _BLOCK_ELEMENTS, "big enough to be cut into blocks"
    with torch.no_grad():
        blocked = apply_rope(x, positions, layout="half", rotary_dim=2 * half)
    plain = apply_rope(x.requires_grad_(), positions, layout="half").detach()
    assert torch.equal(blocked, plain)
    # the blocks tile the tensor: every element exactly once
    count = torch.zeros(x.shape[:-1] + (half,))
    for block in _blocks(count.shape):
        count[block] += 1
    assert torch.equal(count, torch.ones_like(count))
    assert list(_blocks(torch.Size((4, 8)))) == [Ellipsis]  # small tensors: one block, no overhead


def test_errors():
    with pytest.raises(ValueError, match="even"):
        apply_rope(torch.zeros(4, 7))
    with pytest.raises(ValueError, match="even"):
        rope_frequencies(5)
    with pytest.raises(ValueError, match="layout"):
        apply_rope(torch.zeros(4, 8), layout="neox")
    with pytest.raises(TypeError, match="integer"):
        apply_rope(torch.zeros(4, 8), torch.arange(4.0))
    with pytest.raises(ValueError, match="broadcast"):
        apply_rope(torch.zeros(2, 3, 4, 8), torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(TypeError, match="floating"):
        apply_rope(torch.zeros(4, 8, dtype=torch.long))
    with pytest.raises(ValueError, match="rotary_dim"):
        apply_rope(torch.zeros(4, 8), rotary_dim=10)
    with pytest.raises(ValueError, match="base"):
        apply_rope(torch.zeros(4, 8), base=0.0)
    with pytest.raises(ValueError, match="even"):
        RotaryMultiheadAttention(6, 2)  # head_dim 3
    with pytest.raises(ValueError, match="seq_len, 8"):
        RotaryEmbedding(8)(torch.zeros(3, 4))
