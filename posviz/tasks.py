"""Small synthetic tasks used to train the course's tiny models.

Every task returns a batch ``(tokens, targets)``: ``tokens`` is ``(batch, seq_len)`` int64 and
``targets`` is ``(batch, seq_len)`` int64 with :data:`IGNORE` (-100) where nothing is scored,
so one per-token loss (``F.cross_entropy(..., ignore_index=-100)``) and one accuracy function
serve all of them. Batches are drawn from an explicit ``torch.Generator``, so a task with a
seed gives the same data on every run.
"""

from __future__ import annotations

import torch

from ._checks import check_int

__all__ = ["IGNORE", "CharLMTask", "FirstTokenTask", "OffsetCopyTask", "OrderTask", "Task"]

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
    both labels, so a model without position information cannot beat chance (notebook 02).
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

    Raises:
        TypeError: if ``text`` is not a ``str``. ValueError: if ``text`` is too short, if
        ``alphabet`` repeats a character or misses one that ``text`` uses, or (in ``sample``) if
        ``seq_len + 1`` exceeds the text length.
    """

    def __init__(self, text: str, alphabet: str | None = None) -> None:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if len(text) < 2:
            raise ValueError(f"text must hold at least 2 characters, got {len(text)}")
        alphabet = "".join(sorted(set(text))) if alphabet is None else alphabet
        if len(set(alphabet)) != len(alphabet):
            raise ValueError("alphabet must not repeat a character")
        self.alphabet = alphabet
        self._ids = self.encode(text)  # ValueError if text uses a character missing from alphabet
        super().__init__(vocab_size=len(alphabet), num_outputs=len(alphabet))

    def __repr__(self) -> str:
        return f"CharLMTask(num_chars={len(self._ids)}, vocab_size={self.vocab_size})"

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
        starts = torch.randint(0, len(self._ids) - seq_len, (batch_size,), generator=generator)
        windows = self._ids[starts[:, None] + torch.arange(seq_len + 1)]
        return windows[:, :-1].clone(), windows[:, 1:].clone()
