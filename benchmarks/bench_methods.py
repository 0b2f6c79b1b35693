"""What each position method costs inside one causal attention layer (a benchmark, not a test).

    python benchmarks/bench_methods.py [--lengths 512 1024 2048 4096 8192] [--heads 4]
        [--head-dim 64] [--cap-gb 2.5] [--out data/results/bench_methods.json]

For every method, the forward and backward pass of one causal self-attention over float32
``(1, heads, L, head_dim)`` queries, keys and values, run through PyTorch's
``torch.nn.functional.scaled_dot_product_attention`` (SDPA) wherever the method can be written
for it. Which kernel SDPA picks depends on its inputs, so every point records it
(``"sdpa_backend"``: the name of ``torch._fused_sdp_choice``'s answer for exactly the
arguments of that point, e.g. ``"FLASH_ATTENTION"`` or ``"MATH"``; ``null`` where SDPA is not
used). On the CPU the fused kernel (``FLASH_ATTENTION``) takes no mask, or a 2-D or 4-D mask
(boolean or float) that does not require a gradient; a 3-D mask, or one that requires a
gradient, falls back to ``MATH``, which stores the ``(heads, L, L)`` logits and weights.

* ``sdpa``: plain causal SDPA (``is_causal=True``). This *is* the attention layer of ``none``,
  ``sinusoidal`` and ``learned``: input-added methods change the input, not the attention.
* ``rope``: queries and keys rotated by :func:`posviz.apply_rope` (angles computed on every
  call), then the same causal SDPA.
* ``alibi``: the fixed ALiBi bias (:func:`posviz.alibi_bias`) plus ``-inf`` above the diagonal,
  passed to SDPA as an additive float mask of shape ``(1, heads, L, L)``.
* ``t5``: the bias looked up from a learned ``(buckets, heads)`` table
  (:class:`posviz.t5.T5RelativePositionBias`, causal buckets), the same kind of 4-D float
  mask. The table is trained, so the mask requires a gradient, which the CPU fused kernel does
  not compute: SDPA falls back to ``MATH``.
* ``t5-detached``: the same mask computed without a gradient (as if the table were frozen), so
  the fused kernel runs it. ``t5`` minus ``t5-detached`` is the price of the bias's gradient
  *and* of the fallback it causes on the CPU.
* ``shaw``: Shaw et al.'s key term ``q_i · a^K_ij`` would be a query-dependent
  ``(batch, heads, L, L)`` bias, and the value term ``Σ_j α_ij a^V_ij`` needs the attention
  weights themselves, so SDPA cannot run it: :func:`posviz.relative_attention` (its
  memory-saving ``"efficient"`` path, which still holds ``(L, L)`` weights; the ``"naive"`` path
  would hold ``(L, L, head_dim)``).

On CUDA (not measured here) the picture differs: FlashAttention takes no mask at all, and the
memory-efficient kernel takes an additive float mask and computes its gradient inside the
kernel, so ``alibi`` and ``t5`` stay fused and their extra memory is the ``(heads, L, L)`` bias
(and, for ``t5``, its gradient). The CPU ratios do not carry over.

Each point runs in a fresh subprocess with one thread, after one warm-up pass. Time is the thread's CPU time
(``time.thread_time``), median over the repeats, which a busy shared machine disturbs less
than wall time (wall time is stored too; the spread over the repeats is not). Peak memory is the growth of the process's peak
resident set (``ru_maxrss``) over its size just before the first pass, so it counts every
buffer the pass allocates, inputs excluded; ``peak_mb`` is in MiB (``ru_maxrss`` KiB / 1024),
while the estimate and ``--cap-gb`` are in GB of 10⁹ bytes. A point whose *estimated* peak
exceeds ``--cap-gb`` is not run and is stored with the reason. Ratios are to ``sdpa`` at the
same length, measured in the same run. Results (with configuration and :func:`posviz.results.provenance`: versions,
date, platform, load average) go to ``--out`` as JSON; notebook 06 reads them. Sources: Press
et al. 2022 (ALiBi), https://arxiv.org/abs/2108.12409 ; Raffel et al. 2020 §2.1 (T5 bias),
https://arxiv.org/abs/1910.10683 ; Shaw et al. 2018 eq. 3–5, https://arxiv.org/abs/1803.02155 ;
Su et al. 2021 (RoPE), https://arxiv.org/abs/2104.09864 .
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

METHODS = ("sdpa", "rope", "alibi", "t5", "t5-detached", "shaw")


CAP_GB = 2.5


def estimated_peak_gb(method: str, length: int, heads: int) -> float:
    """A rough estimate of one pass's peak memory (GB), used only to skip points.

    The factors (how many float32 ``(heads, L, L)`` buffers are alive at the peak) are the ones
    measured by this script at L = 1024…4096: about 2 for ``alibi`` (fused kernel: the bias and
    its masked copy, made by the out-of-place ``masked_fill``; an in-place mask would need one),
    3.2 for ``t5-detached`` (the bucket indices too), 4.5 for ``t5`` (math kernel: logits, weights
    and the bias's gradient too), 5 for ``shaw``.
    """
    square = heads * length * length * 4 / 1e9  # one float32 (heads, L, L) buffer
    factor = {"sdpa": 0.0, "rope": 0.0, "alibi": 2.0, "t5-detached": 3.2, "t5": 4.5, "shaw": 5.0}[method]
    return factor * square + (0.1 if factor == 0 else 0.05)


def _layer(method: str, length: int, heads: int, head_dim: int):
    """``(step, backend)``: ``step()`` runs one forward and backward pass of ``method``;
    ``backend`` is the name of the SDPA kernel chosen for its inputs (``None`` without SDPA)."""
    import posviz
    from posviz.t5 import T5RelativePositionBias

    torch.manual_seed(0)
    q, k, v = (torch.randn(1, heads, length, head_dim, requires_grad=True) for _ in range(3))
    positions = torch.arange(length)
    above = torch.ones(length, length, dtype=torch.bool).triu(1)
    table = T5RelativePositionBias(heads, bidirectional=False) if method.startswith("t5") else None
    rel = [torch.randn(33, head_dim, requires_grad=True) for _ in range(2)] if method == "shaw" else None
    slopes = posviz.alibi_slopes(heads).float()

    def sdpa_args() -> tuple[tuple, dict]:
        """The arguments SDPA receives (built inside the pass, so the bias is part of its cost)."""
        if method == "sdpa":
            return (q, k, v), {"is_causal": True}
        if method == "rope":
            return (posviz.apply_rope(q, positions), posviz.apply_rope(k, positions), v), {"is_causal": True}
        if method == "alibi":
            bias = posviz.alibi_bias(slopes, positions, positions)[None]  # (heads, L, L) -> (1, heads, L, L)
        elif method == "t5":  # T5RelativePositionBias returns (1, heads, L, L)
            bias = table(positions[None], positions[None])
        else:  # t5-detached: the same bias, no gradient to the table
            with torch.no_grad():
                bias = table(positions[None], positions[None])
        # 4-D (1, heads, L, L): the CPU fused kernel takes 2-D or 4-D masks only (a 3-D one falls back to MATH)
        return (q, k, v), {"attn_mask": bias.masked_fill(above, float("-inf"))}

    def step() -> None:
        if method == "shaw":
            out, _ = posviz.relative_attention(q, k, v, rel[0], rel[1], mask=~above)
        else:
            tensors, kwargs = sdpa_args()
            out = F.scaled_dot_product_attention(*tensors, **kwargs)
        out.sum().backward()

    backend = None
    if method != "shaw":
        from torch.nn.attention import SDPBackend

        tensors, kwargs = sdpa_args()
        choice = torch._fused_sdp_choice(*tensors, attn_mask=kwargs.get("attn_mask"), is_causal=kwargs.get("is_causal", False))
        backend = SDPBackend(choice).name
    return step, backend


def _rss_now_kb() -> int:
    with open("/proc/self/statm") as f:  # Linux; elsewhere fall back to the peak
        return int(f.read().split()[1]) * resource.getpagesize() // 1024


def worker(method: str, length: int, heads: int, head_dim: int, repeats: int) -> dict:
    """Run one point in this process (called in a subprocess by :func:`main`)."""
    estimate = estimated_peak_gb(method, length, heads)
    if estimate > CAP_GB:
        return {"estimated_peak_gb": round(estimate, 3), "skipped": f"estimated peak {estimate:.1f} GB exceeds the {CAP_GB:g} GB cap"}
    torch.set_num_threads(1)
    step, backend = _layer(method, length, heads, head_dim)
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
        "sdpa_backend": backend,
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
    torch.set_num_threads(1)  # as in every worker (and so the provenance says so)
    start = time.perf_counter()
    load_before = round(os.getloadavg()[0], 2)  # a busy machine disturbs the times: recorded with them
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
            shown = point.get("skipped") or f"{point['cpu_seconds'] * 1000:9.1f} ms cpu, {point['peak_mb']:8.1f} MB, {point['sdpa_backend']}"
            print(f"L={length:5d} {method:11s} {shown}", flush=True)
    reference = {p["length"]: p for p in points if p["method"] == "sdpa" and "cpu_seconds" in p}
    for p in points:
        ref = reference.get(p["length"])
        if ref and "cpu_seconds" in p:
            p["time_ratio_to_sdpa"] = p["cpu_seconds"] / ref["cpu_seconds"]
            p["memory_ratio_to_sdpa"] = p["peak_mb"] / max(ref["peak_mb"], 1e-9)
    print("\nratios to plain causal SDPA (CPU time, peak memory):")
    for p in points:
        if "time_ratio_to_sdpa" in p:
            print(f"L={p['length']:5d} {p['method']:11s} time x{p['time_ratio_to_sdpa']:5.2f}  memory x{p['memory_ratio_to_sdpa']:7.1f}")
    if args.out:
        from posviz.results import provenance

        payload = {
            "benchmark": "bench_methods",
            "config": {"lengths": args.lengths, "heads": args.heads, "head_dim": args.head_dim, "batch": 1,
                       "dtype": "float32", "threads": 1, "cap_gb": args.cap_gb, "causal": True,
                       "time": "thread CPU time, median over repeats (3 up to L=2048, 2 at 4096, 1 above)",
                       "memory": "growth of peak RSS over the RSS before the first pass, inputs excluded",
                       "sdpa_backend": "torch._fused_sdp_choice for the point's SDPA arguments (null: SDPA not used)",
                       "load_average_1min": {"before": load_before, "after": round(os.getloadavg()[0], 2)}},
            **provenance(start),  # wall time of the whole run; the points carry their own CPU times
            "points": points,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
