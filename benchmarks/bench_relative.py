"""Time and peak memory of Shaw relative attention (naive, efficient) against plain attention.

Shaw, Uszkoreit & Vaswani 2018, §3.3 (https://arxiv.org/abs/1803.02155): gathering the
``(L, L, d)`` tensors ``a^K``, ``a^V`` costs memory ``L·L·d``; splitting the logits (eq. 5) avoids it.

Usage (from the repository root)::

    python benchmarks/bench_relative.py                      # L = 128 … 2048, head_dim 64
    python benchmarks/bench_relative.py --lengths 64 128 256 --repeats 3
    python benchmarks/bench_relative.py --lang ko            # headings in Korean ("en", "ko" or "both")

What is measured, for one forward pass without autograd, on the CPU, batch 1, one head,
float32, clipping distance k = 16 (change with the options):

* ``naive``      ``posviz.relative_attention(..., implementation="naive")``
* ``efficient``  ``posviz.relative_attention(..., implementation="efficient")``
* ``sdpa``       ``torch.nn.functional.scaled_dot_product_attention`` with its default kernel
  (on a CPU a fused flash-attention kernel that never stores the ``L × L`` weights)
* ``sdpa-math``  the same function forced onto its unfused "math" kernel, which, like the two
  relative implementations, stores the ``L × L`` logits and weights

Time: the median of ``--repeats`` calls after one warm-up call (``time.perf_counter``), with
``--threads`` torch threads (default 1, so that numbers mean something on a shared machine).

Peak memory: the PyTorch profiler (``torch.profiler.profile(profile_memory=True)``) records every
allocation and free of the CPU allocator during one call; the peak is the largest running sum of
those events, i.e. the most memory the call held at once *beyond its inputs* (the output
included). It is exact and repeatable (no sampling, no RSS noise), and it sees the fused kernel's
internal buffers too. (``tracemalloc`` cannot: PyTorch does not allocate through Python.)

The script prints two tables and the ratios to ``sdpa``; timings vary from machine to machine
and run to run, memory does not.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from posviz import median_seconds, set_language, t  # noqa: E402
from posviz.relative import relative_attention  # noqa: E402

MIB = 2**20


def peak_bytes(fn) -> int:
    """Largest number of bytes held at once by allocations made during ``fn()`` (CPU allocator)."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_ns())
    held = peak = 0
    for event in events:
        held += event.nbytes()
        peak = max(peak, held)
    return peak


def candidates(q, k, v, rel_keys, rel_values):
    def sdpa_math():
        with sdpa_kernel(SDPBackend.MATH):
            return F.scaled_dot_product_attention(q, k, v)

    return {
        "naive": lambda: relative_attention(q, k, v, rel_keys, rel_values, implementation="naive"),
        "efficient": lambda: relative_attention(q, k, v, rel_keys, rel_values, implementation="efficient"),
        "sdpa": lambda: F.scaled_dot_product_attention(q, k, v),
        "sdpa-math": sdpa_math,
    }


def run(lengths, head_dim: int, max_relative_position: int, repeats: int, naive_max_len: int) -> list[dict]:
    rows = []
    generator = torch.Generator().manual_seed(0)
    for seq_len in lengths:
        q, k, v = (torch.randn(1, 1, seq_len, head_dim, generator=generator) for _ in range(3))
        rel_keys, rel_values = (
            torch.randn(2 * max_relative_position + 1, head_dim, generator=generator) for _ in range(2)
        )
        row = {"L": seq_len}
        with torch.no_grad():
            for name, fn in candidates(q, k, v, rel_keys, rel_values).items():
                if name == "naive" and seq_len > naive_max_len:
                    row[name] = (float("nan"), float("nan"))
                    continue
                row[name] = (median_seconds(fn, repeats=repeats), peak_bytes(fn))
        rows.append(row)
    return rows


def print_tables(rows, head_dim: int) -> None:
    names = ("naive", "efficient", "sdpa", "sdpa-math")
    print(t("호출 한 번의 시간(ms, 중앙값)과 sdpa·sdpa-math에 대한 비", "time per call (ms, median) and ratios to sdpa and sdpa-math"))
    print(f"{'L':>6} " + " ".join(f"{n:>10}" for n in names) + f" {'naive/sdpa':>11} {'eff/sdpa':>9} {'eff/math':>9}")
    for row in rows:
        ms = {n: row[n][0] * 1e3 for n in names}
        print(
            f"{row['L']:>6} "
            + " ".join(f"{ms[n]:>10.3f}" for n in names)
            + f" {ms['naive'] / ms['sdpa']:>10.1f}× {ms['efficient'] / ms['sdpa']:>8.1f}× {ms['efficient'] / ms['sdpa-math']:>8.1f}×"
        )
    print()
    print(t("입력을 뺀 최대 메모리(MiB)와 sdpa·sdpa-math에 대한 비; L·L·d·4 B = 표에서 꺼내 만든 (L, L, d) float32 텐서 하나",
            "peak memory beyond the inputs (MiB) and ratios to sdpa and sdpa-math; L·L·d·4 B = one gathered (L, L, d) float32 tensor",
            sep="\n"))
    print(
        f"{'L':>6} {'L·L·d·4':>9} "
        + " ".join(f"{n:>10}" for n in names)
        + f" {'naive/sdpa':>11} {'eff/sdpa':>9} {'eff/math':>9}"
    )
    for row in rows:
        mib = {n: row[n][1] / MIB for n in names}
        formula = row["L"] ** 2 * head_dim * 4 / MIB
        print(
            f"{row['L']:>6} {formula:>9.1f} "
            + " ".join(f"{mib[n]:>10.2f}" for n in names)
            + f" {mib['naive'] / mib['sdpa']:>10.0f}× {mib['efficient'] / mib['sdpa']:>8.1f}× {mib['efficient'] / mib['sdpa-math']:>8.2f}×"
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[128, 256, 512, 1024, 2048])
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--k", type=int, default=16, help="clipping distance (table of 2k + 1 rows)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--naive-max-len", type=int, default=2048, help="skip the naive version above this length")
    parser.add_argument("--lang", choices=("en", "ko", "both"), default="en", help="language of the printed headings")
    args = parser.parse_args(argv)
    set_language(args.lang)
    torch.set_num_threads(args.threads)
    threads = torch.get_num_threads()
    print(
        t(
            f"torch {torch.__version__}, 스레드 {threads}개, 배치 크기 1, 헤드 1개, "
            f"head_dim {args.head_dim}, k {args.k}, float32, 순전파만",
            f"torch {torch.__version__}, {threads} thread(s), batch size 1, 1 head, "
            f"head_dim {args.head_dim}, k {args.k}, float32, forward only",
            sep="\n",
        )
    )
    rows = run(args.lengths, args.head_dim, args.k, args.repeats, args.naive_max_len)
    print_tables(rows, args.head_dim)


if __name__ == "__main__":
    main()
