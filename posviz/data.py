"""Find and load the course's data files (``data/`` at the repository root).

The folder is looked up, in order, at ``$POSVIZ_DATA``, next to the installed package (a
clone or an editable install, including the Colab set-up cell, which clones the
repository), and in the current directory or its parents. Nothing is downloaded.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

import numpy as np

__all__ = ["MINILM_FILE", "data_dir", "load_minilm_position_embeddings", "load_sentences", "tokenize"]

MINILM_FILE = "minilm_position_embeddings.npy"
_MARKER = "sentences.json"


def data_dir() -> Path:
    """Return the course's ``data/`` folder.

    Raises:
        FileNotFoundError: naming every place searched, if no folder holds ``sentences.json``.
    """
    candidates: list[Path] = []
    if os.environ.get("POSVIZ_DATA"):
        candidates.append(Path(os.environ["POSVIZ_DATA"]))
    candidates.append(Path(__file__).resolve().parent.parent / "data")
    here = Path.cwd().resolve()
    candidates += [p / "data" for p in (here, *here.parents)]
    for path in candidates:
        if (path / _MARKER).is_file():
            return path
    searched = "\n  ".join(str(p) for p in dict.fromkeys(candidates))
    raise FileNotFoundError(
        "the course data folder was not found. Run the notebook from a clone of the repository, "
        f"or set POSVIZ_DATA to its data/ folder. Searched:\n  {searched}"
    )


@lru_cache(maxsize=1)
def _sentences() -> dict:
    with open(data_dir() / _MARKER, encoding="utf-8") as f:
        return json.load(f)


def load_sentences(kind: str | None = None) -> dict | list:
    """Load the bilingual example sentences from ``data/sentences.json``.

    Args:
        kind: ``None`` for the whole dict, or one of its keys: ``"order_pairs"`` (pairs whose
            meaning changes with word order), ``"free_order"`` (Korean pairs whose meaning does
            not), ``"focus_order"`` (Korean pairs whose roles stay but whose focus moves),
            ``"repeated_word"`` (one word twice with two meanings), ``"short"`` (for
            per-token figures).

    Returns:
        A fresh copy (safe to modify) of the dict or of the list under ``kind``.

    Raises:
        ValueError: for an unknown ``kind``.
    """
    data = _sentences()
    if kind is None:
        return json.loads(json.dumps(data))
    keys = tuple(k for k in data if not k.startswith("_"))
    if kind not in keys:
        raise ValueError(f"kind must be one of {keys}, got {kind!r}")
    return json.loads(json.dumps(data[kind]))


def tokenize(sentence: str) -> list[str]:
    """Whitespace tokenisation, as in the course's examples: ``"the cat sat" -> ["the", "cat", "sat"]``.

    Raises:
        TypeError: if ``sentence`` is not a ``str``.
    """
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a str, got {type(sentence).__name__}")
    return sentence.split()


def load_minilm_position_embeddings() -> np.ndarray:
    """The learned position-embedding table of ``sentence-transformers/all-MiniLM-L6-v2``.

    Rows are positions 0 … 511, columns the 384 hidden dimensions (BERT-style, added to the
    token embeddings). Extracted by ``scripts/extract_minilm_positions.py``; provenance, licence
    (Apache-2.0) and checksum in ``data/README.md``.

    Returns:
        ``np.ndarray`` of shape ``(512, 384)``, dtype float32.
    """
    return np.load(data_dir() / MINILM_FILE, allow_pickle=False)
