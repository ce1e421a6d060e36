#!/usr/bin/env python3
"""End to end on the GPU: capture -> optimize -> kforge export -> kforge verify -> load the package
into python3's torch and run the *eager* nn.Module (no TorchScript).

Model 1: tanh(softmax(x, -1)) on float32 [256, 1000]. Checks: the package verifies; both cards are
custom kernels (exported with --min-speedup 0.01 --no-model-check: this tests the pipeline, not the
speed); with the package loaded the module's output matches eager within the evaluator's fp32
tolerance and every custom kernel records hits; a batch of 128 falls back (counted) and equals eager
bit for bit; unloading restores eager.

Model 2 (composite operators): batch_norm (eval), relu_ (in place), group_norm, silu, max_pool2d,
adaptive_avg_pool2d, embedding, mean, add, rms_norm, layer_norm. Checks: relu_ is exported and hits
under no_grad (the in-place hook); every composite card exported as a custom kernel hits under
torch.no_grad() (AutogradCUDA hook) and under torch.inference_mode() (CUDA hook) with outputs within
tolerance; with grad enabled and an input that requires grad the composite kernels fall back (reason
"autograd") and the gradients match eager's; a second export with the in-model check runs it and
passes, and reuses the first export's sanitizer passes (same kernels, same samples); `kforge run --json` of that package reports outputs within tolerance and a hit for every kernel (an op kernel
whose calls all lie in a region a region kernel served excepted).

Model 4 (fused regions): GELU written out as eight elementwise ops, a matmul, rotary on its heads
(with the cat of the halves), then scale + bias -> softmax. Checks: the three region cards
(pointwise, pointwise with a cat, and the row region around the softmax) ship as custom kernels; the in-model check passes with it; `kforge run --json` serves the chain with the
region kernel (a hit, no "never runs" note) within tolerance; so does the eager module compiled with
torch.compile(backend=kforge_backend) (Inductor with the region kernels) and with
backend=kforge_script_backend (the TorchScript route) in python3's torch.
Exit 77 without a GPU.

Usage: export_runtime_gpu.py --kforge build/cli/kforge --library build/runtime/libkforge_runtime.so
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import zipfile

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class TanhSoftmax(torch.nn.Module):
    def forward(self, x):
        return torch.tanh(torch.softmax(x, dim=-1))


class NormBlock(torch.nn.Module):
    """The composite operators the runtime hooks as themselves, in one small model."""

    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(64)
        self.gn = torch.nn.GroupNorm(8, 64)
        self.emb = torch.nn.Embedding(100, 64)
        self.ln = torch.nn.LayerNorm(64)
        self.rms_weight = torch.nn.Parameter(torch.randn(64))
        with torch.no_grad():
            self.bn.running_mean.normal_()
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x, ids):
        # ResNet's ReLU(inplace=True) after batch_norm: aten::relu_, hooked in place
        h = torch.nn.functional.silu(self.gn(torch.nn.functional.relu(self.bn(x), inplace=True)))
        h = torch.nn.functional.max_pool2d(h, 3, 2, 1)
        pooled = torch.nn.functional.adaptive_avg_pool2d(h, 1).flatten(1)
        e = self.emb(ids).mean(dim=1)
        y = torch.nn.functional.rms_norm(pooled + e, (64,), self.rms_weight, 1e-6)
        # A round trip through bfloat16, as a mixed-precision block casts (to.dtype both ways).
        return self.ln(y.to(torch.bfloat16).to(torch.float32))


class AttentionSoftmax(torch.nn.Module):
    """transformers' eager attention: softmax of bfloat16 scores computed in float32, cast back."""

    def forward(self, scores):
        return torch.nn.functional.softmax(scores, dim=-1, dtype=torch.float32).to(scores.dtype)


COMPOSITE = {"aten::batch_norm", "aten::group_norm", "aten::adaptive_avg_pool2d", "aten::max_pool2d",
             "aten::embedding", "aten::rms_norm", "aten::layer_norm", "aten::to.dtype"}


def run(cmd, what):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{what} failed ({result.returncode}): {result.stderr.strip()[-2000:]}")
    return result.stdout


