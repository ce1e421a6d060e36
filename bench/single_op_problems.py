#!/usr/bin/env python3
"""Single-op problems on the GPU: is there a kernel faster than eager for the ops models call?

A fixed set of one-op problems (PROBLEMS below: activations, norms, softmax, reductions along any
dims, index reductions, pooling and scans; float32, bfloat16 and float16; inputs from 1 MiB to
6 GiB), each a small nn.Module traced to TorchScript, captured on the GPU, searched with the
built-in proposer and measured by bench/region_bench.py's bench_module (bench/card_bench.py's
measure_card): eager's op, the best kernel kforge found and torch.compile(max-autotune-no-cudagraphs)
of the op, each as GPU time alone (device_us: launch overhead hidden, L2 flushed), on the same
inputs, beside the copy-bandwidth floor (the bytes the op must read and write at the device's
measured copy bandwidth).

The summary counts the problems whose kernel beats eager's GPU time by at least 1.05x (export's
default --min-speedup: a tie within the timer's noise does not count); a problem without a kernel
(refused, failed validation, or not that much faster) counts against it.

Usage: single_op_problems.py --kforge build/cli/kforge --out DIR [--iterations 3] [--only NAME,...]
                             [--max-mib 8192]
Writes DIR/single-op-problems.json and DIR/single-op-problems.md. Exit 0 when every problem was
measured, 1 when one failed (recorded), 2 without a GPU or on a bad argument.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, ROOT)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from card_bench import copy_bandwidth_gbps, run_each  # noqa: E402
from region_bench import OneOp, bench_module, fmt  # noqa: E402
from suite import environment  # noqa: E402


def op(fn):
    """The factory of a module that calls fn(x)."""
    return lambda: OneOp(fn)


# name -> (module factory, input specs). Shapes follow the models that call each op (ResNet's stem
# pool, SD's group_norm, a vocabulary's log_softmax, segmentation's softmax over 21 classes).
PROBLEMS = {
    # Activations and other pointwise ops
    "leaky_relu_f32": (op(lambda x: F.leaky_relu(x, 0.1)), ["4096x4096:float32"]),
    "selu_bf16": (op(F.selu), ["8192x8192:bfloat16"]),
    "hardsigmoid_f16_1mib": (op(F.hardsigmoid), ["512x1024:float16"]),
    "hardswish_f16": (op(F.hardswish), ["128x960x14x14:float16"]),
    "softplus_f32_1gib": (op(F.softplus), ["16384x16384:float32"]),
    "hardtanh_bf16": (op(F.hardtanh), ["4096x4096:bfloat16"]),
    "abs_f32_4mib": (op(torch.abs), ["1024x1024:float32"]),
    "sqrt_f32": (op(lambda x: torch.sqrt(x.abs())), ["8192x8192:float32"]),
    "elu_f16": (op(F.elu), ["8192x8192:float16"]),
    "mish_bf16": (op(F.mish), ["32x512x64x64:bfloat16"]),
    "gelu_tanh_f32": (op(lambda x: F.gelu(x, approximate="tanh")), ["65536x1024:float32"]),
    "clamp_f16_2mib": (op(lambda x: torch.clamp(x, -1.0, 1.0)), ["1024x1024:float16"]),
    "erf_f32": (op(torch.erf), ["4096x4096:float32"]),
    # Norms
    "layer_norm_few_long_rows_f32": (lambda: torch.nn.LayerNorm(4194304), ["16x4194304:float32"]),
    "layer_norm_bf16": (lambda: torch.nn.LayerNorm(4096), ["8192x4096:bfloat16"]),
    "rms_norm_f16": (lambda: torch.nn.RMSNorm(8192), ["4096x8192:float16"]),
    "group_norm_bf16_sd": (lambda: torch.nn.GroupNorm(32, 512), ["2x512x64x64:bfloat16"]),
    "instance_norm_f16": (op(F.instance_norm), ["32x64x128x128:float16"]),
    "batch_norm_eval_f16": (lambda: torch.nn.BatchNorm2d(256), ["64x256x56x56:float16"]),
    # Softmax
    "softmax_f32_6gib": (op(lambda x: torch.softmax(x, dim=-1)), ["4096x393216:float32"]),
    "log_softmax_bf16_vocab": (op(lambda x: torch.log_softmax(x, dim=-1)), ["8192x32000:bfloat16"]),
    "softmax_over_channels_f16": (op(lambda x: torch.softmax(x, dim=1)), ["32x21x128x128:float16"]),
    # Reductions along any dims
    "sum_over_middle_dim_f32": (op(lambda x: x.sum(dim=1)), ["64x512x1024:float32"]),
    "mean_of_everything_bf16": (op(torch.mean), ["8192x8192:bfloat16"]),
    "amax_rows_f16": (op(lambda x: x.amax(dim=-1)), ["16384x1024:float16"]),
    "var_rows_bf16": (op(lambda x: x.var(dim=-1)), ["8192x4096:bfloat16"]),
    "std_over_leading_dim_f16": (op(lambda x: x.std(dim=0)), ["4096x1024:float16"]),
    "vector_norm_rows_f32": (op(lambda x: torch.linalg.vector_norm(x, dim=-1)), ["4096x4096:float32"]),
    # Index reductions
    "argmax_rows_f32": (op(lambda x: x.argmax(dim=-1)), ["8192x4096:float32"]),
    "max_dim_over_middle_f32": (op(lambda x: x.max(dim=1)), ["256x128x512:float32"]),
    # Pooling
    "avg_pool1d_f32": (op(lambda x: F.avg_pool1d(x, 3, 2)), ["64x256x4096:float32"]),
    "avg_pool2d_3x3_f16": (op(lambda x: F.avg_pool2d(x, 3, 1, 1)), ["32x64x112x112:float16"]),
    "avg_pool3d_bf16": (op(lambda x: F.avg_pool3d(x, 2)), ["8x64x16x56x56:bfloat16"]),
    "max_pool1d_f16": (op(lambda x: F.max_pool1d(x, 2)), ["64x256x4096:float16"]),
    "max_pool2d_stem_f16": (op(lambda x: F.max_pool2d(x, 3, 2, 1)), ["32x64x112x112:float16"]),
    "max_pool3d_bf16": (op(lambda x: F.max_pool3d(x, 2)), ["8x64x32x64x64:bfloat16"]),
    # Scans
    "cumsum_rows_f32": (op(lambda x: torch.cumsum(x, dim=-1)), ["4096x8192:float32"]),
    "cumsum_few_long_rows_bf16": (op(lambda x: torch.cumsum(x, dim=-1)), ["4x8388608:bfloat16"]),
    "cumprod_over_channels_f16": (op(lambda x: torch.cumprod(x, dim=1)), ["32x64x128x128:float16"]),
}

ELEMENT_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def input_mib(specs):
    total = 0
    for spec in specs:
        shape, dtype = spec.split(":")
        n = 1
        for s in shape.split("x"):
            n *= int(s)
        total += n * ELEMENT_BYTES[dtype]
    return total / 2**20


# "Faster than eager": at least export's default --min-speedup, so that a tie within the timer's
# noise (an elementwise op where eager already reaches the copy floor) does not count.
FASTER = 1.05


def summarize(rows, errors, names):
    """Per problem: whether its kernel beat eager's GPU time by FASTER; the count over every problem
    asked."""
    faster = set()
    for row in rows:
        db = row.get("do_bench", {})
        eager, ours = db.get("eager_device_us"), (db.get("candidate") or {}).get("device_us")
        if eager and ours and eager / ours >= FASTER:
            faster.add(row["bench"])
    return {"problems": len(names), "faster_than_eager": len(faster), "failed": len(errors),
            "not_faster": sorted(set(names) - faster)}


def markdown(info, rows, errors, summary):
    lines = ["# Single-op problems: eager, kforge, torch.compile and the copy floor", "",
             "Environment: " + ", ".join(f"{k} {v}" for k, v in info.items()), "",
             f"**Faster than eager (GPU time, at least {FASTER}x): {summary['faster_than_eager']} of "
             f"{summary['problems']} problems"
             f" ({100 * summary['faster_than_eager'] / max(summary['problems'], 1):.0f}%).**", "",
             "GPU time alone per call (device_us: launch overhead hidden), do_bench with the L2 flushed, same "
             "inputs. Floor: the bytes the op must read and write at the measured copy bandwidth.", "",
             "| problem | op | inputs | MiB in | eager us | kforge us | torch.compile us | floor us | kforge vs eager | "
             "kforge vs compile | floor / kforge |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    copy = info.get("copy_gb_per_s")
    for row in rows:
        db = row.get("do_bench", {})
        cand, comp = db.get("candidate") or {}, db.get("compile") or {}
        eager, ours, compiled = db.get("eager_device_us"), cand.get("device_us"), comp.get("device_us")
        floor = row["bytes"] / (copy * 1e9) * 1e6 if copy and row.get("bytes") else None
        lines.append(f"| {row['bench']} | {row['chain']} | {' '.join(row['inputs_spec'])} | "
                     f"{input_mib(row['inputs_spec']):.0f} | {fmt(eager)} | {fmt(ours)} | {fmt(compiled)} | "
                     f"{fmt(floor)} | {fmt(eager / ours if eager and ours else None, '{:.2f}x')} | "
                     f"{fmt(compiled / ours if compiled and ours else None, '{:.2f}x')} | "
                     f"{fmt(100 * floor / ours if floor and ours else None, '{:.0f}%')} |")
        if cand.get("error"):
            lines.append(f"|  | kforge: {cand['error']} |  |  |  |  |  |  |  |  |  |")
        if row.get("no_best_reason"):
            lines.append(f"|  | no kernel: {row['no_best_reason']} |  |  |  |  |  |  |  |  |  |")
        if comp.get("error"):
            lines.append(f"|  | torch.compile: {comp['error']} |  |  |  |  |  |  |  |  |  |")
    for name, error in errors.items():
        lines.append(f"| {name} | failed: {error} |  |  |  |  |  |  |  |  |  |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--iterations", type=int, default=3, help="kforge optimize iterations per problem")
    parser.add_argument("--only", default="", help="comma-separated problem names (default: all)")
    parser.add_argument("--max-mib", type=float, default=8192, help="skip problems whose inputs exceed this")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(PROBLEMS)
    unknown = [n for n in names if n not in PROBLEMS]
    if unknown:
        print(f"single_op_problems.py: unknown problem(s) {', '.join(unknown)} (known: {', '.join(PROBLEMS)})",
              file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("single_op_problems.py: no CUDA device", file=sys.stderr)
        return 2
    names = [n for n in names if input_mib(PROBLEMS[n][1]) <= args.max_mib]
    os.makedirs(args.out, exist_ok=True)
    env = dict(os.environ)
    info = environment(args.kforge)
    copy_gbps = copy_bandwidth_gbps()
    info["copy_gb_per_s"] = round(copy_gbps, 1)
    rows, errors, text = [], {}, "no problem within --max-mib\n"

    def bench_one(name):
        factory, specs = PROBLEMS[name]
        rows.extend(bench_module(name, factory, specs, args, env, workdir, copy_gbps))

    def after_each(name, done):
        nonlocal text
        # a 6 GiB problem's samples and model do not stay on disk for the rest of the run
        shutil.rmtree(os.path.join(workdir, name), ignore_errors=True)
        if os.path.exists(os.path.join(workdir, name + ".pt")):
            os.remove(os.path.join(workdir, name + ".pt"))
        torch.cuda.empty_cache()
        text = write_results(args.out, info, rows, errors, done)  # a stopped run keeps its results

    with tempfile.TemporaryDirectory(prefix="kforge_single_op_") as workdir:
        run_each(names, "single_op_problems", bench_one, errors, after_each)
    print(text)
    return 1 if errors else 0


def write_results(out, info, rows, errors, names):
    """Writes the JSON and markdown of the problems in `names` so far; returns the markdown."""
    summary = summarize(rows, errors, names)
    with open(os.path.join(out, "single-op-problems.json"), "w") as f:
        json.dump({"environment": info, "summary": summary, "rows": rows, "errors": errors}, f, indent=1)
    text = markdown(info, rows, errors, summary)
    with open(os.path.join(out, "single-op-problems.md"), "w") as f:
        f.write(text)
    return text


if __name__ == "__main__":
    sys.exit(main())
