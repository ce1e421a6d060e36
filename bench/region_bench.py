#!/usr/bin/env python3
"""Fused-region cards on the GPU (pointwise chains, and chains around a softmax or a norm): eager running the chain, the best kernel kforge found for the
region, and torch.compile of the same chain, on the same inputs, timed by one timer.

Each chain below is a small nn.Module traced to TorchScript, captured on the GPU (`kforge capture`:
its fused regions become region cards with a real sample and the chain's eager time; a chain of one op,
such as the few-long-rows norms and softmax, gives its single-op card instead), searched with
the built-in proposer (`kforge optimize --cards` those cards) and measured with
bench/card_bench.py's measure_card: do_bench of eager's chain (the member ops called one by one, as
eager runs them), of the best node's cubin and of torch.compile(max-autotune-no-cudagraphs) of the
chain, each also as GPU time alone (device_time_us), and the bandwidth each reaches for the bytes the
region must read and write against a measured device copy.

Usage: region_bench.py --kforge build/cli/kforge --out DIR [--iterations 12] [--chains gelu_tanh,...]
Writes DIR/region-bench.json and DIR/region-bench.md. Exit 0 when every chain was measured, 1 when a
chain failed (recorded), 2 without a GPU.
"""
import argparse
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import torch  # noqa: E402
from card_bench import copy_bandwidth_gbps, measure_card, one_line, run, run_each  # noqa: E402
from suite import environment  # noqa: E402


class GeluTanhWrittenOut(torch.nn.Module):
    """GELU with tanh written out as 8 elementwise ops (the issue's example)."""

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * torch.pow(x, 3.0))))


class SiluGate(torch.nn.Module):
    """SwiGLU's gate between its projections: silu(gate) * up."""

    def forward(self, gate, up):
        return torch.nn.functional.silu(gate) * up


class ScaleShiftRelu(torch.nn.Module):
    """A per-channel affine after a convolution, plus the residual and the activation."""

    def __init__(self, channels):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.randn(channels, 1, 1))
        self.shift = torch.nn.Parameter(torch.randn(channels, 1, 1))

    def forward(self, x, residual):
        return torch.relu(x * self.scale + self.shift + residual)


class ResidualAddCast(torch.nn.Module):
    """A bf16 residual stream: the update added in float32 and rounded back."""

    def forward(self, h, update):
        return (h.float() + update.float() * 0.5).to(torch.bfloat16)


class AttentionSoftmax(torch.nn.Module):
    """transformers' eager attention between its matmuls: scores * scale + causal mask -> softmax in
    float32 -> back to the scores' dtype."""

    def __init__(self, seq, dtype=torch.bfloat16):
        super().__init__()
        mask = torch.full((seq, seq), torch.finfo(dtype).min, dtype=dtype).triu(1)
        self.register_buffer("mask", mask[None, None])

    def forward(self, scores):
        p = torch.softmax(scores * 0.08838834764831845 + self.mask, dim=-1, dtype=torch.float32)
        return p.to(scores.dtype)


class RmsNormWrittenOut(torch.nn.Module):
    """Qwen's RMSNorm as transformers writes it: float32 statistics, the weight applied in the input dtype."""

    def __init__(self, hidden):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(hidden))

    def forward(self, x):
        h = x.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
        return self.weight * h.to(x.dtype)


class GroupNormSilu(torch.nn.Module):
    """A diffusion resnet block's norm and activation: group_norm(32 groups) -> silu."""

    def __init__(self, channels):
        super().__init__()
        self.norm = torch.nn.GroupNorm(32, channels, eps=1e-6)

    def forward(self, x):
        return torch.nn.functional.silu(self.norm(x))


class Softmax(torch.nn.Module):
    """A softmax alone over the last dim (a single-op card)."""

    def forward(self, x):
        return torch.softmax(x, dim=-1)


class ResidualAddLayerNorm(torch.nn.Module):
    """A pre-norm block's residual stream: h = x + update, then layer_norm(h); both are used on."""

    def __init__(self, hidden):
        super().__init__()
        self.norm = torch.nn.LayerNorm(hidden)

    def forward(self, x, update):
        h = x + update
        return h, self.norm(h)


class Rotary(torch.nn.Module):
    """transformers' rotary embedding on q, a transposed projection: q * cos + cat(-q2, q1) * sin, the
    halves slices of q (neg -> cat -> mul -> mul -> add, one region with the cat)."""

    def __init__(self, heads, dim):
        super().__init__()
        self.heads, self.dim = heads, dim

    def forward(self, projected, cos, sin):
        q = projected.view(projected.shape[0], projected.shape[1], self.heads, self.dim).transpose(1, 2)
        half = self.dim // 2
        return q * cos + torch.cat((-q[..., half:], q[..., :half]), dim=-1) * sin


