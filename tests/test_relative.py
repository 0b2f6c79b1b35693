"""Shaw et al. 2018 relative position representations: index, attention, layer, registration."""

import math

import numpy as np
import pytest
import torch

import posviz
from posviz import (
    DEFAULT_MAX_RELATIVE_POSITION,
    OffsetCopyTask,
    RelativeMultiheadAttention,
    TinyTransformer,
    relative_attention,
    relative_position_index,
    shaw_method,
)


def reference(q, k, v, wk, wv, mask=None, positions=None):
    """Shaw eq. 3-4 with explicit loops in float64 numpy: one (batch, head, i, j) at a time."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    batch, heads, n, d = q.shape
    kk = None if wk is None and wv is None else ((wk if wk is not None else wv).shape[0] - 1) // 2
    out = np.zeros(v.shape)
    weights = np.zeros((batch, heads, n, n))
    for b in range(batch):
        pos = list(range(n)) if positions is None else [int(p) for p in positions[b]]
        for h in range(heads):
            for i in range(n):
                e = np.full(n, -np.inf)
                for j in range(n):
                    if mask is not None and not mask[b, h, i, j]:
                        continue
                    key = k[b, h, j].copy()
                    if wk is not None:
                        r = min(max(pos[j] - pos[i], -kk), kk)
                        key = key + np.asarray(wk, dtype=np.float64)[r + kk]  # a^K_ij
                    e[j] = q[b, h, i] @ key / math.sqrt(d)  # eq. 4
                alpha = np.exp(e - e.max())
                alpha /= alpha.sum()
                weights[b, h, i] = alpha
                for j in range(n):
                    val = v[b, h, j].copy()
                    if wv is not None:
                        r = min(max(pos[j] - pos[i], -kk), kk)
                        val = val + np.asarray(wv, dtype=np.float64)[r + kk]  # a^V_ij
                    out[b, h, i] += alpha[j] * val  # eq. 3
    return out, weights


def random_inputs(seq_len, k=2, batch=2, heads=3, d=4, dv=None, seed=0):
    g = torch.Generator().manual_seed(seed)
    dv = d if dv is None else dv
    q, kk = (torch.randn(batch, heads, seq_len, d, generator=g, dtype=torch.float64) for _ in range(2))
    v = torch.randn(batch, heads, seq_len, dv, generator=g, dtype=torch.float64)
    wk = torch.randn(2 * k + 1, d, generator=g, dtype=torch.float64)
    wv = torch.randn(2 * k + 1, dv, generator=g, dtype=torch.float64)
    return q, kk, v, wk, wv


def test_index_known_values_and_sign():
    np.testing.assert_array_equal(
        relative_position_index(3, 3, 1), [[1, 2, 2], [0, 1, 2], [0, 0, 1]]
    )  # key after query -> rows above k
    idx = relative_position_index(4, 6, 2)
    assert idx.shape == (4, 6) and idx.dtype == np.int64
    expected = [[min(max(j - i, -2), 2) + 2 for j in range(6)] for i in range(4)]
    np.testing.assert_array_equal(idx, expected)
    np.testing.assert_array_equal(relative_position_index(5, 5, 0), np.zeros((5, 5)))
    big = relative_position_index(50, 50, 3)
    assert big.min() == 0 and big.max() == 6 and np.all(np.diag(big) == 3)


@pytest.mark.parametrize("implementation", ["naive", "efficient"])
@pytest.mark.parametrize("seq_len", [1, 2, 3, 7])
@pytest.mark.parametrize("causal", [False, True])
def test_matches_loop_reference(implementation, seq_len, causal):
    q, k, v, wk, wv = random_inputs(seq_len, k=2, dv=5, seed=seq_len)
    mask = posviz.causal_mask(seq_len) if causal else None
    out, weights = relative_attention(q, k, v, wk, wv, mask=mask, implementation=implementation)
    full = None if mask is None else np.broadcast_to(mask.numpy(), (2, 3, seq_len, seq_len))
    ref_out, ref_w = reference(q, k, v, wk, wv, mask=full)
    assert out.shape == (2, 3, seq_len, 5) and out.dtype == torch.float64
    np.testing.assert_allclose(weights, ref_w, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, atol=1e-12)


@pytest.mark.parametrize("seq_len", [1, 2, 5, 33])
@pytest.mark.parametrize("causal", [False, True])
def test_naive_and_efficient_agree(seq_len, causal):
    q, k, v, wk, wv = random_inputs(seq_len, k=4, d=8, seed=100 + seq_len)
    mask = posviz.causal_mask(seq_len) if causal else None
    a = relative_attention(q, k, v, wk, wv, mask=mask, implementation="naive")
    b = relative_attention(q, k, v, wk, wv, mask=mask, implementation="efficient")
    for x, y in zip(a, b, strict=True):
        np.testing.assert_allclose(x, y, atol=1e-12, rtol=0)


def test_key_padding_mask_and_explicit_positions():
    q, k, v, wk, wv = random_inputs(6, k=2, seed=7)
    pad = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], dtype=torch.bool)[:, None, None, :]
    positions = torch.tensor([[0, 1, 2, 5, 6, 9], [3, 4, 5, 6, 7, 8]])
    full = np.broadcast_to(pad.numpy(), (2, 3, 6, 6))
    ref_out, ref_w = reference(q, k, v, wk, wv, mask=full, positions=positions)
    for impl in ("naive", "efficient"):
        out, weights = relative_attention(q, k, v, wk, wv, mask=pad, positions=positions, implementation=impl)
        np.testing.assert_allclose(weights, ref_w, atol=1e-12)
        np.testing.assert_allclose(out, ref_out, atol=1e-12)
        assert torch.all(weights[0, :, :, 4:] == 0)


def test_keys_only_values_only_and_no_terms():
    q, k, v, wk, wv = random_inputs(5, k=1, seed=3)
    for tk, tv in ((wk, None), (None, wv), (None, None)):
        ref_out, ref_w = reference(q, k, v, tk, tv)
        for impl in ("naive", "efficient"):
            out, weights = relative_attention(q, k, v, tk, tv, implementation=impl)
            np.testing.assert_allclose(out, ref_out, atol=1e-12)
            np.testing.assert_allclose(weights, ref_w, atol=1e-12)
    plain_out, _ = posviz.scaled_dot_product_attention(q, k, v)
    out, _ = relative_attention(q, k, v, None, None)
    np.testing.assert_allclose(out, plain_out, atol=1e-12)


def test_translation_invariance_and_k0_is_position_free():
    q, k, v, wk, wv = random_inputs(6, k=2, seed=11)
    base = relative_attention(q, k, v, wk, wv)
    shifted = relative_attention(q, k, v, wk, wv, positions=torch.arange(6) + 17)
    np.testing.assert_allclose(shifted[0], base[0], atol=1e-12)
    # k = 0: one row for every pair -> same result as plain attention on v + w^V_0
    _, _, _, w0k, w0v = random_inputs(6, k=0, seed=12)
    out, weights = relative_attention(q, k, v, w0k, w0v)
    plain_out, plain_w = posviz.scaled_dot_product_attention(q, k, v + w0v[0])
    np.testing.assert_allclose(weights, plain_w, atol=1e-12)
    np.testing.assert_allclose(out, plain_out, atol=1e-12)


def test_errors():
    q, k, v, wk, wv = random_inputs(4, k=2)
    with pytest.raises(ValueError, match="odd number"):
        relative_attention(q, k, v, wk[:4], wv[:4])
    with pytest.raises(ValueError, match="same length"):
        relative_attention(q, k, v, wk, wv[:3])
    with pytest.raises(ValueError, match="rel_keys must have shape"):
        relative_attention(q, k, v, wk[:, :3], wv)
    with pytest.raises(ValueError, match="same shape"):
        relative_attention(q, k[:, :, :3], v, wk, wv)
    with pytest.raises(ValueError, match="value_dim"):
        relative_attention(q, k, v[:, :2], wk, wv)
    with pytest.raises(ValueError, match="batch, heads, seq_len"):
        relative_attention(q[0], k[0], v[0], wk, wv)
    with pytest.raises(ValueError, match="dtype"):
        relative_attention(q, k, v, wk.float(), wv)
    with pytest.raises(ValueError, match="implementation"):
        relative_attention(q, k, v, wk, wv, implementation="fast")
    with pytest.raises(ValueError, match="no key"):
        relative_attention(q, k, v, wk, wv, mask=torch.zeros(4, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="boolean"):
        relative_attention(q, k, v, wk, wv, mask=torch.ones(4, 4))
    for impl in ("naive", "efficient"):
        with pytest.raises(ValueError, match="broadcast"):
            relative_attention(q, k, v, wk, wv, mask=torch.ones(5, 5, dtype=torch.bool), implementation=impl)
    with pytest.raises(ValueError, match="positions"):
        relative_attention(q, k, v, wk, wv, positions=torch.arange(5))
    with pytest.raises(TypeError):
        relative_attention(q.numpy(), k, v, wk, wv)
    with pytest.raises(ValueError, match="max_relative_position"):
        relative_position_index(3, 3, -1)
    with pytest.raises(ValueError, match="query_len"):
        relative_position_index(0, 3, 1)
    with pytest.raises(TypeError):
        relative_position_index(3, 3, 1.5)


def test_layer_tables_and_implementations_agree():
    torch.manual_seed(0)
    layer = RelativeMultiheadAttention(16, 4, 3, causal=True).double()
    assert layer.rel_keys.shape == (7, 4) and layer.rel_values.shape == (7, 4)
    x = torch.randn(2, 9, 16, dtype=torch.float64)
    with torch.no_grad():
        out, weights = layer(x)
        layer.implementation = "naive"
        out_naive, _ = layer(x)
        # the layer is the generic projections around relative_attention
        q, k, v = layer.qkv(x).view(2, 9, 3, 4, 4).permute(2, 0, 3, 1, 4)
        z, w = relative_attention(q, k, v, layer.rel_keys, layer.rel_values, mask=posviz.causal_mask(9))
        manual = layer.out(z.transpose(1, 2).reshape(2, 9, 16))
    np.testing.assert_allclose(out, out_naive, atol=1e-12)
    np.testing.assert_allclose(out, manual, atol=1e-12)
    np.testing.assert_allclose(weights, w, atol=1e-12)
    assert RelativeMultiheadAttention(8, 2, 2, use_values=False).rel_values is None
    assert RelativeMultiheadAttention(8, 2, 2, use_keys=False).rel_keys is None
    with pytest.raises(ValueError, match="implementation"):
        RelativeMultiheadAttention(8, 2, 2, implementation="fast")
    with pytest.raises(ValueError, match="max_relative_position"):
        RelativeMultiheadAttention(8, 2, -1)


def test_registration_and_shaw_method():
    method = posviz.POSITION_METHODS["shaw"]
    assert method.input_layer is None and DEFAULT_MAX_RELATIVE_POSITION == 16
    layer = method.attention(16, 2, True, 64)
    assert isinstance(layer, RelativeMultiheadAttention) and layer.causal
    assert layer.max_relative_position == DEFAULT_MAX_RELATIVE_POSITION
    m4 = shaw_method(4)
    assert m4.name == "shaw_k4" and m4.attention(8, 2, False, 10).rel_keys.shape == (9, 4)
    assert shaw_method(2, use_values=False).name == "shaw_k2_keys"
    keys_only = shaw_method(2, use_values=False).attention(8, 2, False, 10)
    assert keys_only.rel_values is None and keys_only.rel_keys.shape == (5, 4)
    model = TinyTransformer(7, d_model=16, num_heads=2, position=shaw_method(1), max_len=4)
    assert model(torch.zeros(2, 12, dtype=torch.long)).shape == (2, 12, 7)  # longer than max_len: fine
    with pytest.raises(ValueError):
        shaw_method(-1)


def test_shaw_model_is_shift_invariant_and_learns_offset_copy():
    task = OffsetCopyTask(vocab_size=8, offset=2)
    torch.manual_seed(0)
    model = TinyTransformer(8, d_model=32, num_heads=2, num_layers=1, position=shaw_method(4), causal=True)
    tokens = torch.randint(0, 8, (2, 10))
    with torch.no_grad():
        np.testing.assert_allclose(model(tokens, positions=torch.arange(10) + 40), model(tokens), atol=1e-6)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny model: one thread is faster, and steady on a busy machine
    try:
        posviz.train(model, task, seq_len=12, steps=80, batch_size=32, lr=1e-2)
        assert posviz.evaluate(model, task, seq_len=12, num_samples=256)["token_accuracy"] > 0.9
        assert posviz.evaluate(model, task, seq_len=48, num_samples=128)["token_accuracy"] > 0.9
    finally:
        torch.set_num_threads(threads)
