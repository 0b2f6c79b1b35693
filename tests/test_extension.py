"""The context-extension experiment (notebook 05b): per-position losses, records, merging, errors."""

import dataclasses

import numpy as np
import pytest
import torch

import posviz
from posviz.extension import (
    EXTENSION_FULL,
    EXTENSION_SMALL,
    ExtensionConfig,
    merge_extension_results,
    position_losses,
    run_extension,
    summarize_extension,
)
from posviz.showdown import make_tasks

TINY = ExtensionConfig(
    name="tiny",
    rules=("none", "linear", "dynamic", "yarn"),
    seeds=(0,),
    train_len=8,
    steps=4,
    factors=(2,),
    finetune_fraction=0.5,
    eval_samples=4,
    curve_bin=4,
    d_model=16,
    num_heads=2,
    num_layers=1,
)


@pytest.fixture(scope="module")
def charlm():
    return make_tasks(TINY.task_spec())


def _model(task):
    torch.manual_seed(0)
    return posviz.TinyTransformer(task.vocab_size, d_model=16, num_heads=2, num_layers=1, position="rope", causal=True, max_len=32)


def test_position_losses_average_to_evaluate_loss_and_leave_plain_rope(charlm):
    _, eval_task = charlm
    model = _model(eval_task)
    curve = position_losses(model, eval_task, seq_len=24, train_len=8, num_samples=6, seed=5)
    assert curve.shape == (24,) and curve.dtype == np.float64
    expect = posviz.evaluate(model, eval_task, seq_len=24, num_samples=6, seed=5)["loss"]
    assert curve.mean() == pytest.approx(expect, rel=1e-5)
    scaled = position_losses(model, eval_task, seq_len=24, rule="linear", factor=3.0, train_len=8, num_samples=6, seed=5)
    assert not np.allclose(scaled, curve)
    rotary = model.blocks[0].attn.rotary
    assert rotary.frequencies is None and rotary.attention_factor == 1.0  # restored afterwards


def test_dynamic_is_scored_block_by_block(charlm):
    _, eval_task = charlm
    model = _model(eval_task)
    plain = position_losses(model, eval_task, seq_len=24, train_len=8, num_samples=6)
    dynamic = position_losses(model, eval_task, seq_len=24, rule="dynamic", train_len=8, num_samples=6)
    np.testing.assert_allclose(dynamic[:8], plain[:8], rtol=1e-6)  # first block: length 8 = L0, plain RoPE
    assert not np.allclose(dynamic[8:], plain[8:])
    # at length 16 (same sequences): block 1 is plain RoPE, block 2 the NTK rule with s = 16/8 = 2
    dyn16 = position_losses(model, eval_task, seq_len=16, rule="dynamic", train_len=8, num_samples=6)
    plain16 = position_losses(model, eval_task, seq_len=16, train_len=8, num_samples=6)
    ntk16 = position_losses(model, eval_task, seq_len=16, rule="ntk", factor=2.0, train_len=8, num_samples=6)
    np.testing.assert_allclose(dyn16[:8], plain16[:8], rtol=1e-5)
    np.testing.assert_allclose(dyn16[8:], ntk16[8:], rtol=1e-5)


def test_position_losses_needs_a_rotary_model(charlm):
    _, eval_task = charlm
    model = posviz.TinyTransformer(eval_task.vocab_size, d_model=16, num_heads=2, num_layers=1, position="alibi", causal=True)
    with pytest.raises(ValueError, match="no RotaryEmbedding"):
        position_losses(model, eval_task, seq_len=8, train_len=8, num_samples=2)