def package_pipeline(args, export_for_kforge, model, inputs, work, cast, iterations=4):
    """TorchScript export, capture, optimize and export (--min-speedup 0.01 --no-model-check: the
    pipeline, not the speed) of `model` in `work`. Returns (export report, project, inputs file)."""
    model_path = os.path.join(work, "model.pt")
    inputs_path = os.path.join(work, "inputs.pt")
    export_for_kforge(model, inputs, model_path, inputs_path)
    project = os.path.join(work, "project")
    run([args.kforge, "capture", model_path, "--inputs", inputs_path, "-o", project, "--samples", "1", "--quiet"],
        "capture")
    run([args.kforge, "optimize", project, "--iterations", str(iterations), "--seed", "1"], "optimize")
    report = json.loads(run([args.kforge, "export", project, "-o", cast, "--min-speedup", "0.01", "--json",
                             "--no-model-check"], "export"))
    return report, project, inputs_path


def export_with_check(args, project, work, failures):
    """Export with the in-model check (--min-speedup 0.01), which must run and pass. Returns the
    package's path and the export report."""
    checked = os.path.join(work, "checked.cast")
    report = json.loads(run([args.kforge, "export", project, "-o", checked, "--min-speedup", "0.01", "--json"],
                            "export with the in-model check"))
    check = report["in_model_check"]
    print("in-model check:", json.dumps(check))
    if not check["run"] or not check["passed"]:
        failures.append(f"in-model check did not run and pass: {check}")
    return checked, report


def run_package(args, cast, inputs_path, failures):
    """`kforge run --json` of the package, whose outputs must be within tolerance. Returns the report."""
    result = json.loads(run([args.kforge, "run", cast, "--inputs", inputs_path, "--runs", "5", "--json"],
                            "kforge run"))
    print("kforge run:", json.dumps(result)[:2000])
    if not result["output"] or not result["output"]["within_tolerance"]:
        failures.append(f"kforge run: outputs not within tolerance: {result['output']}")
    return result


def check_tanh_softmax(args, export_for_kforge):
    torch.manual_seed(0)
    model = TanhSoftmax().cuda().eval()
    x = torch.randn(256, 1000, device="cuda")
    small = torch.randn(128, 1000, device="cuda")
    with torch.no_grad():
        expected = model(x)
        expected_small = model(small)
    with tempfile.TemporaryDirectory(prefix="kforge-export-runtime-") as work:
        cast = os.path.join(work, "model.cast")
        report, _, _ = package_pipeline(args, export_for_kforge, model, (x,), work, cast, iterations=6)
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
    # The eager module calls op kernels only; the softmax -> tanh region kernel the package may hold
    # too is served through a graph (model 4 checks those).
    op_kernels = [k for k in stats["kernels"] if k["op"] != "kforge::region"]
    ops = sorted(k["op"] for k in op_kernels)
    if ops != ["aten::softmax.int", "aten::tanh"]:
        failures.append(f"custom op kernels {ops}, expected softmax.int and tanh")
    for k in op_kernels:
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
        sys.exit("FAILED (tanh softmax): " + "; ".join(failures))
    print(f"ok: {len(op_kernels)} custom op kernels hit, batch 128 fell back, unload restored eager; "
          f"max abs error {(got - expected).abs().max().item():.3g}")


