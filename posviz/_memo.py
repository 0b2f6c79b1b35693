"""Reuse a training run across the editions of one notebook (for the course's tests, not for learners).

The tests execute every notebook three times: the bilingual, the Korean and the English edition.
The editions differ only in the language of their text, so they train the same models from the
same weights on the same batches. Two environment variables, each naming a folder, let the later
executions load those runs instead of repeating them:

- ``POSVIZ_MEMO_RECORD``: every call of a memoised function runs as usual and what it did is
  stored (the bilingual execution: its outputs, timings included, are genuine);
- ``POSVIZ_MEMO``: a call whose key is stored is loaded instead of run, others run and are stored
  (the one-language executions: their printed numbers equal the first run's, but a timing they
  print is not the time this execution took, so ``tools/website.py`` never publishes them).

What is stored for a call of :func:`posviz.train` (or another function marked :func:`memoized`):
the trained state of its ``nn.Module`` arguments (parameters, buffers, gradients, train/eval flags),
the returned value, and the states of the global random number generators after the call.

The key is a SHA-256 over everything the call depends on: the source of ``posviz``, the versions
of torch and numpy, torch's thread count, the states of the global generators, and every argument
(a tensor by dtype, shape and bytes; a model by class, ``repr``, attributes and state; an object or
function of ``posviz`` by its name and fields or closure). An argument it cannot describe exactly (a
function written in a notebook, an object of another library) means no memo: the call just runs.
Nothing is stored when the call changed an argument other than the models, or printed anything.
Without either variable (a learner's Jupyter, Colab, ``course.py run`` and ``site``) every call runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import io
import os
import random
import shutil
import sys
import types
from pathlib import Path

import numpy as np
import torch
from torch import nn

MEMO_ENV = "POSVIZ_MEMO"  # replay and record
RECORD_ENV = "POSVIZ_MEMO_RECORD"  # record only
_PACKAGE = Path(__file__).resolve().parent


class _Undescribable(Exception):
    """An argument whose exact content cannot be fingerprinted: the call is not memoised."""


@functools.lru_cache(maxsize=1)
def _source_digest() -> bytes:
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.digest()


def _is_posviz(obj: object) -> bool:
    module = getattr(obj, "__module__", "") or ""
    return module == "posviz" or module.startswith("posviz.")


def _tensor_bytes(tensor: torch.Tensor) -> bytes:
    flat = tensor.detach().cpu().contiguous().reshape(-1)
    return flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""


def _feed(digest, obj: object, seen: set[int]) -> None:
    """Feed an exact description of ``obj`` into ``digest`` or raise :class:`_Undescribable`."""
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
        digest.update(f"{type(obj).__name__}:{obj!r};".encode())
        return
    if id(obj) in seen:
        raise _Undescribable("a cycle")
    seen = seen | {id(obj)}
    name = f"{type(obj).__module__}.{type(obj).__qualname__}"
    digest.update(f"<{name}>".encode())
    if isinstance(obj, (tuple, list)):
        digest.update(f"[{len(obj)}]".encode())
        for item in obj:
            _feed(digest, item, seen)
    elif isinstance(obj, dict):
        digest.update(f"{{{len(obj)}}}".encode())
        for key in sorted(obj, key=repr):
            _feed(digest, key, seen)
            _feed(digest, obj[key], seen)
    elif isinstance(obj, torch.Tensor):
        digest.update(f"{obj.dtype}{tuple(obj.shape)}{obj.requires_grad}".encode() + _tensor_bytes(obj))
    elif isinstance(obj, np.ndarray):
        if obj.dtype == object:
            raise _Undescribable("an object array")
        digest.update(f"{obj.dtype}{obj.shape}".encode() + np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, np.generic):
        digest.update(repr(obj.item()).encode())
    elif isinstance(obj, torch.Generator):
        digest.update(_tensor_bytes(obj.get_state()))
    elif isinstance(obj, nn.Module):
        digest.update(repr(obj).encode() + bytes(m.training for m in obj.modules()))
        # plain attributes (a RoPE base, a layout name) can change the forward pass without a tensor
        _feed(digest, [{k: v for k, v in vars(m).items() if not k.startswith("_")} for m in obj.modules()], seen)
        for key, tensor in _tensors(obj):
            _feed(digest, key, seen)
            _feed(digest, tensor, seen)
    elif isinstance(obj, types.FunctionType) and _is_posviz(obj):
        # the code itself is in the source digest; what a closure captured is not
        digest.update(obj.__qualname__.encode())
        _feed(digest, obj.__defaults__, seen)
        _feed(digest, obj.__kwdefaults__, seen)
        _feed(digest, [cell.cell_contents for cell in obj.__closure__ or ()], seen)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type) and _is_posviz(type(obj)):
        _feed(digest, {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}, seen)
    elif _is_posviz(type(obj)) and hasattr(obj, "__dict__") and not isinstance(obj, type):
        _feed(digest, vars(obj), seen)
    else:
        raise _Undescribable(name)


def _random_states() -> tuple:
    return torch.get_rng_state(), np.random.get_state(), random.getstate()


def _set_random_states(states: tuple) -> None:
    torch.set_rng_state(states[0])
    np.random.set_state(states[1])
    random.setstate(states[2])


def _fingerprint(*parts: object) -> str:
    digest = hashlib.sha256(_source_digest())
    digest.update(f"{torch.__version__}|{np.__version__}|{torch.get_num_threads()}".encode())
    _feed(digest, parts, set())
    return digest.hexdigest()


def _tensors(module: nn.Module) -> list[tuple[str, torch.Tensor]]:
    return [*module.named_parameters(), *module.named_buffers()]


def _module_state(module: nn.Module) -> dict:
    return {
        "tensors": {k: v.detach().clone() for k, v in _tensors(module)},
        "grads": {k: None if p.grad is None else p.grad.detach().clone() for k, p in module.named_parameters()},
        "training": [m.training for m in module.modules()],
    }


@torch.no_grad()
def _restore_module(module: nn.Module, state: dict) -> None:
    tensors = dict(_tensors(module))
    for key, value in state["tensors"].items():
        tensors[key].copy_(value)
    for key, parameter in module.named_parameters():
        grad = state["grads"][key]
        parameter.grad = None if grad is None else grad.clone()
    for m, flag in zip(module.modules(), state["training"]):
        m.training = flag


def _others_fingerprint(args: tuple, kwargs: dict) -> str:
    """The fingerprint of the arguments that are not models (a call must leave them as they were)."""
    return _fingerprint(
        [a for a in args if not isinstance(a, nn.Module)],
        {k: v for k, v in kwargs.items() if not isinstance(v, nn.Module)},
    )


def _folder(root: Path) -> Path:
    """``root/<digest of posviz's source>``, made on first use; the folders of older sources go."""
    folder = root / _source_digest().hex()[:16]
    if not folder.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        for old in root.iterdir():
            if old.is_dir() and old != folder:
                shutil.rmtree(old, ignore_errors=True)
    return folder


