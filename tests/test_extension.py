"""The context-extension experiment (notebook 05b): per-position losses, records, merging, errors."""

import dataclasses
import json

import numpy as np
import pytest
import torch

import posviz
from posviz.extension import (
    ABLATIONS,
    EXTENSION_FULL,
    EXTENSION_RULES,
    EXTENSION_SMALL,
    ExtensionConfig,
    add_extension_rules,
    extension_label,
    load_extension_results,
    merge_extension_results,
    position_losses,
    run_extension,
    summarize_extension,
)
from posviz.results import results_dir
from posviz.tasks import make_tasks

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
    return make_tasks(dataclasses.replace(TINY, factors=(3,)).task_spec())  # evaluation up to 24 tokens


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


def test_yarn_without_temperature_is_yarn_with_attention_factor_one(charlm):
    _, eval_task = charlm
    model = _model(eval_task)
    kwargs = dict(seq_len=24, factor=3.0, train_len=8, num_samples=6, seed=5)
    yarn = position_losses(model, eval_task, rule="yarn", **kwargs)
    ablation = position_losses(model, eval_task, rule="yarn_no_temperature", **kwargs)
    assert not np.allclose(yarn, ablation)  # the temperature changes the logits
    # by hand: YaRN's frequencies, cos/sin unscaled
    freqs, att = posviz.scaled_rope_frequencies(8, rule="yarn", factor=3.0, original_context=8)
    assert att > 1
    posviz.set_rope_frequencies(model, freqs, attention_factor=1.0)
    tokens, targets = eval_task.sample(6, 24, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        logits = model.eval()(tokens)
    by_hand = torch.nn.functional.cross_entropy(logits.transpose(1, 2), targets, reduction="none").double().mean(0)
    np.testing.assert_allclose(ablation, by_hand.numpy(), rtol=1e-6)
    posviz.set_rope_frequencies(model, rule="none")
    assert ABLATIONS["yarn_no_temperature"] == {"rule": "yarn", "attention_factor": 1.0}
    assert EXTENSION_RULES[-1] == "yarn_no_temperature" and EXTENSION_FULL.rules == EXTENSION_RULES


def test_add_extension_rules_keeps_the_stored_runs_and_checks_the_base():
    stored = run_extension(dataclasses.replace(TINY, rules=("none", "yarn"), seeds=(0, 1)))
    new0 = run_extension(dataclasses.replace(TINY, rules=("yarn_no_temperature",), seeds=(0,)))
    new1 = run_extension(dataclasses.replace(TINY, rules=("yarn_no_temperature",), seeds=(1,)))
    control = run_extension(dataclasses.replace(TINY, rules=("yarn",), seeds=(0,)))
    added = add_extension_rules(stored, new1, new0, control)
    assert added["config"]["rules"] == ["none", "yarn", "yarn_no_temperature"]
    assert added["runs"][: len(stored["runs"])] == stored["runs"]  # the stored runs, unchanged
    assert [r["rule"] for r in added["runs"][len(stored["runs"]) :]] == ["yarn_no_temperature"] * 4
    assert added["cpu_seconds"] == pytest.approx(
        stored["cpu_seconds"] + new0["cpu_seconds"] + new1["cpu_seconds"] + control["cpu_seconds"]
    )
    check = added["parts"][-1]
    assert check["control"] and check["rules"] == ["yarn"] and check["max_loss_difference"] == 0.0
    assert [p["rules"] for p in added["parts"][:-1]] == [["none", "yarn"]] + [["yarn_no_temperature"]] * 2
    summary = summarize_extension(added)
    assert summary["yarn_no_temperature", 2, True]["n"] == 2
    # same weights, same fine-tuning data: the ablation differs from YaRN only by cos/sin scaling
    ab = [r for r in added["runs"] if r["rule"] == "yarn_no_temperature"]
    assert all(r["attention_factor"] == 1.0 for r in ab)
    with pytest.raises(ValueError, match="cover the stored seeds"):
        add_extension_rules(stored, new0)
    with pytest.raises(ValueError, match="not stored yet"):
        add_extension_rules(stored, control)
    moved = dataclasses.replace(TINY, rules=("yarn_no_temperature",), seeds=(1,), lr=TINY.lr * 0.5)
    with pytest.raises(ValueError, match="differs"):
        add_extension_rules(stored, new0, run_extension(moved))
    other_base = {**new1, "base": [{**new1["base"][0], "loss_at_train_len": new1["base"][0]["loss_at_train_len"] * 1.01}]}
    with pytest.raises(ValueError, match="retrained base model differs"):
        add_extension_rules(stored, new0, other_base)


def test_display_names_follow_the_prose():
    assert extension_label("none", "ko") == "RoPE 그대로" and extension_label("none", "en") == "plain RoPE"
    assert extension_label("linear", "en") == "PI" and extension_label("dynamic", "ko") == "동적 NTK"
    assert extension_label("yarn_no_temperature", "en") == "YaRN without temperature"
    assert extension_label("yarn_no_temperature", "ko") == "온도 없는 YaRN"  # the name 05b's prose uses
    with pytest.raises(ValueError, match="unknown rule"):
        extension_label("pi")
    with pytest.raises(ValueError, match="lang"):
        extension_label("none", "de")


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


def test_stored_results_with_the_older_keys_load_with_rule_names(tmp_path):
    old = {"config": {"methods": ["none", "yarn"], "seeds": [0]}, "runs": [{"method": "yarn", "seed": 0}], "base": []}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    data = load_extension_results(path)
    assert data["config"]["rules"] == ["none", "yarn"] and "methods" not in data["config"]
    assert data["runs"] == [{"rule": "yarn", "seed": 0}]
    stored = load_extension_results(results_dir() / "context_extension_full.json")
    assert set(stored["config"]["rules"]) == {r["rule"] for r in stored["runs"]}


def test_module_docstring_says_how_the_stored_file_was_made():
    """The recipe in posviz.extension's docstring and the cost in its source match the stored file."""
    import inspect

    import posviz.extension as extension

    stored = load_extension_results(results_dir() / "context_extension_full.json")
    doc = extension.__doc__
    for part in stored["parts"]:
        assert f"--seeds {' '.join(map(str, part['seeds']))} --out" in doc
    if not any("rules" in part for part in stored["parts"]):  # parts added by --add-rules name their rules
        assert "what added the ablation" not in doc
    assert f"{stored['cpu_seconds'] / 60:.1f} CPU-minutes" in inspect.getsource(extension)
