"""ALiBi (Press et al. 2022): slopes, bias, attention layer and its place in the model family."""

import math

import numpy as np
import pytest
import torch

import posviz
from posviz import ALiBiMultiheadAttention, TinyTransformer, alibi_bias, alibi_slopes


def _paper_rule(n: int) -> list[float]:
    """The slope rule written out independently: exponents of 2 for power-of-two counts."""
    if n & (n - 1) == 0:  # power of two: 2^(-8/n · h), h = 1 … n
        return [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]
    p = 1
    while p * 2 <= n:
        p *= 2
    extra = [2.0 ** (-8.0 * h / (2 * p)) for h in range(1, 2 * p + 1, 2)]  # odd h of 2p heads
    return _paper_rule(p) + extra[: n - p]


def test_slopes_known_values():
    np.testing.assert_array_equal(alibi_slopes(8), [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256])
    np.testing.assert_array_equal(alibi_slopes(4), [1 / 4, 1 / 16, 1 / 64, 1 / 256])
    np.testing.assert_array_equal(alibi_slopes(1), [1 / 256])
    # 6 heads: the 4 slopes of 4 heads, then slopes 1 and 3 of 8 heads
    np.testing.assert_array_equal(alibi_slopes(6), [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8])
    # 16 heads start at 2^-0.5 (the paper's example) and end at 2^-8
    slopes16 = alibi_slopes(16)
    assert slopes16[0].item() == pytest.approx(2**-0.5, rel=1e-15) and slopes16[-1].item() == pytest.approx(2**-8, rel=1e-15)
    assert alibi_slopes(8).dtype == torch.float64


@pytest.mark.parametrize("n", [1, 2, 3, 5, 6, 7, 8, 12, 16, 20, 24, 32])
def test_slopes_match_the_rule(n):
    np.testing.assert_allclose(alibi_slopes(n), _paper_rule(n), rtol=1e-14)
    assert len(set(alibi_slopes(n).tolist())) == n  # every head gets its own slope


def test_slope_errors():
    with pytest.raises(ValueError, match="num_heads"):
        alibi_slopes(0)
    with pytest.raises(TypeError, match="num_heads"):
        alibi_slopes(4.0)


def test_bias_values_and_errors():
    slopes = torch.tensor([0.5, 0.25], dtype=torch.float64)
    pos = torch.arange(4)
    bias = alibi_bias(slopes, pos, pos)
    assert bias.shape == (2, 4, 4)
    expected = -0.5 * np.array([[i - j for j in range(4)] for i in range(4)], dtype=float)
    np.testing.assert_array_equal(bias[0], expected)
    np.testing.assert_array_equal(alibi_bias(slopes, pos, pos, symmetric=True)[1], -0.25 * np.abs(expected / -0.5))
    # shifting both position vectors changes nothing; batched positions give a batch axis
    np.testing.assert_array_equal(alibi_bias(slopes, pos + 100, pos + 100), bias)
    assert alibi_bias(slopes, pos[None].expand(3, 4), pos[None].expand(3, 4)).shape == (3, 2, 4, 4)
    with pytest.raises(ValueError, match="num_heads"):
        alibi_bias(slopes[None], pos, pos)
    with pytest.raises(TypeError, match="integer"):
        alibi_bias(slopes, pos.float(), pos)


def test_layer_matches_a_hand_written_alibi():
    torch.manual_seed(0)
    layer = ALiBiMultiheadAttention(16, 4, causal=True).double()
    x = torch.randn(2, 6, 16, dtype=torch.float64)
    with torch.no_grad():
        out, weights = layer(x)
        q, k, v = layer.qkv(x).view(2, 6, 3, 4, 4).permute(2, 0, 3, 1, 4)
    i = torch.arange(6)[:, None]
    j = torch.arange(6)[None, :]
    m = torch.tensor([2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8], dtype=torch.float64)[:, None, None]
    logits = q @ k.transpose(-1, -2) / math.sqrt(4) - m * (i - j)
    manual = torch.softmax(logits.masked_fill(j > i, float("-inf")), dim=-1)
    np.testing.assert_allclose(weights, manual, atol=1e-12)
    with torch.no_grad():
        manual_out = layer.out((manual @ v).transpose(1, 2).reshape(2, 6, 16))
    np.testing.assert_allclose(out, manual_out, atol=1e-12)
    assert torch.all(weights.triu(1) == 0)


def test_model_has_no_extra_parameters_and_ignores_shifts():
    torch.manual_seed(0)
    alibi = TinyTransformer(10, d_model=16, num_heads=4, position="alibi", causal=True, max_len=8)
    none = TinyTransformer(10, d_model=16, num_heads=4, position="none", causal=True, max_len=8)
    assert alibi.num_parameters() == none.num_parameters()
    assert "alibi" in posviz.POSITION_METHODS
    tokens = torch.randint(0, 10, (2, 12))  # longer than max_len: ALiBi has no table to run out of
    with torch.no_grad():
        plain = alibi(tokens)
        shifted = alibi(tokens, positions=torch.arange(12) + 1000)
    np.testing.assert_allclose(plain, shifted, atol=1e-5)


def test_bidirectional_alibi_is_symmetric():
    layer = ALiBiMultiheadAttention(8, 2, causal=False)
    assert layer.symmetric
    pos = torch.arange(5)[None]
    bias = alibi_bias(layer.slopes, pos, pos, symmetric=layer.symmetric)
    np.testing.assert_array_equal(bias, bias.transpose(-1, -2))
    assert not ALiBiMultiheadAttention(8, 2, causal=True).symmetric
