"""Speed of posviz.apply_rope against two textbook formulations (a benchmark, not a test).

    python benchmarks/bench_rope.py [--repeats 20] [--shape 1 32 4096 128] [--threads N]

Times, on float32 tensors of shape (batch, heads, seq_len, head_dim):

* ``x.clone()`` — one read and one write of the tensor: the memory-bandwidth floor;
* ``apply_rope`` (both layouts), angles computed on every call;
* ``RotaryEmbedding`` (cos/sin cached);
* a direct transcription of the rotate-half formula ``x·cos + rotate_half(x)·sin``
  (GPT-NeoX / Hugging Face style, cos/sin of width head_dim computed on every call);
* the complex-multiplication formulation (Meta's Llama style: pairs viewed as complex numbers
  times ``e^{imθ}``, with ``torch.polar`` computed on every call).

The cases are timed in rounds: each round calls every case once, in turn, so a change in the
machine's load or clock hits all of them alike. Prints the median wall time of each and the
median over rounds of its time divided by the ``clone`` of the same round (the ratio the
target, at most 1.3 × clone for both layouts, is about). Timings depend on the machine and its
load; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import posviz


def rotate_half_transcription(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    d = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    freqs = torch.outer(torch.arange(x.shape[-2], dtype=torch.float32), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    rotated = torch.cat((-x2, x1), dim=-1)
    return x * cos + rotated * sin


def complex_formulation(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    d = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    freqs = torch.outer(torch.arange(x.shape[-2], dtype=torch.float32), inv_freq)
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)
    z = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(z * freqs_cis).flatten(-2).type_as(x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--shape", type=int, nargs=4, default=(1, 32, 4096, 128))
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)

    torch.manual_seed(0)
    x = torch.randn(*args.shape, dtype=torch.float32)
    seq_len, head_dim = args.shape[2], args.shape[3]
    rotary_half = posviz.RotaryEmbedding(head_dim, seq_len, layout="half")
    rotary_inter = posviz.RotaryEmbedding(head_dim, seq_len, layout="interleaved")

    # the formulations agree before they are timed
    with torch.no_grad():
        ref_half = posviz.apply_rope(x, layout="half")
        ref_inter = posviz.apply_rope(x, layout="interleaved")
        torch.testing.assert_close(rotate_half_transcription(x), ref_half, atol=2e-3, rtol=0)  # float32 angles at position ~4000
        torch.testing.assert_close(complex_formulation(x), ref_inter, atol=2e-3, rtol=0)  # float32 angles at position ~4000
        torch.testing.assert_close(rotary_half(x), ref_half, atol=2e-3, rtol=0)  # float32 angles at position ~4000
        del ref_half, ref_inter

    cases = {
        "x.clone() (floor)": lambda: x.clone(),
        'apply_rope(layout="half")': lambda: posviz.apply_rope(x, layout="half"),
        'apply_rope(layout="interleaved")': lambda: posviz.apply_rope(x, layout="interleaved"),
        'RotaryEmbedding("half"), cached': lambda: rotary_half(x),
        'RotaryEmbedding("interleaved"), cached': lambda: rotary_inter(x),
        "rotate-half transcription": lambda: rotate_half_transcription(x),
        "complex multiplication": lambda: complex_formulation(x),
    }
    print(
        f"shape {tuple(args.shape)} float32, {x.numel() * 4 / 2**20:.0f} MiB, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, {args.repeats} rounds"
    )
    times = {name: [] for name in cases}
    with torch.inference_mode():
        for round_ in range(3 + args.repeats):  # three untimed rounds first
            for name, fn in cases.items():
                start = time.perf_counter()
                fn()
                if round_ >= 3:
                    times[name].append(time.perf_counter() - start)
    floor = times["x.clone() (floor)"]
    width = max(map(len, times))
    print(f"{'formulation':<{width}}  {'median ms':>10}  {'× clone':>8}  (median of the per-round ratios)")
    for name, seconds in times.items():
        ratio = statistics.median(s / f for s, f in zip(seconds, floor, strict=True))
        print(f"{name:<{width}}  {statistics.median(seconds) * 1e3:>10.2f}  {ratio:>8.2f}")


if __name__ == "__main__":
    main()
