#!/usr/bin/env python3
"""Evaluator checks on a GPU (issue: candidate kernels, timing).

1. Captures a one-softmax model at softmax bf16 [8,8,512,512] dim -1 (the softmax_bf16 target of
   bench/search_targets.py).
2. `kforge bench` on tests/gpu/kernels/softmax_correct.cu (its embedded plan replaced by one for
   this shape with --plan) with --repeat N --no-cache: the wall time
   of compile + validate + time per candidate with a warm worker (goal: median under 0.5 s).
3. Cross-checks the evaluator's candidate and eager medians against triton.testing.do_bench
   timing the same cubin (loaded with cuda-python) and torch.softmax (goal: within 10%).

Usage: evaluator_crosscheck.py --kforge build/cli/kforge --out DIR [--repeat 10]
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

import torch
import triton
import triton.testing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "bench"))
from cubin_launch import PlanLauncher  # noqa: E402
SHAPE = (8, 8, 512, 512)


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed: {result.stderr.strip()}")
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    sys.path.insert(0, os.path.join(ROOT, "tools"))
    from kforge_export import export_for_kforge

    class Softmax(torch.nn.Module):
        def forward(self, x):
            return torch.softmax(x, dim=-1)

    x = torch.randn(*SHAPE, device="cuda", dtype=torch.bfloat16)
    model_path = os.path.join(args.out, "softmax.pt")
    inputs_path = os.path.join(args.out, "softmax_inputs.pt")
    export_for_kforge(Softmax(), (x,), model_path, inputs_path, atol=1e-2, rtol=1e-2)
    project = os.path.join(args.out, "project")
    result = run([args.kforge, "capture", model_path, "--inputs", inputs_path, "-o", project, "--samples", "1",
                  "--quiet", "--json"])
    card = json.loads(result.stdout)["cards"][0]
    rows = SHAPE[0] * SHAPE[1] * SHAPE[2]
    n = SHAPE[3]
    plan = {"launches": [{"kernel": "softmax_rows", "grid": [rows], "block": [128],
                          "args": ["ptr:self", "ptr:out0", f"i32:{n}"]}]}
    plan_path = os.path.join(args.out, "plan.json")
    with open(plan_path, "w") as f:
        json.dump(plan, f)
    cubin_path = os.path.join(args.out, "softmax_rows.cubin")
    bench = run([args.kforge, "bench", project, "--card", card["id"], "--kernel",
                 os.path.join(ROOT, "tests", "gpu", "kernels", "softmax_correct.cu"), "--plan", plan_path,
                 "--repeat", str(args.repeat), "--no-cache", "--emit-cubin", cubin_path])
    report = json.loads(bench.stdout)
    if report["status"] != "passed":
        sys.exit(f"candidate did not pass: {report.get('reason')}")
    timing = report["evaluation"]["timing"]

    # Independent timing of the same cubin and of eager softmax with triton's do_bench.
    with open(cubin_path, "rb") as f:
        cubin = f.read()
    y = torch.empty_like(x)
    launch = PlanLauncher(cubin, plan, tensors={"self": x}, outputs=[y])

    launch()
    torch.cuda.synchronize()
    assert torch.allclose(y.float(), torch.softmax(x, -1).float(), atol=1e-2, rtol=2e-2)
    candidate_ms = triton.testing.do_bench(launch, warmup=25, rep=200, return_mode="median")
    eager_ms = triton.testing.do_bench(lambda: torch.softmax(x, dim=-1), warmup=25, rep=200, return_mode="median")

    walls = report.get("repeat_wall_ms", [report["wall_ms"]])
    phases = dict(report["evaluation"].get("phase_ms", {}))
    phases["compile"] = report["compile"]["ms"]
    phases["worker_round_trip"] = report["worker"].get("evaluate_ms")
    summary = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "triton": triton.__version__,
        "card": card["key"],
        "evaluator": {"method": timing["method"], "candidate_us": timing["candidate"]["median_us"],
                      "eager_us": timing["eager"]["median_us"], "speedup": timing["speedup"],
                      "fraction_of_copy_bandwidth": report["evaluation"]["bandwidth"].get("fraction_of_copy")},
        "do_bench": {"candidate_us": candidate_ms * 1000, "eager_us": eager_ms * 1000},
        "wall_ms_per_candidate": walls, "median_wall_ms": statistics.median(walls),
        "last_run_phase_ms": phases,
    }
    cand_diff = abs(summary["evaluator"]["candidate_us"] / summary["do_bench"]["candidate_us"] - 1)
    eager_diff = abs(summary["evaluator"]["eager_us"] / summary["do_bench"]["eager_us"] - 1)
    summary["disagreement"] = {"candidate": cand_diff, "eager": eager_diff}
    with open(os.path.join(args.out, "evaluator_crosscheck.json"), "w") as f:
        json.dump(summary, f, indent=2)

    e, d = summary["evaluator"], summary["do_bench"]
    print(f"## Evaluator cross-check on {summary['gpu']} ({summary['date']}), torch {summary['torch']}, triton {summary['triton']}")
    print(f"card: {card['key']}")
    print("| kernel | evaluator median us | do_bench median us | disagreement |")
    print("|---|---|---|---|")
    print(f"| candidate softmax_rows | {e['candidate_us']:.2f} | {d['candidate_us']:.2f} | {cand_diff * 100:.1f}% |")
    print(f"| eager torch.softmax | {e['eager_us']:.2f} | {d['eager_us']:.2f} | {eager_diff * 100:.1f}% |")
    print(f"evaluator method: {e['method']}; paired speedup {e['speedup']:.3f}x; "
          f"candidate at {100 * (e['fraction_of_copy_bandwidth'] or 0):.0f}% of measured copy bandwidth")
    print(f"compile + validate + time per candidate, warm worker, no compile cache: median "
          f"{summary['median_wall_ms']:.0f} ms over {len(walls)} runs ({', '.join(f'{w:.0f}' for w in walls)})")
    print("last run phases (ms): " + ", ".join(f"{k} {v:.0f}" for k, v in phases.items() if v is not None))
    ok = cand_diff <= 0.10 and eager_diff <= 0.10 and summary["median_wall_ms"] < 500
    print("goals (within 10%, under 500 ms):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