class OneOp(torch.nn.Module):
    """One reduction or scan alone (a single-op card), as a model calls it: fn(x)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


# name -> (module factory, input specs for `kforge capture --inputs`, example tensors for the trace)
CHAINS = {
    "gelu_tanh": (GeluTanhWrittenOut, ["8192x8192:float32"]),
    "silu_gate": (SiluGate, ["8192x8192:bfloat16", "8192x8192:bfloat16"]),
    "scale_shift_relu": (lambda: ScaleShiftRelu(256), ["32x256x56x56:float16", "32x256x56x56:float16"]),
    "residual_add_cast": (ResidualAddCast, ["16x4096x4096:bfloat16", "16x4096x4096:bfloat16"]),
    "attention_softmax": (lambda: AttentionSoftmax(512), ["8x16x512x512:bfloat16"]),
    "rms_norm_written_out": (lambda: RmsNormWrittenOut(2048), ["4x1024x2048:bfloat16"]),
    "residual_add_layer_norm": (lambda: ResidualAddLayerNorm(1024), ["8192x1024:float16", "8192x1024:float16"]),
    "group_norm_silu": (lambda: GroupNormSilu(512), ["2x512x64x64:float16"]),
    "rotary": (lambda: Rotary(12, 128),
               ["4x2048x1536:bfloat16", "4x1x2048x128:bfloat16", "4x1x2048x128:bfloat16"]),
    # Few long rows (single-op cards, no region): one block per row would leave most SMs idle.
    "layer_norm_few_long_rows": (lambda: torch.nn.LayerNorm(4194304), ["16x4194304:float32"]),
    "softmax_few_long_rows": (Softmax, ["32x1048576:float32"]),
    # Reductions issue 27 found refused (single-op cards): over a middle dim and NCHW channels (a
    # thread per row), statistics and index reductions over rows, instance_norm.
    "sum_over_middle_dim": (lambda: OneOp(lambda x: x.sum(dim=1)), ["64x512x1024:float32"]),
    "softmax_over_channels": (lambda: OneOp(lambda x: torch.softmax(x, dim=1)), ["32x21x128x128:float16"]),
    "var_rows": (lambda: OneOp(lambda x: x.var(dim=-1)), ["8192x4096:bfloat16"]),
    "logsumexp_rows": (lambda: OneOp(lambda x: torch.logsumexp(x, dim=-1)), ["8192x4096:float32"]),
    "argmax_rows": (lambda: OneOp(lambda x: x.argmax(dim=-1)), ["8192x4096:float32"]),
    "instance_norm": (lambda: OneOp(torch.nn.functional.instance_norm), ["32x64x128x128:float16"]),
    # Scans (the scan family): rows a block each, few long rows split over blocks, over NCHW channels.
    "cumsum_rows": (lambda: OneOp(lambda x: torch.cumsum(x, dim=-1)), ["4096x8192:float32"]),
    "cumsum_few_long_rows": (lambda: OneOp(lambda x: torch.cumsum(x, dim=-1)), ["4x8388608:float32"]),
    "cumprod_over_channels": (lambda: OneOp(lambda x: torch.cumprod(x, dim=1)), ["32x64x128x128:bfloat16"]),
    # Pooling (the pool family): a ResNet-style 3x3 average, a 3-D max pool over video-like volumes.
    "avg_pool2d_3x3": (
        lambda: OneOp(lambda x: torch.nn.functional.avg_pool2d(x, 3, 1, 1)),
        ["32x64x112x112:float16"],
    ),
    "max_pool3d_2x2x2": (lambda: OneOp(lambda x: torch.nn.functional.max_pool3d(x, 2)), ["8x64x32x64x64:bfloat16"]),
}


def example(spec):
    shape, dtype = spec.split(":")
    return torch.randn([int(s) for s in shape.split("x")], device="cuda").to(getattr(torch, dtype))


def bench_chain(name, args, env, workdir, copy_gbps):
    factory, specs = CHAINS[name]
    return bench_module(name, factory, specs, args, env, workdir, copy_gbps)


def capture_module(name, factory, specs, kforge, env, workdir):
    """`factory()` on the GPU (in the inputs' dtype when they share one), traced on example inputs of
    `specs` and captured by `kforge capture` with one sample per card into workdir/name: (the
    project folder, the capture's cards). bench/search_throughput.py uses it too."""
    module = factory().cuda().eval()
    dtypes = {getattr(torch, s.split(":")[1]) for s in specs}
    if len(dtypes) == 1 and next(iter(dtypes)) != torch.float32:
        module = module.to(next(iter(dtypes)))
    model = os.path.join(workdir, name + ".pt")
    with torch.no_grad():
        # no trace check: it runs the module twice more and compares on the device (a 6 GiB softmax
        # ran out of memory there)
        torch.jit.trace(module, tuple(example(s) for s in specs), check_trace=False).save(model)
    del module
    torch.cuda.empty_cache()  # the capture runs in its own process: leave it the device's memory
    project = os.path.join(workdir, name)
    capture = run([kforge, "capture", model, "--inputs", *specs, "-o", project, "--device", "cuda",
                   "--samples", "1", "--sample-budget-mb", "16384", "--quiet", "--json"], 1200, env)
    if capture.returncode != 0:
        raise RuntimeError("kforge capture: " + one_line(capture.stderr))
    return project, json.loads(capture.stdout)["cards"]


def bench_module(name, factory, specs, args, env, workdir, copy_gbps):
    """Rows of measure_card for the region cards of `factory()` traced on inputs `specs` (its
    cards when it has no region), searched with `args.iterations` (bench/single_op_problems.py uses
    it too)."""
    project, cards = capture_module(name, factory, specs, args.kforge, env, workdir)
    # The chain's region cards; a chain of one op (few long rows) is its single-op card.
    regions = [c for c in cards if c.get("region")] or cards
    if not regions:
        raise RuntimeError("the capture found no card")
    optimize = run([args.kforge, "optimize", project, "--proposer", "builtin", "--iterations", str(args.iterations),
                    "--cards", *[c["id"] for c in regions]], 3600, env)
    if optimize.returncode != 0:
        raise RuntimeError("kforge optimize: " + one_line(optimize.stderr))
    rows = []
    for card in regions:
        tree = run([args.kforge, "tree", project, "--card", card["id"], "--json"], 120, env)
        nodes = json.loads(tree.stdout)["nodes"] if tree.returncode == 0 else []
        row = measure_card(card, project, nodes, args.kforge, env, workdir, copy_gbps, with_compile=True)
        row["chain"] = card["region"]["chain"] if card.get("region") else card.get("op", "?")
        row["bench"] = name
        row["inputs_spec"] = specs
        rows.append(row)
    return rows


def fmt(value, pattern="{:.1f}"):
    return "-" if value is None else pattern.format(value)


def markdown(environment_info, rows, errors):
    lines = ["# Fused-region kernels: eager chain, kforge, torch.compile", "",
             "Environment: " + ", ".join(f"{k} {v}" for k, v in environment_info.items()), "",
             "GPU time alone per call (device_us: launch overhead hidden), do_bench with the L2 flushed, same inputs.",
             "", "| bench | chain | inputs | eager chain us | kforge us | torch.compile us | kforge vs eager | "
             "kforge vs compile | kforge % of copy bw |", "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        db = row.get("do_bench", {})
        cand, comp = db.get("candidate") or {}, db.get("compile") or {}
        eager, ours, compiled = db.get("eager_device_us"), cand.get("device_us"), comp.get("device_us")
        bw = (row.get("bandwidth") or {}).get("candidate") or {}
        lines.append(f"| {row['bench']} | {row['chain']} | {' '.join(row['inputs_spec'])} | {fmt(eager)} | {fmt(ours)} | "
                     f"{fmt(compiled)} | {fmt(eager / ours if eager and ours else None, '{:.2f}x')} | "
                     f"{fmt(compiled / ours if compiled and ours else None, '{:.2f}x')} | "
                     f"{fmt(bw.get('fraction_of_copy') * 100 if bw.get('fraction_of_copy') else None, '{:.0f}%')} |")
        if cand.get("error"):
            lines.append(f"|  | kforge: {cand['error']} |  |  |  |  |  |  |  |")
        if row.get("no_best_reason"):
            lines.append(f"|  | no kernel: {row['no_best_reason']} |  |  |  |  |  |  |  |")
    for name, error in errors.items():
        lines.append(f"| {name} | failed: {error} |  |  |  |  |  |  |  |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--chains", default=",".join(CHAINS))
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("region_bench.py: no CUDA device", file=sys.stderr)
        return 2
    names = [n for n in args.chains.split(",") if n]
    unknown = [n for n in names if n not in CHAINS]
    if unknown:
        print(f"region_bench.py: unknown chain(s) {', '.join(unknown)} (known: {', '.join(CHAINS)})", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    env = dict(os.environ)
    info = environment(args.kforge)
    copy_gbps = copy_bandwidth_gbps()
    rows, errors = [], {}
    with tempfile.TemporaryDirectory(prefix="kforge_region_bench_") as workdir:
        run_each(names, "region_bench", lambda name: rows.extend(bench_chain(name, args, env, workdir, copy_gbps)),
                 errors)
    info["copy_gb_per_s"] = round(copy_gbps, 1)
    with open(os.path.join(args.out, "region-bench.json"), "w") as f:
        json.dump({"environment": info, "rows": rows, "errors": errors}, f, indent=1)
    text = markdown(info, rows, errors)
    with open(os.path.join(args.out, "region-bench.md"), "w") as f:
        f.write(text)
    print(text)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
