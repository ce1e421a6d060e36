#!/usr/bin/env python3
"""End to end on the GPU: capture -> optimize -> kforge export -> kforge verify -> load the package
into python3's torch and run the *eager* nn.Module (no TorchScript).

Model: tanh(softmax(x, -1)) on float32 [256, 1000]. Checks: the package verifies; both cards are
custom kernels (exported with --min-speedup 0.01: this tests the pipeline, not the speed); with the
package loaded the module's output matches eager within the evaluator's fp32 tolerance and every
custom kernel records hits; a batch of 128 falls back (counted) and equals eager bit for bit;
unloading restores eager. Exit 77 without a GPU.

Usage: export_runtime_gpu.py --kforge build/cli/kforge --library build/runtime/libkforge_runtime.so
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class TanhSoftmax(torch.nn.Module):
    def forward(self, x):
        return torch.tanh(torch.softmax(x, dim=-1))


def run(cmd, what):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{what} failed ({result.returncode}): {result.stderr.strip()[-2000:]}")
    return result.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--library", required=True)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA device")
        return 77
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    from kforge_export import export_for_kforge

    torch.manual_seed(0)
    model = TanhSoftmax().cuda().eval()
    x = torch.randn(256, 1000, device="cuda")
    small = torch.randn(128, 1000, device="cuda")
    with torch.no_grad():
        expected = model(x)
        expected_small = model(small)
    with tempfile.TemporaryDirectory(prefix="kforge-export-runtime-") as work:
        model_path = os.path.join(work, "model.pt")
        inputs_path = os.path.join(work, "inputs.pt")
        export_for_kforge(model, (x,), model_path, inputs_path)
        project = os.path.join(work, "project")
        run([args.kforge, "capture", model_path, "--inputs", inputs_path, "-o", project, "--samples", "1",
             "--quiet"], "capture")
        run([args.kforge, "optimize", project, "--iterations", "6", "--seed", "1"], "optimize")
        cast = os.path.join(work, "model.cast")
        report = json.loads(run([args.kforge, "export", project, "-o", cast, "--min-speedup", "0.01", "--json"],
                                "export"))
        print("export:", json.dumps(report)[:1500])
        print(run([args.kforge, "verify", cast], "verify"))

        torch.ops.load_library(args.library)
        handle = torch.ops.kforge.load_cast(cast)
        try:
            with torch.no_grad():
                got = model(x)
                got_small = model(small)
            stats = json.loads(torch.ops.kforge.cast_stats())
        finally:
            torch.ops.kforge.unload_cast(handle)
        with torch.no_grad():
            after = model(x)
    print("stats:", json.dumps(stats))
    failures = []
    ops = sorted(k["op"] for k in stats["kernels"])
    if ops != ["aten::softmax.int", "aten::tanh"]:
        failures.append(f"custom kernels {ops}, expected softmax.int and tanh")
    for k in stats["kernels"]:
        if k["hits"] < 1:
            failures.append(f"{k['op']}: no hit")
        if k["fallbacks"] < 1:
            failures.append(f"{k['op']}: the batch-128 call did not fall back")
    if not torch.allclose(got, expected, atol=1e-5, rtol=1e-4):
        failures.append(f"with the package: max abs error {(got - expected).abs().max().item()}")
    if not torch.equal(got_small, expected_small):
        failures.append("fallback output differs from eager")
    if not torch.equal(after, expected):
        failures.append("after unload the output differs from eager")
    if failures:
        sys.exit("FAILED: " + "; ".join(failures))
    print(f"ok: {len(stats['kernels'])} custom kernels hit, batch 128 fell back, unload restored eager; "
          f"max abs error {(got - expected).abs().max().item():.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
