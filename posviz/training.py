"""One small training loop and one evaluation function for every experiment in the course.

Models map ``tokens (batch, seq_len)`` to per-token logits ``(batch, seq_len, num_outputs)``;
tasks (:mod:`posviz.tasks`) give per-token targets with ``-100`` where nothing is scored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from ._checks import check_int
from ._memo import memoized
from .tasks import IGNORE, Task

__all__ = ["TrainResult", "evaluate", "per_token_loss", "train"]


def per_token_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over the scored tokens (targets ``!= -100``).

    Args:
        logits: ``(batch, seq_len, num_outputs)`` float.
        targets: ``(batch, seq_len)`` int64, ``-100`` where not scored.
    """
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=IGNORE)


@dataclass
class TrainResult:
    """What :func:`train` returns: the loss of every step and the wall time in seconds.

    ``stopped_at`` is the step count after which ``stop`` returned ``True`` (``None`` if training
    ran all its steps); ``checks`` holds ``(step, value)`` for every call of ``stop`` that
    returned a number-like verdict (see :func:`train`).
    """

    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0
    stopped_at: int | None = None
    checks: list[tuple[int, float]] = field(default_factory=list)

    @property
    def seconds_per_step(self) -> float:
        return self.seconds / max(len(self.losses), 1)


@memoized  # only under the tests' POSVIZ_MEMO: the editions of a notebook train once (posviz/_memo.py)
def train(
    model: nn.Module,
    task: Task,
    *,
    seq_len: int,
    steps: int,
    batch_size: int = 32,
    lr: float = 3e-3,
    seed: int = 0,
    weight_decay: float = 0.0,
    grad_clip: float | None = 1.0,
    forward: Callable[[nn.Module, torch.Tensor], torch.Tensor] | None = None,
    progress: bool | str = False,
    check_every: int | None = None,
    stop: Callable[[nn.Module], tuple[bool, float]] | None = None,
) -> TrainResult:
    """Train ``model`` on fresh batches of ``task`` with AdamW and a per-token cross-entropy.

    Args:
        model: maps ``(batch, seq_len)`` int64 tokens to ``(batch, seq_len, task.num_outputs)`` logits.
        task: a :class:`~posviz.tasks.Task`.
        seq_len: training length in tokens.
        steps: optimiser steps (one fresh batch each).
        batch_size, lr, weight_decay, grad_clip: optimiser settings (``grad_clip=None`` disables).
        seed: seeds the data generator (the model's initial weights are the caller's business).
        forward: optional ``(model, tokens) -> logits`` for models with another call signature.
        progress: ``True`` or a description string shows a tqdm progress bar.
        check_every, stop: train to a criterion. After every ``check_every`` steps,
            ``stop(model)`` is called with the model in eval mode and must return
            ``(met, value)``; training ends as soon as ``met`` is true, so ``steps`` becomes a
            maximum. The batches are the same as without checks, so a run stopped at step ``n``
            equals a run of ``n`` steps. Both or neither must be given.

    Returns:
        :class:`TrainResult` with one loss per step, the wall time (checks included) and the checks.

    Raises:
        ValueError: for non-positive sizes, or only one of ``check_every`` and ``stop``.
    """
    import time

    from tqdm.auto import tqdm

    check_int("steps", steps, minimum=1)
    if (check_every is None) != (stop is None):
        raise ValueError("give both check_every and stop, or neither")
    if check_every is not None:
        check_int("check_every", check_every, minimum=1)
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    call = forward or (lambda m, tokens: m(tokens))
    result = TrainResult()
    model.train()
    start = time.perf_counter()
    bar = tqdm(
        range(steps),
        desc=progress if isinstance(progress, str) else "train",
        disable=not progress,
        leave=False,
    )
    for step in bar:
        tokens, targets = task.sample(batch_size, seq_len, generator=generator)
        loss = per_token_loss(call(model, tokens), targets)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        if grad_clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimiser.step()
        result.losses.append(loss.item())
        if check_every is not None and (step + 1) % check_every == 0:
            model.eval()
            met, value = stop(model)
            model.train()
            result.checks.append((step + 1, float(value)))
            if met:
                result.stopped_at = step + 1
                break
    result.seconds = time.perf_counter() - start
    model.eval()
    return result


@memoized
@torch.no_grad()
def evaluate(
    model: nn.Module,
    task: Task,
    *,
    seq_len: int,
    num_samples: int = 512,
    batch_size: int = 128,
    seed: int = 12345,
    forward: Callable[[nn.Module, torch.Tensor], torch.Tensor] | None = None,
) -> dict[str, float]:
    """Accuracy of ``model`` on ``num_samples`` fresh sequences of length ``seq_len``.

    The evaluation data come from their own generator (``seed``), never from the training one.

    Returns:
        ``{"token_accuracy": …, "sequence_accuracy": …, "loss": …}``: the fraction of scored tokens
        predicted right, the fraction of sequences with every scored token right (exact match),
        and the mean per-token cross-entropy (nats).
    """
    check_int("num_samples", num_samples, minimum=1)
    generator = torch.Generator().manual_seed(seed)
    call = forward or (lambda m, tokens: m(tokens))
    was_training = model.training
    model.eval()
    correct = scored = exact = total = 0
    loss_sum = 0.0
    remaining = num_samples
    while remaining > 0:
        n = min(batch_size, remaining)
        tokens, targets = task.sample(n, seq_len, generator=generator)
        logits = call(model, tokens)
        keep = targets != IGNORE
        hit = (logits.argmax(-1) == targets) & keep
        correct += int(hit.sum())
        scored += int(keep.sum())
        exact += int((hit | ~keep).all(dim=1).sum())
        loss_sum += per_token_loss(logits, targets).item() * int(keep.sum())
        total += n
        remaining -= n
    model.train(was_training)
    return {
        "token_accuracy": correct / max(scored, 1),
        "sequence_accuracy": exact / total,
        "loss": loss_sum / max(scored, 1),
    }
