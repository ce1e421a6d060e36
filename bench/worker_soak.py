#!/usr/bin/env python3
"""Soak: one warm worker evaluates the same card's candidate N times (each compiled anew); its
device memory must return to the same level after every candidate (issue: no growth over 1,000).

Reads the worker's per-evaluation device memory from `kforge bench --repeat N`:
allocated_bytes (PyTorch's live tensors: after the first evaluation only the card's kept inputs
remain, so it must be identical every time) and device_used_bytes (the driver's view, which also
holds PyTorch's cache and CUPTI's buffers: it may settle during the first evaluations and must
then stay flat). Exits 1 loudly on growth.

Usage: worker_soak.py --kforge build/cli/kforge --out DIR [--candidates 1000]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETTLE = 10                   # evaluations after which the driver's view must be flat
ALLOWED_DRIFT = 64 << 20      # bytes of device_used growth tolerated after settling


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--candidates", type=int, default=1000)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    project = os.path.join(args.out, "project")
    capture = subprocess.run([args.kforge, "capture", os.path.join(ROOT, "build", "tests", "models", "softmax_only.pt"),
                              "--inputs", "64x1000:bfloat16", "--device", "cuda", "--samples", "1", "-o", project,
                              "--quiet", "--json"], capture_output=True, text=True)
    if capture.returncode != 0:
        sys.exit(f"capture failed: {capture.stderr.strip()}")
    card = json.loads(capture.stdout)["cards"][0]["id"]
    bench = subprocess.run([args.kforge, "bench", project, "--card", card, "--kernel",
                            os.path.join(ROOT, "tests", "gpu", "kernels", "softmax_correct.cu"),
                            "--repeat", str(args.candidates), "--no-cache", "--repetitions", "5",
                            "--timeout", "600"], capture_output=True, text=True)
    if bench.returncode != 0:
        sys.exit(f"bench failed: {bench.stderr.strip()}")
    report = json.loads(bench.stdout)
    memory = report["repeat_device_memory"]
    walls = report["repeat_wall_ms"]
    allocated = [m["allocated_bytes"] for m in memory]
    used = [m["device_used_bytes"] for m in memory]
    allocated_steady = len(set(allocated[1:])) == 1
    used_drift = max(used[SETTLE:]) - used[SETTLE]
    summary = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
        "candidates": len(memory), "allocated_bytes_first": allocated[0], "allocated_bytes_after": sorted(set(allocated[1:])),
        "device_used_bytes_at_settle": used[SETTLE], "device_used_bytes_max_after": max(used[SETTLE:]),
        "device_used_drift_bytes": used_drift, "wall_ms_median": sorted(walls)[len(walls) // 2],
        "wall_ms_first_last": [walls[0], walls[-1]],
    }
    with open(os.path.join(args.out, "worker_soak.json"), "w") as f:
        json.dump(summary, f, indent=2)
    ok = allocated_steady and used_drift <= ALLOWED_DRIFT and len(memory) == args.candidates
    print(f"## Worker soak on {summary['gpu']} ({summary['date']}), torch {summary['torch']}")
    print(f"{summary['candidates']} candidates (each compiled anew, validated on 4 input sets, timed 5 cold + 20 warm reps) "
          f"through one worker")
    print(f"PyTorch allocated bytes: first {allocated[0]}, after every later candidate {summary['allocated_bytes_after']}")
    print(f"device used bytes: {used[SETTLE]} after {SETTLE} candidates, max {max(used[SETTLE:])} after that "
          f"(drift {used_drift} bytes, allowed {ALLOWED_DRIFT})")
    print(f"wall ms per candidate: median {summary['wall_ms_median']:.0f}, first {walls[0]:.0f}, last {walls[-1]:.0f}")
    print("no growth" if ok else "LEAK: device memory grew")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
