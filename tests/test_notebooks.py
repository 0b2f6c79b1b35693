"""Run every notebook top to bottom in a fresh kernel; fail on an error, on any warning, on
figure text in the wrong language, or on figure text that leaves its figure or overlaps other text.

The run is the bilingual one (``lang="both"``). With ``POSVIZ_FIGURE_TEXT`` set, ``posviz.setup``
logs every ``posviz.t(ko, en)`` call and every text drawn in a figure, and ``tools/textcheck.py``
checks the Korean halves for English words, the English halves for Hangul, and text outside
``t()`` (the same in both one-language editions) for both, so the language check needs no
second execution of the Korean and English editions.

The executed notebook is kept as the bilingual edition in build/executed-editions/ (where
``course.py run``, the site and the decks look first), and its lecture deck is walked in
Chromium here (:func:`decks.check_course_deck`), so no other test executes it again. Its
training runs are recorded in build/memo/ (``POSVIZ_MEMO_RECORD``, posviz/_memo.py), and the
Korean and English executions of tests/test_slides.py load them instead of training again.
"""

import pytest
from decks import check_course_deck
from hf import transformers_with_torch

from tools import textcheck, website
from tools.nbrun import MEMO, execute, notebook_paths


@pytest.mark.parametrize("path", notebook_paths(), ids=lambda p: p.stem)
def test_notebook_runs_clean(path, tmp_path, monkeypatch):
    if path.name.startswith("07_"):
        transformers_with_torch()  # the real model needs transformers 5, which needs torch >= 2.6
    log = tmp_path / "figure_text.jsonl"
    monkeypatch.setenv("POSVIZ_FIGURE_TEXT", str(log))
    monkeypatch.setenv("POSVIZ_MEMO_RECORD", str(MEMO))  # genuine run; the Korean and English decks' runs reuse its training
    key = website.execution_key(path, "both")  # of the notebook as written, before it runs
    run = execute(path)
    slowest = max(run.cell_seconds().items(), key=lambda item: item[1])
    print(f"{path.name}: {run.seconds:.1f} s; slowest cell {slowest[0]}: {slowest[1]:.1f} s")
    assert not run.problems, "\n".join(run.problems)
    records = textcheck.read_figure_text_log(log)
    if any(c.cell_type == "code" and "plt." in c.source for c in run.notebook.cells):
        assert any(r["kind"] == "text" for r in records), "figures were drawn but none was logged"
    problems = textcheck.figure_language_problems(records)
    assert not problems, "figure text in the wrong language:\n" + "\n".join(problems)
    problems = textcheck.figure_fit_problems(records)
    assert not problems, "figure text off the figure or over other text:\n" + "\n".join(problems)
    executed = website.store_execution(run, key, website.EXECUTED / "both" / path.name)
    check_course_deck(executed, "both", tmp_path)
