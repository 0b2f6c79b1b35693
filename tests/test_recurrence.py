"""Recurrent helpers for notebook 01: reference recurrence, tiny models, Jacobian norms, timer, diagram."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

import posviz
from posviz.recurrence import (
    TinyRecurrent,
    jacobian_norms,
    make_recurrent_layer,
    median_seconds,
    plot_rnn_unrolled,
    rnn_forward,
    set_spectral_radius,
)


def teardown_function():
    plt.close("all")


def _weights(layer):
    return (
        layer.weight_ih_l0.detach().numpy(),
        layer.weight_hh_l0.detach().numpy(),
        (layer.bias_ih_l0 + layer.bias_hh_l0).detach().numpy(),
    )


def test_rnn_forward_matches_torch_and_a_hand_computed_step():
    layer = make_recurrent_layer("rnn", 3, 5, seed=1)
    x = torch.randn(1, 7, 3, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    w_xh, w_hh, b = _weights(layer)
    states = rnn_forward(x[0].numpy(), w_xh, w_hh, b)
    with torch.no_grad():
        expected, last = layer(x)
    np.testing.assert_allclose(states, expected[0].numpy(), atol=1e-12)
    np.testing.assert_allclose(states[-1], last[0, 0].numpy(), atol=1e-12)
    # first two steps by hand, from h0 = 0
    h1 = np.tanh(w_xh @ x[0, 0].numpy() + b)
    h2 = np.tanh(w_xh @ x[0, 1].numpy() + w_hh @ h1 + b)
    np.testing.assert_allclose(states[:2], [h1, h2], atol=1e-12)
    # a given initial state is used
    h0 = np.full(5, 0.3)
    with torch.no_grad():
        expected0, _ = layer(x, torch.tensor(h0)[None, None])
    np.testing.assert_allclose(rnn_forward(x[0].numpy(), w_xh, w_hh, b, h0), expected0[0].numpy(), atol=1e-12)


def test_rnn_forward_errors():
    with pytest.raises(ValueError, match="seq_len"):
        rnn_forward(np.zeros(3), np.zeros((2, 3)), np.zeros((2, 2)), np.zeros(2))
    with pytest.raises(ValueError, match="square"):
        rnn_forward(np.zeros((4, 3)), np.zeros((2, 3)), np.zeros((2, 3)), np.zeros(2))
    with pytest.raises(ValueError, match="w_xh"):
        rnn_forward(np.zeros((4, 3)), np.zeros((2, 4)), np.zeros((2, 2)), np.zeros(2))
    with pytest.raises(ValueError, match="h0"):
        rnn_forward(np.zeros((4, 3)), np.zeros((2, 3)), np.zeros((2, 2)), np.zeros(2), np.zeros(3))


def test_spectral_radius_is_set_exactly():
    layer = make_recurrent_layer("rnn", 4, 16, seed=3, spectral_radius=1.7)
    w = layer.weight_hh_l0.detach()
    np.testing.assert_allclose(torch.linalg.eigvals(w).abs().numpy(), 1.7, atol=1e-10)  # orthogonal × 1.7
    np.testing.assert_allclose(torch.linalg.svdvals(w).numpy(), 1.7, atol=1e-10)
    rescaled = set_spectral_radius(make_recurrent_layer("rnn", 4, 16, seed=3), 0.5, orthogonal=False)
    assert torch.linalg.eigvals(rescaled.weight_hh_l0).abs().max().item() == pytest.approx(0.5, abs=1e-10)
    with pytest.raises(ValueError, match="plain 'rnn'"):
        make_recurrent_layer("gru", 4, 16, spectral_radius=1.0)
    with pytest.raises(TypeError, match="nn.RNN"):
        set_spectral_radius(torch.nn.GRU(2, 2), 1.0)
    with pytest.raises(ValueError, match="> 0"):
        set_spectral_radius(torch.nn.RNN(2, 2), 0.0)
    with pytest.raises(ValueError, match="cell"):
        make_recurrent_layer("transformer", 4, 16)


def test_make_recurrent_layer_is_seeded_and_leaves_global_rng_alone():
    torch.manual_seed(0)
    before = torch.rand(1)
    torch.manual_seed(0)
    a = make_recurrent_layer("lstm", 3, 4, seed=5)
    after = torch.rand(1)
    b = make_recurrent_layer("lstm", 3, 4, seed=5)
    assert torch.equal(before, after)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert a.weight_hh_l0.dtype == torch.float64 and not a.training


def test_jacobian_norms_match_product_of_jacobians():
    """For the plain RNN, ∂h_T/∂x_t = (∏_{k=t+1}^{T} diag(1 - h_k²) W_hh) diag(1 - h_t²) W_xh."""
    layer = make_recurrent_layer("rnn", 3, 6, seed=0, spectral_radius=1.3)
    x = torch.randn(2, 9, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    norms = jacobian_norms(layer, x)
    assert norms.shape == (2, 9) and norms.dtype == torch.float64
    w_xh, w_hh, b = _weights(layer)
    for sample in range(2):
        h = rnn_forward(x[sample].numpy(), w_xh, w_hh, b)
        expected = []
        for t in range(9):
            jac = np.diag(1 - h[t] ** 2) @ w_xh
            for k in range(t + 1, 9):
                jac = np.diag(1 - h[k] ** 2) @ w_hh @ jac
            expected.append(np.linalg.norm(jac))
        np.testing.assert_allclose(norms[sample].numpy(), expected, rtol=1e-10)


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_jacobian_norms_match_torch_jacobian_for_gated_cells(cell):
    layer = make_recurrent_layer(cell, 2, 4, seed=0)
    x = torch.randn(1, 5, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    full = torch.autograd.functional.jacobian(lambda inp: layer(inp)[0][0, -1], x)  # (4, 1, 5, 2)
    expected = full[:, 0].permute(1, 0, 2).reshape(5, -1).norm(dim=1)
    np.testing.assert_allclose(jacobian_norms(layer, x)[0].numpy(), expected.numpy(), rtol=1e-10)


def test_jacobian_norms_vanish_for_small_radius_and_grow_for_large():
    x = torch.randn(8, 40, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    small = jacobian_norms(make_recurrent_layer("rnn", 4, 16, spectral_radius=0.5), x).mean(0)
    large = jacobian_norms(make_recurrent_layer("rnn", 4, 16, spectral_radius=3.0), x).mean(0)
    assert small[0] < 1e-8 * small[-1]  # 39 steps back: shrunk by far more than 1e-8
    assert large[0] > 1e3 * large[-1]


def test_jacobian_norms_errors():
    with pytest.raises(TypeError, match="nn.RNN"):
        jacobian_norms(torch.nn.Linear(2, 2), torch.zeros(1, 2, 2))
    with pytest.raises(ValueError, match="batch_first"):
        jacobian_norms(torch.nn.RNN(2, 2), torch.zeros(1, 2, 2))
    with pytest.raises(ValueError, match="shape"):
        jacobian_norms(make_recurrent_layer("rnn", 2, 2), torch.zeros(2, 2, dtype=torch.float64))


@pytest.mark.parametrize("cell", ["rnn", "gru", "lstm"])
def test_tiny_recurrent_shapes_causality_and_training_interface(cell):
    torch.manual_seed(0)
    task = posviz.FirstTokenTask()
    model = TinyRecurrent(task.vocab_size, num_outputs=task.num_outputs, cell=cell, hidden_size=8)
    tokens = torch.randint(0, task.vocab_size, (3, 6))
    logits = model(tokens)
    assert logits.shape == (3, 6, 4) and logits.dtype == torch.float32
    changed = tokens.clone()
    changed[:, 4] = (changed[:, 4] + 1) % task.vocab_size
    with torch.no_grad():
        torch.testing.assert_close(model(changed)[:, :4], logits[:, :4].detach())  # left to right only
    result = posviz.train(model, task, seq_len=5, steps=3, seed=0)
    assert len(result.losses) == 3
    metrics = posviz.evaluate(model, task, seq_len=5, num_samples=16)
    assert 0.0 <= metrics["token_accuracy"] <= 1.0


def test_tiny_recurrent_learns_the_first_token_at_short_length():
    torch.manual_seed(0)
    task = posviz.FirstTokenTask()
    model = TinyRecurrent(task.vocab_size, num_outputs=task.num_outputs, cell="lstm", hidden_size=16)
    posviz.train(model, task, seq_len=3, steps=40, lr=1e-2, seed=0)
    assert posviz.evaluate(model, task, seq_len=3, num_samples=256)["token_accuracy"] > 0.95  # chance: 0.25


def test_tiny_recurrent_errors():
    with pytest.raises(ValueError, match="cell"):
        TinyRecurrent(5, cell="elman")
    with pytest.raises(ValueError, match="hidden_size"):
        TinyRecurrent(5, hidden_size=0)
    with pytest.raises(ValueError, match="integer tensor"):
        TinyRecurrent(5)(torch.zeros(2, 3))
    assert TinyRecurrent(5, num_outputs=2, hidden_size=4, embed_dim=3).num_parameters() == (
        5 * 3 + (3 * 4 + 4 * 4 + 2 * 4) + (4 * 2 + 2)
    )


def test_median_seconds():
    calls = []
    seconds = median_seconds(lambda: calls.append(torch.is_inference_mode_enabled()), repeats=3, warmup=2)
    assert calls == [True] * 5 and seconds >= 0.0
    with pytest.raises(TypeError, match="callable"):
        median_seconds(3)
    with pytest.raises(ValueError, match="repeats"):
        median_seconds(lambda: None, repeats=0)


def test_vaswani_table_1():
    table = posviz.recurrence.VASWANI_TABLE_1
    assert table["self-attention"] == ("O(n²·d)", "O(1)", "O(1)")
    assert table["recurrent"] == ("O(n·d²)", "O(n)", "O(n)")


def test_rnn_diagram():
    posviz.use_korean_font()  # the caption is bilingual by default
    tokens = ["the", "cat", "sat"]
    ax = plot_rnn_unrolled(tokens, title="t")
    cells = [p for p in ax.patches if (p.get_gid() or "").startswith("cell-")]
    assert len(cells) == 3
    texts = [txt.get_text() for txt in ax.texts]
    for word in tokens:
        assert word in texts
    for label in (r"$x^{\langle 1 \rangle}$", r"$a^{\langle 0 \rangle}$", r"$a^{\langle 3 \rangle}$", r"$\hat{y}^{\langle 3 \rangle}$"):
        assert label in texts
    ax.figure.canvas.draw()  # mathtext parses
    with pytest.raises(ValueError, match="1 to 12"):
        plot_rnn_unrolled([])
    with pytest.raises(TypeError, match="str"):
        plot_rnn_unrolled("the cat")
