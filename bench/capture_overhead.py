#!/usr/bin/env python3
"""Capture overhead on a real model (issue: within 3x of one plain eager forward pass).

Builds torchvision's ResNet-50 (random weights, eval) at batch 32, exports it to TorchScript with
tools/kforge_export.py, then runs `kforge capture --samples 0 --json` several times and compares
the recorded forward (the capture itself: every top-level op recorded, its first-call inputs kept
on the device for eager timing) with a plain forward of the same TorchScript model in the same
process. Both are synchronized wall times after warm-up; kforge reports them as phase_ms.

Usage: capture_overhead.py --kforge build/cli/kforge --out DIR [--runs 3] [--batch 32] [--dtype float32]
Writes DIR/capture_overhead.json and prints a markdown summary.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from kforge_export import export_for_kforge  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float16"])
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = getattr(torch, args.dtype)
    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None).to(device=device, dtype=dtype)
    x = torch.randn(args.batch, 3, 224, 224, device=device, dtype=dtype)
    model_path = os.path.join(args.out, "resnet50.pt")
    inputs_path = os.path.join(args.out, "resnet50_inputs.pt")
    export_for_kforge(model, (x,), model_path, inputs_path, atol=1e-2, rtol=1e-2)

    runs = []
    for i in range(args.runs):
        project = os.path.join(args.out, f"project-{i}")
        started = time.perf_counter()
        result = subprocess.run([args.kforge, "capture", model_path, "--inputs", inputs_path, "-o", project,
                                 "--samples", "0", "--json", "--quiet"], capture_output=True, text=True)
        wall = time.perf_counter() - started
        if result.returncode != 0:
            sys.exit(f"capture failed: {result.stderr.strip()}")
        data = json.loads(result.stdout)
        phases = data["phase_ms"]
        runs.append({"phase_ms": phases, "command_wall_s": wall, "cards": len(data["cards"]),
                     "calls": data["capture"]["total_calls"],
                     "ratio_record_over_plain": phases["record_pass"] / phases["plain_forward"]})

    ratios = [r["ratio_record_over_plain"] for r in runs]
    summary = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(0) if device == "cuda" else "none (cpu)",
        "torch": torch.__version__, "torchvision": torchvision.__version__, "cuda": torch.version.cuda,
        "python": platform.python_version(), "model": f"resnet50 batch {args.batch} {args.dtype}",
        "runs": runs, "median_ratio": statistics.median(ratios), "goal_ratio": 3.0,
        "command": " ".join(sys.argv),
    }
    with open(os.path.join(args.out, "capture_overhead.json"), "w") as f:
        json.dump(summary, f, indent=2)

    print(f"## Capture overhead, {summary['model']} on {summary['gpu']} ({summary['date']})")
    print(f"torch {summary['torch']}, CUDA {summary['cuda']}, torchvision {summary['torchvision']}")
    print("| run | cards | calls | plain forward ms | recorded forward ms | ratio | eager timing ms | total ms |")
    print("|---|---|---|---|---|---|---|---|")
    for i, r in enumerate(runs):
        p = r["phase_ms"]
        print(f"| {i} | {r['cards']} | {r['calls']} | {p['plain_forward']:.2f} | {p['record_pass']:.2f} | "
              f"{r['ratio_record_over_plain']:.2f}x | {p['eager_timing']:.0f} | {p['total']:.0f} |")
    print(f"median ratio {summary['median_ratio']:.2f}x (goal: within {summary['goal_ratio']:.0f}x)")
    return 0 if summary["median_ratio"] <= summary["goal_ratio"] else 1


if __name__ == "__main__":
    sys.exit(main())
