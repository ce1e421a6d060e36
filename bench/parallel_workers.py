#!/usr/bin/env python3
"""Issue 8 on one GPU: a pool of one worker, and two workers sharing that GPU (correctness only:
they take turns, so their throughput is not a scaling number).

For a one-op softmax bf16 [8,8,512,512] model: capture once, then `kforge optimize --iterations N`
with `--gpus 0` and with `--gpus 0,0` (fresh copies of the project), and report per run: nodes,
statuses (none may be in flight or abandoned), distinct candidates, the best speedup, the workers'
line (candidates per GPU) and candidates per minute.

Usage: parallel_workers.py --kforge build/cli/kforge --out DIR [--iterations 30]
Exit 0 when both runs completed with every node judged and no candidate proposed twice.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tools"))

import torch  # noqa: E402


class Softmax(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def run(cmd, what):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{what} failed ({result.returncode}): {result.stderr.strip()[-2000:]}")
    return result.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--iterations", type=int, default=30)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("parallel_workers: no CUDA device")
    from kforge_export import export_for_kforge
    os.makedirs(args.out, exist_ok=True)
    x = torch.randn(8, 8, 512, 512, device="cuda", dtype=torch.bfloat16)
    model, inputs = os.path.join(args.out, "model.pt"), os.path.join(args.out, "inputs.pt")
    export_for_kforge(Softmax().cuda().eval(), (x,), model, inputs)
    base = os.path.join(args.out, "captured")
    run([args.kforge, "capture", model, "--inputs", inputs, "-o", base, "--samples", "1", "--quiet"], "capture")
    ok = True
    print(f"| --gpus | nodes | statuses | distinct candidates | best speedup | workers | candidates/min |")
    print("|---|---|---|---|---|---|---|")
    for gpus in ("0", "0,0"):
        project = os.path.join(args.out, "gpus-" + gpus.replace(",", "-"))
        shutil.copytree(base, project)
        started = time.monotonic()
        out = run([args.kforge, "optimize", project, "--iterations", str(args.iterations), "--seed", "1",
                   "--gpus", gpus], f"optimize --gpus {gpus}")
        wall = time.monotonic() - started
        card = json.loads(run([args.kforge, "cards", project, "--json"], "cards"))["cards"][0]["id"]
        tree = json.loads(run([args.kforge, "tree", project, "--card", card, "--json"], "tree"))
        nodes = tree["nodes"]
        statuses = {}
        for node in nodes:
            statuses[node["status"]] = statuses.get(node["status"], 0) + 1
        distinct = len({node["candidate"]["source"] for node in nodes})
        speedups = [node["speedup"] for node in nodes if node.get("speedup")]
        workers = re.search(r"workers:(.*)", out)
        rate = re.search(r"= ([0-9.]+) per minute", out)
        per_minute = float(rate.group(1)) if rate else len(nodes) * 60.0 / wall
        print(f"| {gpus} | {len(nodes)} | {statuses} | {distinct} | {max(speedups) if speedups else 0:.2f}x | "
              f"{workers.group(1).strip() if workers else 'one worker'} | {per_minute:.0f} |")
        exhausted = "the search space is exhausted" in out  # fewer nodes: every reachable candidate made
        if ((len(nodes) != args.iterations and not exhausted) or distinct != len(nodes) or
                any(s in statuses for s in ("pending", "compiling", "evaluating", "abandoned"))):
            ok = False
            print(f"  --gpus {gpus}: FAILED (expected {args.iterations} judged, distinct nodes)")
    for name in os.listdir(args.out):  # keep the trees, drop the bulky samples and models
        shutil.rmtree(os.path.join(args.out, name, "samples"), ignore_errors=True)
    for name in ("model.pt", "inputs.pt"):
        os.remove(os.path.join(args.out, name))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
