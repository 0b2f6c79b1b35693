"""The showdown experiment: tasks, one run, results I/O, summaries and the command line."""

import json
import math

import numpy as np
import pytest
import torch

import posviz
from posviz import CharLMTask, TinyTransformer
from posviz import showdown as ex

TINY = ex.ShowdownConfig(
    name="tiny",
    methods=("none", "learned"),
    seeds=(0, 1),
    d_model=16,
    num_heads=2,
    num_layers=1,
    tasks=(ex.TaskSpec("copy", train_len=6, steps=5, eval_factors=(1, 2), eval_samples=8, vocab_size=5, offset=1),),
)


def test_char_lm_task_targets_are_the_next_character():
    task = CharLMTask("abcabcabd")
    assert task.alphabet == "abcd" and task.vocab_size == task.num_outputs == 4
    tokens, targets = task.sample(16, 5, generator=torch.Generator().manual_seed(0))
    text = task.decode(task.encode("abcabcabd"))
    assert text == "abcabcabd"
    for row_t, row_y in zip(tokens, targets, strict=True):
        window = task.decode(row_t) + task.decode(row_y[-1:])
        assert window in text  # a real window of the text, shifted by one
        assert torch.equal(row_t[1:], row_y[:-1])
    with pytest.raises(ValueError, match="exceeds"):
        task.sample(1, 9, generator=torch.Generator())
    with pytest.raises(ValueError, match="missing"):
        CharLMTask("abz", alphabet="ab")
    with pytest.raises(ValueError, match="repeat"):
        CharLMTask("ab", alphabet="aab")
    with pytest.raises(TypeError):
        CharLMTask(["a", "b"])


def test_nested_windows_score_the_same_text_at_every_length():
    text = "".join(chr(97 + (i * 7) % 26) for i in range(400))
    nested = CharLMTask(text, max_seq_len=64)
    short, short_y = nested.sample(8, 16, generator=torch.Generator().manual_seed(3))
    long, long_y = nested.sample(8, 64, generator=torch.Generator().manual_seed(3))
    assert torch.equal(short, long[:, :16]) and torch.equal(short_y, long_y[:, :16])
    free = CharLMTask(text)  # starts drawn over the whole text: another window for another length
    a, _ = free.sample(8, 16, generator=torch.Generator().manual_seed(3))
    b, _ = free.sample(8, 64, generator=torch.Generator().manual_seed(3))
    assert not torch.equal(a, b[:, :16])
    with pytest.raises(ValueError, match="max_seq_len"):
        nested.sample(1, 65, generator=torch.Generator())
    with pytest.raises(ValueError, match="exceeds the text length"):
        CharLMTask(text, max_seq_len=400)
    spec = ex.TaskSpec("charlm", train_len=8, steps=1, eval_factors=(1, 4))
    assert ex.make_tasks(spec, text)[1].max_seq_len == spec.max_len == 32


def test_corpus_and_char_lm_split():
    text = ex.load_corpus()
    assert 150_000 < len(text) <= 200_000 and text.startswith("In the beginning God created the heaven and the earth.")
    spec = ex.TaskSpec("charlm", train_len=8, steps=1)
    train_task, eval_task = ex.make_tasks(spec, text)
    assert train_task.alphabet == eval_task.alphabet == "".join(sorted(set(text)))
    assert len(train_task) + len(eval_task) == len(text)
    assert len(eval_task) == len(text) - int(len(text) * 0.9)


def test_task_spec_lengths_and_errors():
    spec = ex.TaskSpec("copy", train_len=32, steps=1, eval_factors=(1, 2, 4, 8))
    assert spec.eval_shift == 224 and spec.max_len == 256
    assert ex.TaskSpec("copy", train_len=32, steps=1, eval_factors=(1, 2), shift=100).max_len == 132
    with pytest.raises(ValueError, match="name"):
        ex.TaskSpec("sort", train_len=8, steps=1)
    with pytest.raises(ValueError, match="eval_factors"):
        ex.TaskSpec("copy", train_len=8, steps=1, eval_factors=())
    with pytest.raises(ValueError, match="steps"):
        ex.TaskSpec("copy", train_len=8, steps=0)
    with pytest.raises(ValueError, match="non-empty"):
        ex.ShowdownConfig(name="x", tasks=())


def test_every_contender_is_registered_and_presets_use_them():
    assert set(ex.METHODS) <= set(posviz.POSITION_METHODS)
    assert ex.FULL.methods == ex.SMALL.methods == ex.METHODS
    assert set(ex.METHOD_COLORS) == set(ex.METHODS)
    assert len(ex.FULL.seeds) >= 3 and len(ex.SMALL.seeds) >= 3