def check_composites(args, export_for_kforge):
    torch.manual_seed(0)
    model = NormBlock().cuda().eval()
    x = torch.randn(8, 64, 16, 16, device="cuda")
    ids = torch.randint(0, 100, (8, 16), device="cuda")
    with torch.no_grad():
        expected = model(x, ids)
    x_grad = x.clone().requires_grad_(True)
    model(x_grad, ids).square().sum().backward()
    expected_grad = x_grad.grad.clone()
    failures = []
    with tempfile.TemporaryDirectory(prefix="kforge-composite-") as work:
        cast = os.path.join(work, "pipeline.cast")
        report, project, inputs_path = package_pipeline(args, export_for_kforge, model, (x, ids), work, cast)
        first_report = report
        custom = {c["op"] for c in report["cards"] if c["decision"] == "custom"}
        print("composite export:", {c["op"]: c["decision"] + ": " + c["reason"] for c in report["cards"]})
        missing = COMPOSITE - custom
        if missing:
            failures.append(f"composite cards not exported as custom kernels: {sorted(missing)}")

        torch.ops.load_library(args.library)
        handle = torch.ops.kforge.load_cast(cast)
        try:
            with torch.no_grad():
                got_no_grad = model(x, ids)
            no_grad_stats = json.loads(torch.ops.kforge.cast_stats())
            with torch.inference_mode():
                got_inference = model(x, ids)
            inference_stats = json.loads(torch.ops.kforge.cast_stats())
            x_grad = x.clone().requires_grad_(True)
            model(x_grad, ids).square().sum().backward()
            grad_stats = json.loads(torch.ops.kforge.cast_stats())
            # torch.compile traces the model with fake and functional tensors, which reach the
            # composite operators' hooks: they must let the trace through, not read its data.
            torch._dynamo.reset()
            with torch.no_grad():
                got_compiled = torch.compile(model, backend="aot_eager")(x, ids)
        finally:
            torch.ops.kforge.unload_cast(handle)
        if not torch.allclose(got_compiled, expected, atol=1e-4, rtol=1e-3):
            failures.append(f"torch.compile with the package loaded: max abs error "
                            f"{(got_compiled - expected).abs().max().item()}")
        hits = lambda stats: {k["op"]: k["hits"] for k in stats["kernels"]}
        falls = lambda stats: {k["op"]: k["fallbacks"] for k in stats["kernels"]}
        if "aten::relu_" not in custom:
            failures.append("relu_ (in place) not exported as a custom kernel")
        elif hits(no_grad_stats).get("aten::relu_", 0) < 1:
            failures.append("relu_: no hit under no_grad (the in-place hook)")
        for op in sorted(custom & COMPOSITE):
            if hits(no_grad_stats).get(op, 0) < 1:
                failures.append(f"{op}: no hit under no_grad")
            if hits(inference_stats).get(op, 0) <= hits(no_grad_stats).get(op, 0):
                failures.append(f"{op}: no hit under inference_mode")
            # Under grad, every composite whose inputs require grad falls back (embedding's hook
            # sits below autograd and serves; its backward does not read the forward's output).
            if op != "aten::embedding" and falls(grad_stats).get(op, 0) <= falls(inference_stats).get(op, 0):
                failures.append(f"{op}: did not fall back with grad enabled")
        reasons = grad_stats["fallback_reasons"]
        if not any("autograd" in r for r in reasons.values()):
            failures.append(f"no fallback reason names autograd: {reasons}")
        for name, got in (("no_grad", got_no_grad), ("inference_mode", got_inference)):
            if not torch.allclose(got, expected, atol=1e-4, rtol=1e-3):
                failures.append(f"{name}: max abs error {(got - expected).abs().max().item()}")
        if not torch.allclose(x_grad.grad, expected_grad, atol=1e-4, rtol=1e-3):
            failures.append(f"gradients differ: max {(x_grad.grad - expected_grad).abs().max().item()}")

        checked, report = export_with_check(args, project, work, failures)
        check = report["in_model_check"]
        # The same kernels on the same samples: the first export ran the sanitizer (a new capture's
        # samples are new files), the second reuses its passes.
        first = {c["card"]: c["sanitizer"] for c in first_report["cards"] if (c["sanitizer"] or {}).get("passed")}
        second = {c["card"]: c["sanitizer"] for c in report["cards"] if c["card"] in first and c["sanitizer"]}
        if not first:
            failures.append("the first export sanitizer-checked no kernel")
        for card, record in first.items():
            if "reused" in record:
                failures.append(f"{card}: the first export reused a verdict of a fresh capture")
            if "reused" not in second.get(card, {}):
                failures.append(f"{card}: the second export did not reuse the pass: {second.get(card)}")
        notes = report.get("notes") or []
        if first and not any(n.startswith("sanitizer verdicts reused") for n in notes):
            failures.append(f"no audit note lists the reused verdicts: {notes}")
        for dropped in check["dropped"]:
            if not dropped["reason"].startswith("in-model check: "):
                failures.append(f"dropped kernel without a reason: {dropped}")
        # The fixture's forward never synchronizes: its GPU time must be isolated (ForwardGpuTimer)
        # wherever the speed steps ran, and the audit line says what it was.
        if "kernels off" in check["reason"] and "(GPU time " not in check["reason"]:
            failures.append(f"in-model check timed no GPU time: {check['reason']}")
        result = run_package(args, checked, inputs_path, failures)
        if result["cast_ms"] is None or result["eager_ms"]["median"] <= 0:
            failures.append("kforge run: no latencies")
        if not (result.get("eager_gpu_ms") or 0) > 0 or not (result.get("cast_gpu_ms") or 0) > 0:
            failures.append(f"kforge run: no GPU times ({result.get('gpu_time_note')})")
        # kforge run runs the TorchScript model op by op, as it was captured: every packaged kernel
        # is called (with TorchScript's fusion on, elementwise kernels were never called at all),
        # except an op kernel whose calls all lie in a region that a region kernel served.
        failures += never_hit(result["kernels"], checked)
    if failures:
        sys.exit("FAILED (composites): " + "; ".join(failures))
    print(f"ok: composite kernels {sorted(custom & COMPOSITE)} hit under no_grad and inference_mode, fell back "
          f"under autograd with eager's gradients; in-model check passed; kforge run within tolerance")