def memoized(function):
    """Decorate a deterministic function that may train the ``nn.Module`` arguments it is given
    in place: with ``POSVIZ_MEMO`` set, a call identical to a recorded one loads what it did."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        replay = bool(os.environ.get(MEMO_ENV))
        folder = os.environ.get(MEMO_ENV) or os.environ.get(RECORD_ENV)
        if not folder:
            return function(*args, **kwargs)
        try:
            key = _fingerprint(function.__qualname__, args, kwargs, _random_states())
            others = _others_fingerprint(args, kwargs)
        except _Undescribable:
            return function(*args, **kwargs)
        modules = [a for a in [*args, *kwargs.values()] if isinstance(a, nn.Module)]
        path = _folder(Path(folder)) / f"{function.__name__}-{key}.pt"
        if replay and path.exists():
            try:
                saved = torch.load(path, weights_only=False)
            except Exception:  # a file cut short by a killed run: train again and overwrite it
                saved = None
            if saved is not None:
                for module, state in zip(modules, saved["modules"]):
                    if state is not None:
                        _restore_module(module, state)
                _set_random_states(saved["random"])
                return saved["result"]
        before = [_fingerprint(m) for m in modules]
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            result = function(*args, **kwargs)
        if printed.getvalue():
            sys.stdout.write(printed.getvalue())  # shown as usual, and not memoised
            return result
        if _others_fingerprint(args, kwargs) == others:
            # a module the call left as it was (an evaluation) is not stored, only what training changed
            states = [None if _fingerprint(m) == b else _module_state(m) for m, b in zip(modules, before)]
            saved = {"modules": states, "random": _random_states(), "result": result}
            partial = path.with_name(f"{path.name}.{os.getpid()}.part")
            torch.save(saved, partial)
            os.replace(partial, path)  # whole or not at all, even with two writers
        return result

    return wrapper