@pytest.mark.parametrize("method", ex.METHODS)
def test_a_few_training_steps_lower_the_loss(method):
    task = posviz.OffsetCopyTask(vocab_size=6, offset=1)
    torch.manual_seed(0)
    model = TinyTransformer(6, d_model=16, num_heads=2, num_layers=1, position=method, causal=True, max_len=16)
    result = posviz.train(model, task, seq_len=8, steps=20, batch_size=16, lr=1e-2)
    assert np.mean(result.losses[-5:]) < np.mean(result.losses[:5]) - 0.1


def test_run_one_record_and_untrained_learned_rows():
    spec = TINY.tasks[0]
    record, model = ex.run_one("learned", spec, 3, TINY)
    assert record["task"] == "copy" and record["method"] == "learned" and record["seed"] == 3
    assert record["num_parameters"] == model.num_parameters()
    assert [(e["length"], e["shift"]) for e in record["evals"]] == [(6, 0), (12, 0), (6, 6)]
    for e in record["evals"]:
        assert 0 <= e["sequence_accuracy"] <= e["token_accuracy"] <= 1
        assert e["perplexity"] == pytest.approx(math.exp(e["loss"]))
    assert len(record["loss_curve"]) == 5
    # the table has max_len = 12 rows; rows 6..11 never get a gradient and keep their initial values
    torch.manual_seed(3)
    fresh = ex.build_model("learned", spec, TINY, 5)
    table, initial = model.input_position.weight.detach(), fresh.input_position.weight.detach()
    assert table.shape == (12, 16)
    assert torch.equal(table[6:], initial[6:]) and not torch.equal(table[:6], initial[:6])
    # the same run gives the same numbers
    again, _ = ex.run_one("learned", spec, 3, TINY)
    assert again["evals"] == record["evals"] and again["loss_curve"] == record["loss_curve"]


