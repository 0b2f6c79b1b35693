"""check_mrope_position_ids (notebook 08): right answers pass, the named mistakes are caught by name."""

import re

import numpy as np
import pytest
import torch

import posviz
from posviz import exercises

HANGUL = re.compile(r"[\uac00-\ud7a3]")


@pytest.fixture(autouse=True)
def english_feedback():
    previous = posviz.get_language()
    posviz.set_language("en")
    yield
    posviz.set_language(previous)


def mrope_answer(segments, *, advance="max", swap=False, column_major=False, dtype=torch.int64):
    """A learner's M-RoPE ids written with torch, with switches for the classic mistakes."""
    parts, start = [], 0
    for segment in segments:
        if isinstance(segment, int):
            parts.append(torch.arange(start, start + segment).repeat(3, 1))
            start += segment
            continue
        t, h, w = segment
        grid = torch.meshgrid(torch.arange(t), torch.arange(h), torch.arange(w), indexing="ij")
        if column_major:
            grid = [g.transpose(1, 2) for g in grid]
        ids = torch.stack([g.reshape(-1) for g in grid])
        if swap:
            ids = ids[[0, 2, 1]]
        parts.append(ids + start)
        if advance == "added":  # the slip `start += ids.max() + 1` with the offset ids: the next start is added on
            start += int(ids.max()) + start + 1
            continue
        start += {"max": int(ids.max()) + 1,  # one past the largest id of the grid (ids before the offset)
                  "tokens": t * h * w, "hw": max(h, w)}[advance]
    return torch.cat(parts, dim=1).to(dtype)


def test_right_answers_pass(capsys):
    for answer in (posviz.mrope_position_ids, mrope_answer, lambda s: mrope_answer(s).numpy(),
                   lambda s: mrope_answer(s, dtype=torch.int32)):
        assert exercises.check_mrope_position_ids(answer) is True
    assert "all checks passed" in capsys.readouterr().out


@pytest.mark.parametrize(
    "mistake, words",
    [
        (lambda s: mrope_answer(s, advance="tokens"), "jumps ahead by the number of vision tokens"),
        (lambda s: mrope_answer(s, swap=True), "height (row) and width (column) ids are swapped"),
        (lambda s: mrope_answer(s, column_major=True), "flattened column by column"),
        (lambda s: mrope_answer(s, advance="hw"), "starts at s + max(h, w)"),
        (lambda s: mrope_answer(s, advance="added"), "is added to the current position"),
    ],
    ids=["continues by the token count", "rows and columns swapped", "column-major flattening", "temporal ids ignored",
         "max + 1 added to the start"],
)
def test_each_named_mistake_is_caught_and_named(mistake, words, capsys):
    assert exercises.check_mrope_position_ids(mistake) is False
    out = capsys.readouterr().out
    assert words in out and "input: segments=" in out and "Hint:" in out


def test_other_wrong_answers_are_rejected_without_raising(capsys):
    def stub(segments):
        raise NotImplementedError

    def crash(segments):
        raise IndexError("index 99 is out of bounds")

    wrong = [
        lambda s: mrope_answer(s)[:, :-1],  # one token short
        lambda s: mrope_answer(s).float(),  # not integers
        lambda s: mrope_answer(s) + 1,  # starts at 1
        lambda s: mrope_answer(s)[[1, 0, 2]],  # temporal and height swapped
        lambda s: None,
        42,
    ]
    for answer in wrong:
        assert exercises.check_mrope_position_ids(answer) is False
    assert exercises.check_mrope_position_ids(stub) is False
    assert "not attempted yet" in capsys.readouterr().out
    assert exercises.check_mrope_position_ids(crash) is False
    assert "index 99" in capsys.readouterr().out


def test_text_alone_must_still_give_three_rows(capsys):
    def one_row_for_text(segments):  # "text only is plain 1-D RoPE", so one row of positions
        if all(isinstance(s, int) for s in segments):
            return torch.arange(sum(segments))
        return mrope_answer(segments)

    assert exercises.check_mrope_position_ids(one_row_for_text) is False
    out = capsys.readouterr().out
    assert "input: segments=[5]" in out and "(3, 5)" in out


def test_the_checker_passes_the_learner_a_fresh_list():
    def mutating(segments):
        out = posviz.mrope_position_ids(segments)
        segments.clear()
        return out

    assert exercises.check_mrope_position_ids(mutating) is True


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_feedback_follows_the_language(lang, capsys):
    posviz.set_language(lang)
    exercises.check_mrope_position_ids(lambda s: mrope_answer(s, swap=True))
    out = capsys.readouterr().out
    assert bool(HANGUL.search(out)) == (lang == "ko")
    assert np.all([("Hint:" in out) == (lang == "en")])
