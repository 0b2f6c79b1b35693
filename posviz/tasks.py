"""Small tasks used to train the course's tiny models, and how an experiment trains and scores one.

Every task returns a batch ``(tokens, targets)``: ``tokens`` is ``(batch, seq_len)`` int64 and
``targets`` is ``(batch, seq_len)`` int64 with :data:`IGNORE` (-100) where nothing is scored,
so one per-token loss (``F.cross_entropy(..., ignore_index=-100)``) and one accuracy function
serve all of them. Batches are drawn from an explicit ``torch.Generator``, so a task with a
seed gives the same data on every run.

:class:`TaskSpec` says how the experiments of notebooks 05b and 06 train and evaluate one task
(``"copy"``: :class:`OffsetCopyTask`; ``"charlm"``: :class:`CharLMTask` on the Book of Genesis),
and :func:`make_tasks` builds its training and evaluation tasks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ._checks import check_choice, check_int, check_positive_float
from .data import data_dir

__all__ = [
    "CORPUS_FILE",
    "IGNORE",
    "CharLMTask",
    "FirstTokenTask",
    "OffsetCopyTask",
    "OrderTask",
    "Task",
    "TaskSpec",
    "load_corpus",
    "make_tasks",
]

#: Target value that the loss and the accuracy skip.
IGNORE = -100


class Task:
    """Base class: ``vocab_size`` input ids, ``num_outputs`` classes, ``sample(...)`` batches."""

    def __init__(self, vocab_size: int, num_outputs: int) -> None:
        self.vocab_size = vocab_size
        self.num_outputs = num_outputs

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"

    def sample(
        self, batch_size: int, seq_len: int, *, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def _check(batch_size: int, seq_len: int, min_len: int) -> None:
        check_int("batch_size", batch_size, minimum=1)
        check_int("seq_len", seq_len, minimum=min_len)


class FirstTokenTask(Task):
    """Remember the first token: the target at the last position is the token at position 0.

    Position 0 holds one of ``num_classes`` signal tokens (ids ``0 … num_classes-1``); the other
    ``seq_len - 1`` positions hold distractors drawn from ids ``num_classes … num_classes +
    num_distractors - 1``. Chance accuracy is ``1 / num_classes``. Used in notebook 01 to show
    how recurrent models forget over distance.
    """

    def __init__(self, num_classes: int = 4, num_distractors: int = 8) -> None:
        self.num_classes = check_int("num_classes", num_classes, minimum=2)
        self.num_distractors = check_int("num_distractors", num_distractors, minimum=1)
        super().__init__(vocab_size=num_classes + num_distractors, num_outputs=num_classes)

    def sample(self, batch_size, seq_len, *, generator):
        self._check(batch_size, seq_len, 2)
        tokens = torch.randint(
            self.num_classes, self.vocab_size, (batch_size, seq_len), generator=generator
        )
        first = torch.randint(0, self.num_classes, (batch_size,), generator=generator)
        tokens[:, 0] = first
        targets = torch.full_like(tokens, IGNORE)
        targets[:, -1] = first
        return tokens, targets


class OrderTask(Task):
    """Does token A come before token B? An order-sensitive sequence classification.

    Position 0 is a ``[CLS]`` token (id 0); markers A (id 1) and B (id 2) sit at two distinct
    random positions among ``seq_len - 1`` filler tokens (ids ``3 …``). The target at position 0
    is 1 if A comes before B, else 0; chance is 50 %. The multiset of tokens is the same for
    both labels, so a model without position information gets each swapped pair exactly half
    right: its expected accuracy is exactly chance (notebook 02).
    """

    def __init__(self, num_fillers: int = 8) -> None:
        self.num_fillers = check_int("num_fillers", num_fillers, minimum=1)
        super().__init__(vocab_size=3 + num_fillers, num_outputs=2)

    def sample(self, batch_size, seq_len, *, generator):
        self._check(batch_size, seq_len, 3)
        tokens = torch.randint(3, self.vocab_size, (batch_size, seq_len), generator=generator)
        tokens[:, 0] = 0
        # two distinct slots in 1 … seq_len-1, uniformly
        slots = torch.rand(batch_size, seq_len - 1, generator=generator).argsort(dim=1)[:, :2] + 1
        rows = torch.arange(batch_size)
        tokens[rows, slots[:, 0]] = 1
        tokens[rows, slots[:, 1]] = 2
        targets = torch.full_like(tokens, IGNORE)
        targets[:, 0] = (slots[:, 0] < slots[:, 1]).long()
        return tokens, targets


class OffsetCopyTask(Task):
    """Output the token ``offset`` steps back: ``target[i] = tokens[i - offset]`` for ``i >= offset``.

    Tokens are uniform over ``vocab_size`` ids; the first ``offset`` positions are not scored.
    The rule depends only on the relative offset, so a model that represents relative
    position can apply it at any length and any shift (notebooks 04–06). Use a causal model:
    the answer is always in the past.
    """

    def __init__(self, vocab_size: int = 16, offset: int = 2) -> None:
        vocab_size = check_int("vocab_size", vocab_size, minimum=2)
        self.offset = check_int("offset", offset, minimum=0)
        super().__init__(vocab_size=vocab_size, num_outputs=vocab_size)

    def sample(self, batch_size, seq_len, *, generator):
        self._check(batch_size, seq_len, self.offset + 1)
        tokens = torch.randint(0, self.vocab_size, (batch_size, seq_len), generator=generator)
        targets = torch.full_like(tokens, IGNORE)
        targets[:, self.offset :] = tokens[:, : seq_len - self.offset]
        return tokens, targets


class CharLMTask(Task):
    """Next-character language modelling on a fixed text: ``target[i] = text[start + i + 1]``.

    Each sequence is a window of ``seq_len`` characters starting at a uniformly random offset;
    every position is scored (the target is the character that follows). Use a causal model.
    ``exp(mean loss)`` is the per-character perplexity (notebook 06).

    Args:
        text: the training or evaluation text, at least 2 characters.
        alphabet: the characters that define the token ids (id = index in ``alphabet``); default
            ``sorted(set(text))``. Pass the training text's alphabet to an evaluation task so both
            share ids.
        max_seq_len: for an evaluation task scored at several lengths. When given, the start of
            each window is drawn as for a window of ``max_seq_len`` characters, whatever
            ``seq_len`` is, so that with the same generator seed the sequence of length ``n`` is
            the first ``n`` characters of the sequence of length ``max_seq_len``: every length
            scores the same text, and a change with length is the model's, not the sample's.
            ``None`` (the default, and what training uses) draws starts over the whole text.

    Raises:
        TypeError: if ``text`` is not a ``str``. ValueError: if ``text`` is too short, if
        ``alphabet`` repeats a character or misses one that ``text`` uses, if ``max_seq_len + 1``
        exceeds the text length, or (in ``sample``) if ``seq_len + 1`` exceeds the text length or
        ``seq_len`` exceeds ``max_seq_len``.
    """

    def __init__(self, text: str, alphabet: str | None = None, *, max_seq_len: int | None = None) -> None:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if len(text) < 2:
            raise ValueError(f"text must hold at least 2 characters, got {len(text)}")
        alphabet = "".join(sorted(set(text))) if alphabet is None else alphabet
        if len(set(alphabet)) != len(alphabet):
            raise ValueError("alphabet must not repeat a character")
        self.alphabet = alphabet
        self._ids = self.encode(text)  # ValueError if text uses a character missing from alphabet
        if max_seq_len is not None:
            check_int("max_seq_len", max_seq_len, minimum=1)
            if max_seq_len + 1 > len(self._ids):
                raise ValueError(f"max_seq_len + 1 = {max_seq_len + 1} exceeds the text length {len(self._ids)}")
        self.max_seq_len = max_seq_len
        super().__init__(vocab_size=len(alphabet), num_outputs=len(alphabet))

    def __repr__(self) -> str:
        nested = "" if self.max_seq_len is None else f", max_seq_len={self.max_seq_len}"
        return f"CharLMTask(num_chars={len(self._ids)}, vocab_size={self.vocab_size}{nested})"

    def __len__(self) -> int:
        return len(self._ids)

    def encode(self, text: str) -> torch.Tensor:
        """Token ids ``(len(text),)`` int64 of ``text`` (``ValueError`` on an unknown character)."""
        index = {c: i for i, c in enumerate(self.alphabet)}
        unknown = sorted(set(text) - set(index))
        if unknown:
            raise ValueError(f"characters missing from the alphabet: {unknown[:10]!r}")
        return torch.tensor([index[c] for c in text], dtype=torch.int64)

    def decode(self, ids) -> str:
        """The characters of a sequence of token ids."""
        return "".join(self.alphabet[int(i)] for i in ids)

    def sample(self, batch_size, seq_len, *, generator):
        self._check(batch_size, seq_len, 1)
        if seq_len + 1 > len(self._ids):
            raise ValueError(f"seq_len + 1 = {seq_len + 1} exceeds the text length {len(self._ids)}")
        if self.max_seq_len is not None and seq_len > self.max_seq_len:
            raise ValueError(f"seq_len = {seq_len} exceeds this task's max_seq_len = {self.max_seq_len}")
        longest = seq_len if self.max_seq_len is None else self.max_seq_len
        starts = torch.randint(0, len(self._ids) - longest, (batch_size,), generator=generator)
        windows = self._ids[starts[:, None] + torch.arange(seq_len + 1)]
        return windows[:, :-1].clone(), windows[:, 1:].clone()


#: The character-level corpus in ``data/`` (see ``data/README.md``).
CORPUS_FILE = "kjv_genesis.txt"
TASK_NAMES = ("copy", "charlm")


@dataclass(frozen=True)
class TaskSpec:
    """How one task is trained and evaluated.

    Attributes:
        name: ``"copy"`` or ``"charlm"``.
        train_len: training sequence length in tokens.
        steps: optimiser steps (one fresh batch each).
        batch_size, lr: optimiser settings for :func:`posviz.train`.
        eval_factors: evaluation lengths as multiples of ``train_len`` (1 = the training length).
        shift: the shifted evaluation runs at ``train_len`` tokens with positions
            ``shift … shift + train_len - 1``; ``None`` means ``train_len * (max(eval_factors) - 1)``,
            so the largest position equals that of the longest evaluation.
        eval_samples: sequences per evaluation point.
        vocab_size, offset: the copy task's settings (ignored for ``"charlm"``).
        valid_fraction: the last fraction of the corpus kept for evaluation (``"charlm"`` only).
        check_every: train to the fit criterion: check it every ``check_every`` steps and stop
            as soon as it is met, so ``steps`` is the maximum; ``None`` trains exactly ``steps``
            steps (the criterion is still checked once at the end and recorded).
        fit_accuracy: copy's fit criterion: token accuracy at ``train_len`` ``>=`` this.
        fit_loss: the language model's fit criterion: loss at ``train_len`` ``<=`` this (nats
            per character).
        check_samples: sequences of the fit check. They are drawn from the *training* task with
            their own seed (:data:`CHECK_SEED`), never from the evaluation data.

    The fit criterion is the same for every method of a task: a run that has not met it has not
    fit the training length, and no length claim is made from it (:func:`summarize` with
    ``fitted_only=True`` leaves it out).
    """

    name: str
    train_len: int
    steps: int
    batch_size: int = 32
    lr: float = 3e-3
    eval_factors: tuple[int, ...] = (1, 2, 4, 8)
    shift: int | None = None
    eval_samples: int = 256
    vocab_size: int = 16
    offset: int = 2
    valid_fraction: float = 0.1
    check_every: int | None = None
    fit_accuracy: float = 0.95
    fit_loss: float = 1.4
    check_samples: int = 128

    def __post_init__(self) -> None:
        check_choice("name", self.name, TASK_NAMES)
        check_int("train_len", self.train_len, minimum=self.offset + 1 if self.name == "copy" else 1)
        check_int("steps", self.steps, minimum=1)
        check_int("batch_size", self.batch_size, minimum=1)
        check_positive_float("lr", self.lr)
        check_int("eval_samples", self.eval_samples, minimum=1)
        if not self.eval_factors or any(check_int("eval factor", f, minimum=1) < 1 for f in self.eval_factors):
            raise ValueError(f"eval_factors must be a non-empty tuple of ints >= 1, got {self.eval_factors!r}")
        if self.shift is not None:
            check_int("shift", self.shift, minimum=0)
        if not 0 < self.valid_fraction < 1:
            raise ValueError(f"valid_fraction must lie in (0, 1), got {self.valid_fraction}")
        if self.check_every is not None:
            check_int("check_every", self.check_every, minimum=1)
        check_int("check_samples", self.check_samples, minimum=1)
        if not 0 < self.fit_accuracy <= 1:
            raise ValueError(f"fit_accuracy must lie in (0, 1], got {self.fit_accuracy}")
        check_positive_float("fit_loss", self.fit_loss)

    @property
    def fit_criterion(self) -> str:
        """The fit criterion in words, in the language set by :func:`posviz.setup` (through
        :func:`posviz.t`), e.g. ``"token accuracy at L=32 >= 0.95"`` in English."""
        from .style import t  # shown in notebook 06's tables

        n = self.train_len
        if self.name == "copy":
            return t(f"L={n}에서 토큰 정확도 >= {self.fit_accuracy:g}", f"token accuracy at L={n} >= {self.fit_accuracy:g}")
        loss, ppl = self.fit_loss, math.exp(self.fit_loss)
        return t(
            f"L={n}에서 손실 <= {loss:g} nats (퍼플렉서티 <= {ppl:.2f})",
            f"loss at L={n} <= {loss:g} nats (perplexity <= {ppl:.2f})",
        )

    @property
    def eval_shift(self) -> int:
        """The position shift of the shifted evaluation, in tokens."""
        return self.train_len * (max(self.eval_factors) - 1) if self.shift is None else self.shift

    @property
    def max_len(self) -> int:
        """Positions every model must accept: the longest evaluation or the shifted one."""
        return max(self.train_len * max(self.eval_factors), self.eval_shift + self.train_len)


def load_corpus() -> str:
    """The text of ``data/kjv_genesis.txt`` (Genesis, King James Version; about 197 000 characters)."""
    return (data_dir() / CORPUS_FILE).read_text(encoding="utf-8")


def make_tasks(spec: TaskSpec, corpus: str | None = None) -> tuple[Task, Task]:
    """The ``(train_task, eval_task)`` of ``spec``.

    For ``"copy"`` both are the same task (evaluation draws from its own seed). For ``"charlm"``
    the training task reads the first ``1 - valid_fraction`` of the corpus and the evaluation
    task the rest, with the alphabet of the whole corpus; the evaluation task nests its windows
    (``max_seq_len = spec.max_len``), so every evaluation length scores prefixes of the same text.
    """
    if spec.name == "copy":
        task = OffsetCopyTask(vocab_size=spec.vocab_size, offset=spec.offset)
        return task, task
    text = load_corpus() if corpus is None else corpus
    cut = int(len(text) * (1 - spec.valid_fraction))
    alphabet = "".join(sorted(set(text)))
    return CharLMTask(text[:cut], alphabet), CharLMTask(text[cut:], alphabet, max_seq_len=spec.max_len)
