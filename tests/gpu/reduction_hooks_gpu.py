#!/usr/bin/env python3
"""End to end on the GPU for the runtime's reduction, scan and pool hooks: capture -> optimize ->
kforge export -> load the package into python3's torch and run the *eager* nn.Module.

The model calls every statistic and index reduction the runtime hooks (runtime/ReductionHooks.h:
var / std through both their `dim` and `correction` overloads, var_mean, logsumexp, argmax,
argmin, max.dim, min.dim, max of every element, amax, amin, prod.dim_int, linalg_vector_norm,
instance_norm) and the scans and average pools (cumsum, cumprod, avg_pool2d, avg_pool3d), each as a
model's code writes it. Checks: no card of those ops is left out for want of a dispatch hook; the
package (exported with --min-speedup 0.01: this tests the hooks, not the speed) passes the
in-model check; with it loaded, every custom kernel records hits under torch.no_grad() and again
under torch.inference_mode() (the AutogradCUDA and CUDA keys of the composite hooks), the outputs
pass the evaluator's rule (within the float32 reduction tolerance of eager's, or within twice
eager's own error of the model run in float64; indices equal), and unloading restores eager. Exit 77 without a GPU.

Usage: reduction_hooks_gpu.py --kforge build/cli/kforge --library build/runtime/libkforge_runtime.so
"""
import argparse
import json
import os
import sys
import tempfile

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))

from export_runtime_gpu import export_with_check, package_pipeline  # noqa: E402

# The ops of the model, as the capture records them.
HOOKED = {"aten::var.dim", "aten::var.correction", "aten::std.dim", "aten::var_mean.dim", "aten::logsumexp",
          "aten::argmax", "aten::argmin", "aten::max.dim", "aten::min.dim", "aten::max", "aten::amax", "aten::amin",
          "aten::prod.dim_int", "aten::linalg_vector_norm", "aten::instance_norm", "aten::cumsum", "aten::cumprod",
          "aten::avg_pool2d", "aten::avg_pool3d"}


class Reductions(torch.nn.Module):
    def forward(self, x, small, image):
        var_mean = torch.var_mean(x, dim=-1)
        values, indices = x.max(dim=-1)
        least, where = x.min(dim=1)
        return (x.var(dim=-1), torch.var(x, dim=-1, correction=0), x.std(dim=1), var_mean[0], var_mean[1],
                torch.logsumexp(x, dim=-1), x.argmax(dim=-1), x.argmin(dim=-1), values, indices, least, where,
                x.max(), x.amax(dim=-1), x.amin(dim=-1), small.prod(dim=-1), torch.linalg.vector_norm(x, dim=-1),
                F.instance_norm(image), torch.cumsum(x, dim=-1), torch.cumprod(small, dim=-1),
                F.avg_pool2d(image, 3, 1, 1), F.avg_pool3d(image, 2))


def compare(got, expected, exact):
    """The first output (index and reason) that fails the evaluator's rule, or None: indices equal to
    eager's; values within the float32 reduction tolerance of eager's, or else within twice eager's
    own error of the float64 run plus that tolerance (docs/validation.md: a scan or a sum in another
    order than eager's differs from it where the result cancels)."""
    for i, (g, e, x) in enumerate(zip(got, expected, exact)):
        if g.dtype != e.dtype or g.shape != e.shape:
            return f"output {i}: {g.dtype} {list(g.shape)}, eager {e.dtype} {list(e.shape)}"
        if not g.is_floating_point():
            if not torch.equal(g, e):
                return f"output {i}: indices differ from eager's"
            continue
        if torch.allclose(g, e, atol=1e-5, rtol=1e-4, equal_nan=True):
            continue
        g, e, x = g.double(), e.double(), x.double()
        bad = (g - x).abs() > 2 * (e - x).abs() + 1e-5 + 1e-4 * x.abs()
        if bad.any():
            return (f"output {i}: {int(bad.sum())} elements beyond 2x eager's error vs float64; max abs error vs "
                    f"eager {(g - e).abs().max().item():.3g}")
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--library", required=True)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA device")
        return 77
    from kforge_export import export_for_kforge

    torch.manual_seed(0)
    model = Reductions().cuda().eval()
    inputs = (torch.randn(256, 1000, device="cuda"), torch.rand(256, 12, device="cuda") + 0.5,
              torch.randn(8, 16, 24, 24, device="cuda"))
    with torch.no_grad():
        expected = model(*inputs)
        exact = model(*(t.double() for t in inputs))
    failures = []
    with tempfile.TemporaryDirectory(prefix="kforge-reduction-hooks-") as work:
        cast = os.path.join(work, "model.cast")
        report, project, _ = package_pipeline(args, export_for_kforge, model, inputs, work, cast)
        for d in report["cards"]:
            if "no dispatch hook" in d["reason"]:
                failures.append(f"{d['op']}: {d['reason']}")
            elif d["decision"] != "custom":
                print(f"not shipped: {d['op']}: {d['reason']}")
        checked, _ = export_with_check(args, project, work, failures)

        torch.ops.load_library(args.library)
        handle = torch.ops.kforge.load_cast(checked)
        try:
            with torch.no_grad():
                got = model(*inputs)
            no_grad_stats = json.loads(torch.ops.kforge.cast_stats())
            with torch.inference_mode():
                got_inference = model(*inputs)
            stats = json.loads(torch.ops.kforge.cast_stats())
        finally:
            torch.ops.kforge.unload_cast(handle)
        with torch.no_grad():
            after = model(*inputs)

    kernels = [k for k in stats["kernels"] if k["op"] != "kforge::region"]
    before = {k["id"]: k["hits"] for k in no_grad_stats["kernels"]}
    hooked = sorted({k["op"] for k in kernels} & HOOKED)
    print("custom op kernels:", ", ".join(sorted(k["op"] for k in kernels)))
    print("hooked ops shipped:", len(hooked), "of", len(HOOKED), "; not shipped:", ", ".join(sorted(HOOKED - set(hooked))))
    for k in kernels:
        first = before.get(k["id"], 0)
        if first < 1:
            failures.append(f"{k['op']}: no hit under no_grad ({k.get('last_fallback_reason')!r})")
        elif k["hits"] <= first:
            failures.append(f"{k['op']}: no hit under inference_mode ({k.get('last_fallback_reason')!r})")
    if len(hooked) < len(HOOKED) // 2:
        failures.append(f"only {len(hooked)} of the {len(HOOKED)} hooked ops shipped a kernel: {hooked}")
    for name, outputs in (("no_grad", got), ("inference_mode", got_inference)):
        if problem := compare(outputs, expected, exact):
            failures.append(f"with the package ({name}): {problem}")
    if problem := compare(after, expected, exact):
        failures.append(f"after unload: {problem}")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print(f"ok: {len(kernels)} custom op kernels, each hit under no_grad and inference_mode; outputs within "
          "tolerance; unload restored eager")
    return 0


if __name__ == "__main__":
    sys.exit(main())