def region_members(cast):
    """{region kernel id: the card ids of its chain's members} of a package."""
    with zipfile.ZipFile(cast) as z:
        manifest = json.loads(z.read("manifest.json"))
    return {k["id"]: {m["card_id"] for m in k["card"]["region"]["members"]}
            for k in manifest["kernels"] if k["kind"] == "custom" and "region" in k["card"]}


def never_hit(kernels, cast):
    """kforge run's kernels that were never called, but for op kernels inside served regions."""
    members = region_members(cast)
    served = set()
    for k in kernels:
        if k["id"] in members and k["hits"] > 0:
            served |= members[k["id"]]
    return [f"kforge run: {k['op']} ({k['id']}) never hit: {k['fallbacks']} fallbacks, last reason "
            f"{k.get('last_fallback_reason')!r}" for k in kernels if k["hits"] < 1 and k["card"] not in served]


class GeluWrittenOut(torch.nn.Module):
    """GELU (tanh form) written out as eight elementwise ops (a pointwise region card), a matmul, rotary
    on its heads as transformers writes it (q * cos + cat(-q2, q1) * sin: a pointwise region with a
    cat), then scale + bias -> softmax (a row region card)."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(2048, 512) * 0.02)
        self.register_buffer("bias", torch.randn(1, 512))
        angles = torch.randn(1, 1, 256, 128)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())

    def forward(self, x):
        h = 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
        q = (h @ self.weight).view(4, 256, 4, 128).transpose(1, 2)
        q = q * self.cos + torch.cat((-q[..., 64:], q[..., :64]), dim=-1) * self.sin
        return torch.softmax(q.transpose(1, 2).reshape(1024, 512) * 0.125 + self.bias, dim=-1)


def check_region_kernels(args, export_for_kforge):
    """A fused-region kernel ships in the package, and kforge run serves the chain with it."""
    torch.manual_seed(0)
    model = GeluWrittenOut().cuda().eval()
    x = torch.randn(1024, 2048, device="cuda")
    failures = []
    with tempfile.TemporaryDirectory(prefix="kforge-regions-") as work:
        cast = os.path.join(work, "regions.cast")
        report, project, inputs_path = package_pipeline(args, export_for_kforge, model, (x,), work, cast)
        regions = [c for c in report["cards"] if c["op"].startswith("region: ")]
        print("region cards:", json.dumps(regions))
        if len(regions) < 3 or not all(c["decision"] == "custom" for c in regions):
            sys.exit(f"FAILED (regions): expected the GELU, rotary and softmax region kernels: {regions}")
        checked, _ = export_with_check(args, project, work, failures)
        result = run_package(args, checked, inputs_path, failures)
        if result.get("notes"):
            failures.append(f"kforge run: region kernels that never run: {result['notes']}")
        members = region_members(checked)
        hit = [k for k in result["kernels"] if k["id"] in members and k["hits"] > 0]
        if len(hit) < len(members):
            failures.append(f"kforge run: a region kernel did not serve its chain: {result['kernels']}")
        failures += never_hit(result["kernels"], checked)

        # Python: the eager module through torch.compile with each of the runtime's backends
        # (Inductor with the region kernels swapped in, and the TorchScript route).
        sys.path.insert(0, os.path.join(ROOT, "runtime"))
        import kforge_runtime
        torch.ops.load_library(args.library)
        handle = torch.ops.kforge.load_cast(checked)
        try:
            for name in ("kforge_backend", "kforge_script_backend"):
                before = {k["id"]: k["hits"] for k in json.loads(torch.ops.kforge.cast_stats())["kernels"]}
                torch._dynamo.reset()
                compiled = torch.compile(model, backend=getattr(kforge_runtime, name), dynamic=False)
                with torch.no_grad():
                    got = compiled(x)
                    expected = model(x)
                stats = json.loads(torch.ops.kforge.cast_stats())
                print(f"torch.compile(backend={name}):", json.dumps(stats))
                served = [k["id"] for k in stats["kernels"] if k["id"] in members and k["hits"] > before.get(k["id"], 0)]
                if len(served) < len(members):
                    failures.append(f"torch.compile backend {name}: a region kernel was not hit: {stats}")
                if not torch.allclose(got, expected, atol=1e-5, rtol=1e-4):
                    failures.append(f"torch.compile backend {name}: max abs error {(got - expected).abs().max().item()}")
        finally:
            torch.ops.kforge.unload_cast(handle)
    if failures:
        sys.exit("FAILED (regions): " + "; ".join(failures))
    print(f"ok: region kernels {[k['id'] for k in hit]} served the chain in kforge run, within tolerance; "
          f"in-model check passed")


def check_softmax_dtype(args, export_for_kforge):
    torch.manual_seed(0)
    model = AttentionSoftmax().cuda().eval()
    scores = torch.randn(4, 8, 128, 128, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        expected = torch.nn.functional.softmax(scores, dim=-1, dtype=torch.float32)
    with tempfile.TemporaryDirectory(prefix="kforge-softmax-dtype-") as work:
        cast = os.path.join(work, "softmax.cast")
        report, _, _ = package_pipeline(args, export_for_kforge, model, (scores,), work, cast)
        softmax = [c for c in report["cards"] if c["op"] == "aten::softmax.int"]
        if not softmax or softmax[0]["decision"] != "custom":
            sys.exit(f"FAILED (softmax dtype): the softmax card is not custom: {softmax}")
        torch.ops.load_library(args.library)
        handle = torch.ops.kforge.load_cast(cast)
        try:
            with torch.no_grad():
                got = torch.nn.functional.softmax(scores, dim=-1, dtype=torch.float32)
            stats = json.loads(torch.ops.kforge.cast_stats())
        finally:
            torch.ops.kforge.unload_cast(handle)
    hits = {k["op"]: k["hits"] for k in stats["kernels"]}
    if hits.get("aten::softmax.int", 0) < 1:
        sys.exit(f"FAILED (softmax dtype): no hit: {stats}")
    if got.dtype != torch.float32 or not torch.allclose(got, expected, atol=1e-5, rtol=1e-4):
        sys.exit(f"FAILED (softmax dtype): max abs error {(got.float() - expected).abs().max().item()}")
    print(f"ok: softmax(bf16, dtype=float32) served by one kernel ({softmax[0]['reason']}); "
          f"max abs error {(got - expected).abs().max().item():.3g}")


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

    check_tanh_softmax(args, export_for_kforge)
    check_composites(args, export_for_kforge)
    check_softmax_dtype(args, export_for_kforge)
    check_region_kernels(args, export_for_kforge)
    return 0


if __name__ == "__main__":
    sys.exit(main())
