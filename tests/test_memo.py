"""posviz/_memo.py: a training run recorded by one execution and replayed, bit for bit, by the next."""

from __future__ import annotations

import torch

import posviz
from posviz import _memo
from tools import website


def _model(seed: int) -> posviz.TinyTransformer:
    torch.manual_seed(seed)
    return posviz.TinyTransformer(16, d_model=16, num_heads=2, num_layers=1, position="rope", causal=True)


def _run(seed: int = 0, **train_options):
    """Train a fresh model on the copy task; return the model, the result, the number of batches
    drawn and the next torch random number (the global generator's state after the call)."""
    model, task = _model(seed), posviz.OffsetCopyTask(16, 2)
    result = posviz.train(model, task, seq_len=12, steps=5, batch_size=8, lr=1e-2, seed=seed, **train_options)
    return model, result, torch.rand(3)


def _count_batches(monkeypatch) -> list[int]:
    """Count ``OffsetCopyTask.sample`` calls (patched on the class, so no task's fields change)."""
    calls, original = [], posviz.OffsetCopyTask.sample

    def sample(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(posviz.OffsetCopyTask, "sample", sample)
    return calls


def _files(root):
    return sorted(p.name for p in root.rglob("*.pt"))


def test_a_recorded_run_is_replayed_bit_for_bit_without_training(tmp_path, monkeypatch):
    monkeypatch.setenv(_memo.RECORD_ENV, str(tmp_path))
    first, first_result, first_next = _run()
    assert [name.split("-")[0] for name in _files(tmp_path)] == ["train"]
    monkeypatch.delenv(_memo.RECORD_ENV)
    monkeypatch.setenv(_memo.MEMO_ENV, str(tmp_path))
    batches = _count_batches(monkeypatch)
    second, second_result, second_next = _run()
    assert batches == [], "the replay drew no batch: nothing was trained"
    assert second_result == first_result and len(second_result.losses) == 5
    for (name, a), (_, b) in zip(first.named_parameters(), second.named_parameters()):
        assert torch.equal(a, b), name
        assert torch.equal(a.grad, b.grad), name
    assert torch.equal(second_next, first_next), "the global generator continues as after the real run"
    assert second.training == first.training is False


def test_without_the_variables_every_call_trains_and_nothing_is_stored(tmp_path, monkeypatch):
    monkeypatch.delenv(_memo.MEMO_ENV, raising=False)
    monkeypatch.delenv(_memo.RECORD_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    batches = _count_batches(monkeypatch)
    _run()
    _run()
    assert len(batches) == 10 and list(tmp_path.iterdir()) == []


def test_record_only_never_replays(tmp_path, monkeypatch):
    monkeypatch.setenv(_memo.RECORD_ENV, str(tmp_path))
    batches = _count_batches(monkeypatch)
    _run()
    _run()
    assert len(batches) == 10 and len(_files(tmp_path)) == 1


def test_another_start_trains_again(tmp_path, monkeypatch):
    monkeypatch.setenv(_memo.MEMO_ENV, str(tmp_path))
    batches = _count_batches(monkeypatch)
    _run(seed=0)
    model = _model(0)
    torch.manual_seed(123)  # the same call from another global generator state is another key
    posviz.train(model, posviz.OffsetCopyTask(16, 2), seq_len=12, steps=5, batch_size=8, lr=1e-2, seed=0)
    _run(seed=1)
    assert len(batches) == 15 and len(_files(tmp_path)) == 3


def test_a_function_written_outside_posviz_is_not_memoised(tmp_path, monkeypatch):
    monkeypatch.setenv(_memo.MEMO_ENV, str(tmp_path))
    batches = _count_batches(monkeypatch)
    _run(forward=lambda model, tokens: model(tokens))
    _run(forward=lambda model, tokens: model(tokens))
    assert len(batches) == 10 and _files(tmp_path) == []


def test_a_call_that_changes_another_argument_or_prints_is_not_stored(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(_memo.MEMO_ENV, str(tmp_path))

    @_memo.memoized
    def append(values: list, value: int) -> int:
        values.append(value)
        return len(values)

    @_memo.memoized
    def loud(value: int) -> int:
        print("computing", value)
        return value + 1

    assert append([], 1) == 1 and append([], 1) == 1
    assert loud(1) == 2 and loud(1) == 2
    assert capsys.readouterr().out == "computing 1\ncomputing 1\n", "printed both times, as without the memo"
    assert _files(tmp_path) == []

    @_memo.memoized
    def quiet(value: int) -> int:
        return value + 1

    assert quiet(1) == 2 and len(_files(tmp_path)) == 1


def test_a_file_cut_short_is_trained_again(tmp_path, monkeypatch):
    monkeypatch.setenv(_memo.MEMO_ENV, str(tmp_path))
    _, result, _ = _run()
    (path,) = tmp_path.rglob("*.pt")
    path.write_bytes(path.read_bytes()[:100])
    batches = _count_batches(monkeypatch)
    _, again, _ = _run()
    assert len(batches) == 5 and again.losses == result.losses


def test_the_folders_of_an_older_posviz_source_are_removed(tmp_path, monkeypatch):
    stale = tmp_path / "0123456789abcdef"
    stale.mkdir()
    (stale / "train-x.pt").write_bytes(b"old")
    monkeypatch.setenv(_memo.MEMO_ENV, str(tmp_path))
    _run()
    assert not stale.exists() and [p.name for p in tmp_path.iterdir()] == [_memo._source_digest().hex()[:16]]


def test_an_execution_that_replays_is_kept_under_a_key_no_build_reuses(monkeypatch):
    path = website.notebook_paths()[0]
    monkeypatch.delenv(_memo.MEMO_ENV, raising=False)
    genuine = website.execution_key(path, "ko")
    monkeypatch.setenv(_memo.MEMO_ENV, "memo")
    assert website.execution_key(path, "ko") == genuine + "-replayed"
    monkeypatch.setenv(_memo.RECORD_ENV, "memo")
    monkeypatch.delenv(_memo.MEMO_ENV)
    assert website.execution_key(path, "ko") == genuine, "a recording execution is genuine"
