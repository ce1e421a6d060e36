#!/usr/bin/env python3
"""Search throughput on big cards: candidates per minute, where each candidate's seconds go, and the
evaluator's peak GPU memory against the card's own bytes.

Each problem below is a one-op module traced to TorchScript, captured on the GPU and searched with
the built-in proposer for a fixed wall time (`kforge optimize --time-limit`). From the card's tree:
the nodes made, candidates per minute over the optimize run's wall time (worker start and the root
included), and per node the median of the compile, the evaluator's phases (loading the input sets
and eager references, validation, timing: the report's phase_ms) and the whole bench call
(wall_ms), beside the evaluator's peak allocated bytes as a multiple of one input set (the card's
inputs and eager's outputs).

Usage: search_throughput.py --kforge build/cli/kforge --out DIR [--seconds 60] [--only NAME,...]
Writes DIR/search-throughput.json and DIR/search-throughput.md. Exit 0 when every problem ran, 1
when one failed (recorded), 2 without a GPU or on a bad argument.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, ROOT)

import torch  # noqa: E402
from card_bench import one_line, run, run_each  # noqa: E402
from region_bench import OneOp, capture_module, fmt  # noqa: E402
from suite import environment  # noqa: E402

# name -> (module factory, input specs)
PROBLEMS = {
    "layer_norm_256mib_f32": (lambda: torch.nn.LayerNorm(1024), ["65536x1024:float32"]),
    "softmax_6gib_f32": (lambda: OneOp(lambda x: torch.softmax(x, dim=-1)), ["4096x393216:float32"]),
}


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def node_phases(node):
    """compile ms, evaluator phases (ms), bench wall ms and memory of one node's stored report."""
    details = node.get("evaluation_details") or {}
    evaluation = details.get("evaluation") or {}
    phases = evaluation.get("phase_ms") or {}
    memory = evaluation.get("device_memory") or {}
    sets = evaluation.get("input_sets") or {}
    return {"compile_ms": (details.get("compile") or {}).get("ms"),
            "inputs_ms": phases.get("inputs_and_references"), "validation_ms": phases.get("validation"),
            "timing_ms": phases.get("timing"), "wall_ms": details.get("wall_ms"),
            "peak_bytes": memory.get("peak_allocated_bytes"), "set_bytes": sets.get("set_bytes"),
            "resident": sets.get("resident"), "status": node.get("status")}


def bench_problem(name, args, env, workdir):
    factory, specs = PROBLEMS[name]
    project, cards = capture_module(name, factory, specs, args.kforge, env, workdir)
    if len(cards) != 1:
        raise RuntimeError(f"expected one card, the capture made {len(cards)}")
    card = cards[0]
    start = time.monotonic()
    optimize = run([args.kforge, "optimize", project, "--proposer", "builtin", "--iterations", "1000",
                    "--time-limit", str(args.seconds), "--cards", card["id"]], args.seconds + 600, env)
    wall_s = time.monotonic() - start
    if optimize.returncode != 0:
        raise RuntimeError("kforge optimize: " + one_line(optimize.stderr))
    tree = run([args.kforge, "tree", project, "--card", card["id"], "--json"], 120, env)
    if tree.returncode != 0:
        raise RuntimeError("kforge tree: " + one_line(tree.stderr))
    nodes = json.loads(tree.stdout)["nodes"]
    phases = [node_phases(n) for n in nodes]
    statuses = {}
    for p in phases:
        statuses[p["status"]] = statuses.get(p["status"], 0) + 1
    peaks = [p["peak_bytes"] / p["set_bytes"] for p in phases if p["peak_bytes"] and p["set_bytes"]]
    return {"problem": name, "inputs_spec": specs, "card": card["id"], "op": card.get("op"),
            "optimize_wall_s": wall_s, "nodes": len(nodes), "statuses": statuses,
            "candidates_per_minute": 60.0 * len(nodes) / wall_s if wall_s > 0 else None,
            "median": {k: median([p[k] for p in phases]) for k in
                       ("compile_ms", "inputs_ms", "validation_ms", "timing_ms", "wall_ms")},
            "set_bytes": next((p["set_bytes"] for p in phases if p["set_bytes"]), None),
            "resident": next((p["resident"] for p in phases if p["resident"] is not None), None),
            "peak_over_set": max(peaks) if peaks else None,
            "first_failure": next((one_line(n.get("failure_reason", ""), 300) for n in nodes
                                   if n.get("failure_reason")), None)}


def markdown(info, rows, errors):
    lines = ["# Search throughput on big cards", "",
             "Environment: " + ", ".join(f"{k} {v}" for k, v in info.items()), "",
             "Per node, medians in ms: the compile, the evaluator's phases (input sets and eager references, "
             "validation, timing) and the whole bench call. Peak: the evaluator's peak allocated bytes over one "
             "input set's (inputs + eager outputs).", "",
             "| problem | inputs | set GiB | resident | nodes | optimize s | candidates/min | compile | inputs | "
             "validation | timing | bench call | peak / set |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        m = r["median"]
        set_gib = r["set_bytes"] / 2**30 if r["set_bytes"] else None
        lines.append(f"| {r['problem']} | {' '.join(r['inputs_spec'])} | {fmt(set_gib, '{:.2f}')} | {r['resident']} | "
                     f"{r['nodes']} | {fmt(r['optimize_wall_s'])} | {fmt(r['candidates_per_minute'])} | "
                     f"{fmt(m['compile_ms'], '{:.0f}')} | {fmt(m['inputs_ms'], '{:.0f}')} | "
                     f"{fmt(m['validation_ms'], '{:.0f}')} | {fmt(m['timing_ms'], '{:.0f}')} | "
                     f"{fmt(m['wall_ms'], '{:.0f}')} | {fmt(r['peak_over_set'], '{:.2f}x')} |")
        if r.get("first_failure"):
            lines.append(f"|  | first failure: {r['first_failure']} |" + "  |" * 11)
    for name, error in errors.items():
        lines.append(f"| {name} | failed: {error} |" + "  |" * 11)
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seconds", type=int, default=60, help="search wall time per problem")
    parser.add_argument("--only", default=",".join(PROBLEMS))
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n]
    unknown = [n for n in names if n not in PROBLEMS]
    if unknown:
        print(f"search_throughput.py: unknown problem(s) {', '.join(unknown)} (known: {', '.join(PROBLEMS)})",
              file=sys.stderr)
        return 2
    if args.seconds <= 0:
        print("search_throughput.py: --seconds must be positive", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("search_throughput.py: no CUDA device", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    env = dict(os.environ)
    info = environment(args.kforge)
    rows, errors = [], {}

    def write_json(name, done):  # after each problem: a stopped run keeps its results
        with open(os.path.join(args.out, "search-throughput.json"), "w") as f:
            json.dump({"environment": info, "rows": rows, "errors": errors}, f, indent=1)

    with tempfile.TemporaryDirectory(prefix="kforge_search_throughput_") as workdir:
        run_each(names, "search_throughput", lambda name: rows.append(bench_problem(name, args, env, workdir)),
                 errors, write_json)
        write_json(None, names)
    text = markdown(info, rows, errors)
    with open(os.path.join(args.out, "search-throughput.md"), "w") as f:
        f.write(text)
    print(text)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
