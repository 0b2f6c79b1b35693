"""Attention, the model family, the tasks and the training loop."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import posviz
from posviz import IGNORE, FirstTokenTask, OffsetCopyTask, OrderTask, TinyTransformer


def test_attention_matches_torch_and_formula():
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 8, dtype=torch.float64) for _ in range(3))
    out, weights = posviz.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(out, F.scaled_dot_product_attention(q, k, v), atol=1e-12)
    manual = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(8), dim=-1)
    np.testing.assert_allclose(weights, manual, atol=1e-12)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-12)


def test_causal_mask_and_masked_attention():
    np.testing.assert_array_equal(posviz.causal_mask(3), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
    np.testing.assert_array_equal(posviz.causal_mask(2, 4), [[1, 1, 1, 0], [1, 1, 1, 1]])
    torch.manual_seed(1)
    q, k, v = (torch.randn(1, 1, 4, 6, dtype=torch.float64) for _ in range(3))
    out, weights = posviz.scaled_dot_product_attention(q, k, v, mask=posviz.causal_mask(4))
    np.testing.assert_allclose(out, F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=1e-12)
    assert torch.all(weights.triu(1) == 0)


def test_attention_errors():
    q = torch.randn(1, 2, 3)
    with pytest.raises(ValueError, match="head_dim"):
        posviz.scaled_dot_product_attention(q, torch.randn(1, 2, 4), torch.randn(1, 2, 4))
    with pytest.raises(ValueError, match="no key"):
        posviz.scaled_dot_product_attention(q, q, q, mask=torch.zeros(2, 2, dtype=torch.bool))
    with pytest.raises(ValueError, match="divisible"):
        posviz.MultiheadSelfAttention(10, 3)


def test_self_attention_without_positions_is_permutation_equivariant():
    torch.manual_seed(0)
    layer = posviz.MultiheadSelfAttention(16, 4).double()
    x = torch.randn(1, 7, 16, dtype=torch.float64)
    perm = torch.randperm(7)
    with torch.no_grad():
        out, _ = layer(x)
        out_perm, _ = layer(x[:, perm])
    np.testing.assert_allclose(out_perm, out[:, perm], atol=1e-12)


@pytest.mark.parametrize("method", sorted(posviz.POSITION_METHODS))
@pytest.mark.parametrize("causal", [False, True])
def test_every_position_method_shapes_and_causality(method, causal):
    torch.manual_seed(0)
    model = TinyTransformer(11, num_outputs=5, d_model=16, num_heads=2, num_layers=2, position=method, max_len=32, causal=causal)
    tokens = torch.randint(0, 11, (3, 9))
    logits, maps = model(tokens, return_attention=True)
    assert logits.shape == (3, 9, 5) and logits.dtype == torch.float32
    assert len(maps) == 2 and maps[0].shape == (3, 2, 9, 9)
    if causal:  # changing a later token never changes an earlier output
        changed = tokens.clone()
        changed[:, 6] = (changed[:, 6] + 1) % 11
        np.testing.assert_allclose(model(changed)[:, :6].detach(), logits[:, :6].detach(), atol=1e-6)
        assert torch.all(maps[0].triu(1) == 0)


def test_unknown_method_and_learned_table_limit():
    with pytest.raises(ValueError, match="unknown position method"):
        TinyTransformer(5, position="nope")
    model = TinyTransformer(5, position="learned", max_len=8, d_model=8, num_heads=2)
    with pytest.raises(ValueError, match="max_len=8"):
        model(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(ValueError, match="already registered"):
        posviz.register_position_method(posviz.POSITION_METHODS["none"])


def test_tasks_targets():
    g = torch.Generator().manual_seed(0)
    tokens, targets = FirstTokenTask(num_classes=3, num_distractors=5).sample(4, 6, generator=g)
    assert torch.all(targets[:, -1] == tokens[:, 0]) and torch.all(targets[:, :-1] == IGNORE)
    assert torch.all(tokens[:, 1:] >= 3)
    tokens, targets = OrderTask().sample(64, 8, generator=g)
    a = (tokens == 1).float().argmax(1)
    b = (tokens == 2).float().argmax(1)
    assert torch.all(targets[:, 0] == (a < b).long()) and torch.all(tokens[:, 0] == 0)
    assert torch.all((tokens == 1).sum(1) == 1) and torch.all((tokens == 2).sum(1) == 1)
    assert 0.3 < targets[:, 0].float().mean() < 0.7
    tokens, targets = OffsetCopyTask(vocab_size=9, offset=3).sample(2, 7, generator=g)
    assert torch.all(targets[:, 3:] == tokens[:, :4]) and torch.all(targets[:, :3] == IGNORE)
    with pytest.raises(ValueError):
        OffsetCopyTask(offset=3).sample(2, 3, generator=g)


def test_training_lowers_loss_and_is_deterministic():
    task = OffsetCopyTask(vocab_size=8, offset=1)

    def run():
        torch.manual_seed(0)
        model = TinyTransformer(8, d_model=32, num_heads=2, num_layers=1, position="sinusoidal", causal=True, max_len=16)
        result = posviz.train(model, task, seq_len=12, steps=60, batch_size=32)
        return result, posviz.evaluate(model, task, seq_len=12, num_samples=256)

    (r1, m1), (r2, m2) = run(), run()
    assert r1.losses == r2.losses and m1 == m2
    assert np.mean(r1.losses[-10:]) < 0.5 * np.mean(r1.losses[:5])
    assert m1["token_accuracy"] > 1 / 8 + 0.2
    assert 0 <= m1["sequence_accuracy"] <= m1["token_accuracy"] <= 1


def test_order_task_needs_position():
    task = OrderTask()
    scores = {}
    for method in ("none", "sinusoidal"):
        torch.manual_seed(0)
        model = TinyTransformer(task.vocab_size, num_outputs=2, d_model=32, num_heads=2, num_layers=1, position=method, max_len=16)
        posviz.train(model, task, seq_len=10, steps=150)
        scores[method] = posviz.evaluate(model, task, seq_len=10)["sequence_accuracy"]
    assert abs(scores["none"] - 0.5) < 0.1  # permutation-invariant at [CLS]: chance
    assert scores["sinusoidal"] > 0.9


def _build(method, seed):
    torch.manual_seed(seed)
    model = TinyTransformer(11, d_model=16, num_heads=2, num_layers=2, position=method, max_len=24, causal=True)
    return model, torch.random.get_rng_state()


@pytest.mark.parametrize("method", sorted(posviz.POSITION_METHODS))
def test_initial_weights_are_paired_across_position_methods(method):
    """Same seed, another position method: every shared parameter (same name and shape) is equal."""
    reference, reference_state = _build("none", 5)
    model, state = _build(method, 5)
    ref = dict(reference.named_parameters())
    own = dict(model.named_parameters())
    shared = [name for name in own if name in ref and ref[name].shape == own[name].shape]
    # embedding, both blocks' attention projections, norms, MLPs, final norm and head
    assert len(shared) == len(ref) == 1 + 12 * 2 + 4
    for name in shared:
        assert torch.equal(own[name], ref[name]), f"{method}: {name} differs from the 'none' model"
    assert torch.equal(state, reference_state)  # the caller's stream is left where 'none' leaves it
    extra = sorted(set(own) - set(ref))
    # method-specific parameters are reproducible for a seed and change with the seed
    again, _ = _build(method, 5)
    other, _ = _build(method, 6)
    for name in extra:
        assert torch.equal(dict(again.named_parameters())[name], own[name])
        assert not torch.equal(dict(other.named_parameters())[name], own[name]), name
    for name in shared:
        assert not torch.equal(dict(other.named_parameters())[name], own[name]) or own[name].unique().numel() == 1


def test_pairing_holds_between_any_two_methods_and_for_a_custom_shaw():
    methods = sorted(posviz.POSITION_METHODS)
    models = {m: dict(_build(m, 2)[0].named_parameters()) for m in methods}
    torch.manual_seed(2)
    custom = dict(
        TinyTransformer(11, d_model=16, num_heads=2, num_layers=2, position=posviz.shaw_method(3), max_len=24, causal=True)
        .named_parameters()
    )
    models["shaw_k3"] = custom
    for a in models:
        for b in models:
            for name, value in models[a].items():
                if name in models[b] and models[b][name].shape == value.shape:
                    assert torch.equal(value, models[b][name]), (a, b, name)
    # Shaw tables of two layers come from different streams
    assert not torch.equal(custom["blocks.0.attn.rel_keys"], custom["blocks.1.attn.rel_keys"])