def test_results_round_trip_summary_and_merge(tmp_path):
    results = ex.run_showdown(TINY, progress=False)
    assert [(r["method"], r["seed"]) for r in results["runs"]] == [("none", 0), ("none", 1), ("learned", 0), ("learned", 1)]
    assert {"config", "seeds", "versions", "date", "runs"} <= set(results)
    assert results["versions"]["torch"] == torch.__version__
    path = ex.save_results(results, tmp_path / "r.json")
    loaded = ex.load_results(path)
    assert loaded == json.loads(json.dumps(results))
    assert ex.ShowdownConfig.from_dict(loaded["config"]) == TINY
    summary = ex.summarize(loaded, "token_accuracy")
    values = [r["evals"][1]["token_accuracy"] for r in loaded["runs"] if r["method"] == "none"]
    got = summary[("copy", "none", 12, 0)]
    assert got["n"] == 2 and got["mean"] == pytest.approx(np.mean(values))
    assert got["std"] == pytest.approx(np.std(values, ddof=1)) and got["min"] == min(values)
    with pytest.raises(ValueError, match="metric"):
        ex.summarize(loaded, "bleu")
    (tmp_path / "bad.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match="runs"):
        ex.load_results(tmp_path / "bad.json")
    # merging two parts of one configuration
    part_a = {**loaded, "config": {**loaded["config"], "methods": ["none"]}, "runs": loaded["runs"][:2]}
    part_b = {**loaded, "config": {**loaded["config"], "methods": ["learned"]}, "runs": loaded["runs"][2:]}
    merged = ex.merge_results(part_b, part_a)
    assert merged["config"]["methods"] == ["none", "learned"] and len(merged["runs"]) == 4
    with pytest.raises(ValueError, match="more than one"):
        ex.merge_results(part_a, part_a)
    other = {**part_b, "config": {**part_b["config"], "d_model": 32}}
    with pytest.raises(ValueError, match="differs"):
        ex.merge_results(part_a, other)


def test_command_line_writes_results(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(ex.PRESETS, "small", TINY)
    out = tmp_path / "cli.json"
    assert ex.main(["--preset", "small", "--methods", "none", "--seeds", "4", "--out", str(out)]) == 0
    data = ex.load_results(out)
    assert data["config"]["methods"] == ["none"] and data["seeds"] == [4] and len(data["runs"]) == 1
    assert "wrote" in capsys.readouterr().out


def test_train_to_a_criterion_stops_at_the_first_check_that_meets_it():
    task = posviz.OffsetCopyTask(vocab_size=6, offset=1)
    torch.manual_seed(0)
    plain = posviz.train(TinyTransformer(6, d_model=16, num_heads=2, num_layers=1, causal=True, max_len=16), task, seq_len=8, steps=12, seed=4)
    calls = []

    def stop(model):
        calls.append(model.training)
        return len(calls) == 2, 0.5 * len(calls)

    torch.manual_seed(0)
    model = TinyTransformer(6, d_model=16, num_heads=2, num_layers=1, causal=True, max_len=16)
    checked = posviz.train(model, task, seq_len=8, steps=12, seed=4, check_every=3, stop=stop)
    assert checked.stopped_at == 6 and checked.checks == [(3, 0.5), (6, 1.0)]
    assert calls == [False, False] and not model.training  # checked in eval mode, returned in eval mode
    assert checked.losses == plain.losses[:6]  # the same batches as without checks
    assert plain.stopped_at is None and plain.checks == []
    with pytest.raises(ValueError, match="both"):
        posviz.train(model, task, seq_len=8, steps=2, check_every=1)
    with pytest.raises(ValueError, match="check_every"):
        posviz.train(model, task, seq_len=8, steps=2, check_every=0, stop=stop)


def test_run_one_records_fit_and_summaries_can_leave_unfit_runs_out():
    easy = ex.TaskSpec("copy", train_len=6, steps=9, check_every=3, fit_accuracy=0.01, eval_factors=(1, 2), eval_samples=8, vocab_size=5, offset=1)
    hard = ex.TaskSpec("copy", train_len=6, steps=4, check_every=3, fit_accuracy=1.0, eval_factors=(1, 2), eval_samples=8, vocab_size=5, offset=1)
    record, model = ex.run_one("none", easy, 0, TINY)
    assert record["fit"] and record["steps"] == 3 and len(record["fit_checks"]) == 1
    assert record["fit_checks"][0][0] == 3 and record["fit_value"] == record["fit_checks"][0][1] >= 0.01
    # the recorded value is the token accuracy on the check sequences
    again = ex.evaluate(model, ex.make_tasks(easy)[0], seq_len=6, num_samples=easy.check_samples, seed=ex.CHECK_SEED)
    assert again["token_accuracy"] == pytest.approx(record["fit_value"])
    unfit, _ = ex.run_one("none", hard, 0, TINY)
    assert not unfit["fit"] and unfit["steps"] == 4 and len(unfit["fit_checks"]) == 1
    assert unfit["fit_value"] < 1.0
    runs = [record, unfit]
    assert ex.fit_counts(runs) == {("copy", "none"): (1, 2)}
    assert ex.summarize(runs, "token_accuracy")[("copy", "none", 6, 0)]["n"] == 2
    only = ex.summarize(runs, "token_accuracy", fitted_only=True)[("copy", "none", 6, 0)]
    assert only["n"] == 1 and only["mean"] == record["evals"][0]["token_accuracy"]
    assert ex.summarize([unfit], "token_accuracy", fitted_only=True) == {}
    old = {k: v for k, v in record.items() if k != "fit"}
    with pytest.raises(ValueError, match="fit status"):
        ex.summarize([old], "loss", fitted_only=True)


def test_fit_criteria_of_the_presets():
    for config in (ex.FULL, ex.SMALL):
        for spec in config.tasks:
            assert spec.check_every is not None and spec.steps >= 4 * spec.check_every
    copy, lm = ex.FULL.tasks
    previous = posviz.get_language()
    try:  # the criterion in words follows the language setting, as figure text does
        posviz.set_language("en")
        assert copy.fit_criterion == "token accuracy at L=32 >= 0.95"
        assert lm.fit_criterion.startswith(f"loss at L=64 <= {lm.fit_loss:g} nats")
        posviz.set_language("ko")
        assert copy.fit_criterion == "L=32에서 토큰 정확도 >= 0.95"
        assert lm.fit_criterion.startswith(f"L=64에서 손실 <= {lm.fit_loss:g} nats (퍼플렉서티 <= ")
        posviz.set_language("both")
        assert copy.fit_criterion == "L=32에서 토큰 정확도 >= 0.95 · token accuracy at L=32 >= 0.95"
    finally:
        posviz.set_language(previous)
    with pytest.raises(ValueError, match="fit_accuracy"):
        ex.TaskSpec("copy", train_len=8, steps=1, fit_accuracy=1.5)
    with pytest.raises(ValueError, match="check_every"):
        ex.TaskSpec("copy", train_len=8, steps=1, check_every=0)


def test_merge_parts_with_different_tasks_and_seeds_and_incremental_saves(tmp_path):
    lm = ex.TaskSpec("charlm", train_len=6, steps=3, eval_factors=(1,), eval_samples=4, check_samples=4)
    config = ex.ShowdownConfig(name="two", methods=("none",), seeds=(0,), d_model=16, num_heads=2, num_layers=1,
                               tasks=(TINY.tasks[0], lm))
    path = tmp_path / "part.json"
    first = ex.run_showdown(ex.ShowdownConfig(**{**config.__dict__, "tasks": (TINY.tasks[0],)}), progress=False, save_to=path)
    saved = ex.load_results(path)
    assert saved["complete"] and len(saved["runs"]) == 1 and saved["cpu_seconds"] > 0
    second = ex.run_showdown(ex.ShowdownConfig(**{**config.__dict__, "tasks": (lm,), "seeds": (1, 2)}), progress=False)
    merged = ex.merge_results(json.loads(json.dumps(second)), json.loads(json.dumps(first)))
    assert [s["name"] for s in merged["config"]["tasks"]] == ["copy", "charlm"]
    assert merged["seeds"] == merged["config"]["seeds"] == [0, 1, 2]
    assert sorted((r["task"], r["seed"]) for r in merged["runs"]) == [("charlm", 1), ("charlm", 2), ("copy", 0)]
    assert [p["tasks"] for p in merged["parts"]] == [["charlm"], ["copy"]]
    changed = json.loads(json.dumps(second))
    changed["config"]["tasks"][0]["steps"] = 4
    with pytest.raises(ValueError, match="other settings"):
        ex.merge_results(changed, json.loads(json.dumps(second | {"runs": []})))


def _synthetic_results(fits):
    """A results dict without training: one copy run per (method, seed), ``fits[method]`` its fit per seed."""
    runs = []
    for method, per_seed in fits.items():
        for seed, fit in enumerate(per_seed):
            evals = [
                {"length": n, "shift": s, "token_accuracy": 1 / (1 + seed + n / 8), "sequence_accuracy": 0.5}
                | {"loss": 1.0, "perplexity": math.e}
                for n, s in ((8, 0), (16, 0), (8, 56))
            ]
            runs.append({"task": "copy", "method": method, "seed": seed, "fit": fit, "evals": evals})
    return {"config": {"methods": list(fits)}, "runs": runs}


def test_method_labels_are_the_names_the_prose_uses():
    korean = ["없음(NoPE)", "사인파", "학습된 위치 임베딩", "Shaw", "T5", "RoPE", "ALiBi"]
    english = ["none (NoPE)", "sinusoidal", "learned", "Shaw", "T5", "RoPE", "ALiBi"]
    assert [ex.method_label(m, "ko") for m in ex.METHODS] == korean
    assert [ex.method_label(m, "en") for m in ex.METHODS] == english
    before = posviz.get_language()
    try:
        posviz.set_language("both")
        assert ex.method_label("sinusoidal") == "사인파 · sinusoidal" and ex.method_label("rope") == "RoPE"
    finally:
        posviz.set_language(before)
    assert ex.method_label("shaw_k4") == "shaw_k4"  # not registered: its name
    with pytest.raises(ValueError, match="lang"):
        ex.method_label("rope", "de")
    with pytest.raises(ValueError, match="label"):
        posviz.PositionMethod("x", None, None, label=("only one",))


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_plot_metric_vs_length_legend_uses_display_names_not_keys(lang):
    import re

    import matplotlib.pyplot as plt

    fits = {
        "none": [False, False],
        "sinusoidal": [True, True],
        "learned": [True, False],
        "rope": [True, True],
    }
    results = _synthetic_results(fits)
    before = posviz.get_language()
    try:
        posviz.set_language(lang)
        ax = ex.plot_metric_vs_length(results, "copy", "token_accuracy", train_len=8, mark_unfit=True)
        legend = [text.get_text() for text in ax.get_legend().get_texts()]
        ylabel = ax.get_ylabel()
    finally:
        posviz.set_language(before)
        plt.close("all")
    if lang == "ko":
        unfit, part = "없음(NoPE), 기준 미달", "학습된 위치 임베딩, 기준 충족 1/2"
        assert legend == [unfit, "사인파", part, "RoPE", "학습 길이"]
        assert ylabel == "토큰 정확도"
        keys = {"none", "sinusoidal", "learned", "rope", "token_accuracy"}
        assert not keys & {w for text in (*legend, ylabel) for w in re.findall(r"\w+", text)}
    else:
        assert legend == ["none (NoPE), unfit", "sinusoidal", "learned, fit 1/2", "RoPE", "training length"]
        assert ylabel == "token accuracy"