def test_run_extension_records_and_summary():
    results = run_extension(TINY)
    assert set(results) >= {"config", "seeds", "versions", "date", "seconds", "cpu_seconds", "base", "runs"}
    runs = results["runs"]
    assert len(runs) == len(TINY.rules) * len(TINY.factors) * 2
    for run in runs:
        assert run["length"] == 16 and len(run["curve"]) == 16 // TINY.curve_bin
        assert np.isclose(np.mean(run["curve"]), run["loss"])
        assert ("finetune_loss" in run) == run["finetuned"]
    yarn = next(r for r in runs if r["rule"] == "yarn")
    assert yarn["attention_factor"] == pytest.approx(0.1 * np.log(2) + 1)
    plain = [r for r in runs if r["rule"] == "none" and not r["finetuned"]][0]
    assert plain["loss_at_train_len"] == pytest.approx(results["base"][0]["loss_at_train_len"], rel=1e-9)
    summary = summarize_extension(results)
    assert summary["none", 2, False]["n"] == 1 and summary["none", 2, False]["std"] == 0.0
    # same seeds give the same numbers (deterministic)
    again = run_extension(dataclasses.replace(TINY, rules=("none",)))
    assert again["runs"][0]["loss"] == pytest.approx(plain["loss"], rel=1e-9)
    with pytest.raises(ValueError, match="key must be"):
        summarize_extension(results, "accuracy")


def test_merge_extension_results():
    a = run_extension(dataclasses.replace(TINY, rules=("none",), seeds=(0,)))
    b = run_extension(dataclasses.replace(TINY, rules=("none",), seeds=(1,)))
    merged = merge_extension_results(b, a)
    assert merged["seeds"] == [0, 1] and merged["config"]["seeds"] == [0, 1]
    assert [r["seed"] for r in merged["base"]] == [0, 1] and len(merged["runs"]) == 4
    assert merged["cpu_seconds"] == pytest.approx(a["cpu_seconds"] + b["cpu_seconds"])
    assert summarize_extension(merged)["none", 2, True]["n"] == 2
    with pytest.raises(ValueError, match="more than one part"):
        merge_extension_results(a, a)
    with pytest.raises(ValueError, match="differ"):
        merge_extension_results(a, run_extension(dataclasses.replace(TINY, rules=("linear",), seeds=(1,))))
    with pytest.raises(ValueError, match="at least one"):
        merge_extension_results()


@pytest.mark.parametrize(
    "change, match",
    [
        (dict(rules=("pi",)), "unknown rule"),
        (dict(factors=(1,)), "factor must be >= 2"),
        (dict(finetune_fraction=0.0), "finetune_fraction"),
        (dict(curve_bin=3), "must divide train_len"),
        (dict(seeds=()), "non-empty"),
    ],
)
def test_config_errors(change, match):
    with pytest.raises(ValueError, match=match):
        dataclasses.replace(TINY, **change)


def test_presets_are_what_the_notebook_says():
    assert EXTENSION_FULL.finetune_steps == 80 and EXTENSION_FULL.factors == (2, 4, 8)
    assert EXTENSION_FULL.d_model // EXTENSION_FULL.num_heads == 16
    assert EXTENSION_SMALL.finetune_steps == 30 and EXTENSION_SMALL.factors == (4,)
    assert len(EXTENSION_FULL.seeds) >= 3 and len(EXTENSION_SMALL.seeds) >= 3


def test_rules_have_the_prose_names_in_the_figure_language():
    from posviz.extension import RULE_NAMES, rule_name

    assert set(RULE_NAMES) == set(posviz.CONTEXT_RULES)
    try:
        posviz.set_language("en")
        assert [rule_name(r) for r in ("none", "linear", "dynamic")] == ["RoPE as is", "PI", "dynamic NTK"]
        posviz.set_language("ko")
        assert rule_name("none") == "RoPE 그대로" and rule_name("yarn") == "YaRN"
        assert rule_name("an_ablation") == "an_ablation", "an unlisted rule keeps its code name"
    finally:
        posviz.set_language("both")
    with pytest.raises(TypeError, match="rule must be a str"):
        rule_name(3)
    assert rule_name("linear") == "PI", "a name both languages share is written once in the bilingual figure"
    assert rule_name("none") == "RoPE 그대로 · RoPE as is"
