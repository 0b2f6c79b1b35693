"""What each position method costs inside one causal attention layer (a benchmark, not a test).

    python benchmarks/bench_methods.py [--lengths 512 1024 2048 4096 8192] [--heads 4]
        [--head-dim 64] [--cap-gb 2.5] [--out data/results/bench_methods.json]

For every method, the forward and backward pass of one causal self-attention over float32
``(1, heads, L, head_dim)`` queries, keys and values, written the way a production stack would
run it on PyTorch's fused ``torch.nn.functional.scaled_dot_product_attention`` (SDPA):

* ``sdpa``: plain causal SDPA (``is_causal=True``). This *is* the attention layer of ``none``,
  ``sinusoidal`` and ``learned``: input-added methods change the input, not the attention.
* ``rope``: queries and keys rotated by :func:`posviz.apply_rope` (angles computed on every
  call), then the same causal SDPA.
* ``alibi``: the fixed ALiBi bias (:func:`posviz.alibi_bias`) plus ``-inf`` above the diagonal,
  passed to SDPA as an additive float mask of shape ``(heads, L, L)``.
* ``t5``: the bias looked up from a learned ``(buckets, heads)`` table
  (:class:`posviz.t5.T5RelativePositionBias`, causal buckets), the same kind of float mask;
  the table needs a gradient, so the mask's gradient is materialised too.
* ``shaw``: Shaw et al.'s vectors per clipped distance cannot be written as a bias added to the
  logits (the key term is ``q_i · a_ij``, the value term adds vectors to the output), so SDPA
  cannot run it: :func:`posviz.relative_attention` (its memory-saving ``"efficient"`` path,
  which still holds ``(L, L)`` weights; the ``"naive"`` path would hold ``(L, L, head_dim)``).

Each point runs in a fresh subprocess with one thread, after one warm-up pass. Time is the thread's CPU time
(``time.thread_time``), median over the repeats, which a busy shared machine disturbs far less
than wall time (wall time is stored too). Peak memory is the growth of the process's peak
resident set (``ru_maxrss``) over its size just before the first pass, so it counts every
buffer the pass allocates, inputs excluded. A point whose *estimated* peak exceeds ``--cap-gb``
is not run and is stored with the reason. Ratios are to ``sdpa`` at the same length, measured in
the same run. Results (with configuration, versions, date) go to ``--out`` as JSON; notebook 06
reads them. Sources: Press et al. 2022 (ALiBi), https://arxiv.org/abs/2108.12409 ; Raffel et al.
2020 §2.1 (T5 bias); Shaw et al. 2018 eq. 3–5; Su et al. 2021 (RoPE).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

METHODS = ("sdpa", "rope", "alibi", "t5", "shaw")


CAP_GB = 2.5


def estimated_peak_gb(method: str, length: int, heads: int) -> float:
    """A rough estimate of one pass's peak memory (GB), used only to skip points.

    The factors (how many float32 ``(heads, L, L)`` buffers are alive at the peak) are the ones
    measured by this script at L = 1024…4096: about 4 for ``alibi`` and ``t5``, 5 for ``shaw``.
    """
    square = heads * length * length * 4 / 1e9  # one float32 (heads, L, L) buffer
    return {"sdpa": 0.05, "rope": 0.05, "alibi": 4.0 * square, "t5": 4.0 * square, "shaw": 5.0 * square}[method] + 0.05


def _layer(method: str, length: int, heads: int, head_dim: int):
    """``step()`` running one forward and backward pass of ``method``."""
    import posviz
    from posviz.t5 import T5RelativePositionBias

    torch.manual_seed(0)
    q, k, v = (torch.randn(1, heads, length, head_dim, requires_grad=True) for _ in range(3))
    positions = torch.arange(length)
    above = torch.ones(length, length, dtype=torch.bool).triu(1)
    table = T5RelativePositionBias(heads, bidirectional=False) if method == "t5" else None
    rel = [torch.randn(33, head_dim, requires_grad=True) for _ in range(2)] if method == "shaw" else None
    slopes = posviz.alibi_slopes(heads).float()

    def step() -> None:
        if method == "sdpa":
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        elif method == "rope":
            out = F.scaled_dot_product_attention(posviz.apply_rope(q, positions), posviz.apply_rope(k, positions), v, is_causal=True)
        elif method == "alibi":
            bias = posviz.alibi_bias(slopes, positions, positions).masked_fill(above, float("-inf"))
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        elif method == "t5":
            bias = table(positions[None], positions[None]).masked_fill(above, float("-inf"))
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        else:
            out, _ = posviz.relative_attention(q, k, v, rel[0], rel[1], mask=~above)
        out.sum().backward()

    return step


def _rss_now_kb() -> int:
    with open("/proc/self/statm") as f:  # Linux; elsewhere fall back to the peak
        return int(f.read().split()[1]) * resource.getpagesize() // 1024


def worker(method: str, length: int, heads: int, head_dim: int, repeats: int) -> dict:
    """Run one point in this process (called in a subprocess by :func:`main`)."""
    estimate = estimated_peak_gb(method, length, heads)
    if estimate > CAP_GB:
        return {"estimated_peak_gb": round(estimate, 3), "skipped": f"estimated peak {estimate:.1f} GB exceeds the {CAP_GB:g} GB cap"}
    torch.set_num_threads(1)
    step = _layer(method, length, heads, head_dim)
    step()  # warm-up: one-time library set-up; its buffers go back to the OS (see main's env)
    try:
        before = _rss_now_kb()
    except OSError:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cpu, wall = [], []
    for _ in range(repeats):
        t0, w0 = time.thread_time(), time.perf_counter()
        step()
        cpu.append(time.thread_time() - t0)
        wall.append(time.perf_counter() - w0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kB on Linux
    return {
        "cpu_seconds": statistics.median(cpu),
        "wall_seconds": statistics.median(wall),
        "repeats": repeats,
        "peak_mb": max(peak - before, 0) / 1024,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[512, 1024, 2048, 4096, 8192])
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--cap-gb", type=float, default=CAP_GB, help="skip points whose estimated peak exceeds this")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--out", type=Path, default=None, help="JSON output (default: print only)")
    parser.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        method, length, heads, head_dim, repeats = args.worker
        print(json.dumps(worker(method, int(length), int(heads), int(head_dim), int(repeats))))
        return 0
    start = time.perf_counter()
    points = []
    for length in args.lengths:
        repeats = 3 if length <= 2048 else 2 if length <= 4096 else 1
        for method in args.methods:
            estimate = estimated_peak_gb(method, length, args.heads)
            point = {"method": method, "length": length, "estimated_peak_gb": round(estimate, 3)}
            if estimate > args.cap_gb:
                point["skipped"] = f"estimated peak {estimate:.1f} GB exceeds the {args.cap_gb:g} GB cap"
            else:
                cmd = [sys.executable, __file__, "--worker", method, str(length), str(args.heads), str(args.head_dim), str(repeats)]
                # (the worker also refuses points over CAP_GB, in case the parent was given a larger cap)
                # A fixed mmap threshold makes glibc return every large buffer to the OS when it is
                # freed, so the resident size before a pass does not hide reused memory.
                env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072"}
                done = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
                point.update(json.loads(done.stdout.strip().splitlines()[-1]))
            points.append(point)
            shown = point.get("skipped") or f"{point['cpu_seconds'] * 1000:9.1f} ms cpu, {point['peak_mb']:8.1f} MB"
            print(f"L={length:5d} {method:6s} {shown}", flush=True)
    reference = {p["length"]: p for p in points if p["method"] == "sdpa" and "cpu_seconds" in p}
    for p in points:
        ref = reference.get(p["length"])
        if ref and "cpu_seconds" in p:
            p["time_ratio_to_sdpa"] = p["cpu_seconds"] / ref["cpu_seconds"]
            p["memory_ratio_to_sdpa"] = p["peak_mb"] / max(ref["peak_mb"], 1e-9)
    print("\nratios to plain causal SDPA (CPU time, peak memory):")
    for p in points:
        if "time_ratio_to_sdpa" in p:
            print(f"L={p['length']:5d} {p['method']:6s} time x{p['time_ratio_to_sdpa']:5.2f}  memory x{p['memory_ratio_to_sdpa']:7.1f}")
    if args.out:
        import numpy as np

        import posviz

        payload = {
            "benchmark": "bench_methods",
            "config": {"lengths": args.lengths, "heads": args.heads, "head_dim": args.head_dim, "batch": 1,
                       "dtype": "float32", "threads": 1, "cap_gb": args.cap_gb, "causal": True,
                       "time": "thread CPU time, median over repeats (3 up to L=2048, 2 at 4096, 1 above)",
                       "memory": "growth of peak RSS over the RSS before the first pass, inputs excluded"},
            "versions": {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__,
                         "posviz": posviz.__version__},
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "platform": platform.platform(),
            "seconds": time.perf_counter() - start,
            "points": points,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
