#!/usr/bin/env python3
"""Turns the issue-7 suite's results (bench/suite.py: OUT/MODEL/result.json, or the copies that
--publish wrote as MODEL.json) into a dated markdown report, two CSV files and a PNG chart.

Written to --out-dir (bench/results/ by default):
  DATE-suite-GPU.md            machine, versions, exact commands, per-model summary, the paper's
                               headline per-op speedups next to ours, every searched card, flags
  DATE-suite-GPU-cards.csv     one row per searched card (every card that was searched)
  DATE-suite-GPU-models.csv    one row per model
  DATE-suite-GPU-speedups.png  per-card speedups over eager (Kernel Forge and torch.compile, by GPU
                               time where torch.compile has it, else both by do_bench per call);
                               needs matplotlib, otherwise skipped with a message

Plain Python (no torch, no GPU): runs wherever the JSON files are.

Several runs make one report: the last input holding a model's result gives its row, and a
baselines pass among the inputs (bench/suite.py --baselines-from) fills that result's missing
torch.compile numbers, marked with a dagger (bench/report_baselines.py). Where no baselines pass
does, the newest earlier run of the model that measured torch.compile fills them the same way
(a rerun with --no-compile keeps the torch.compile column, marked).

Usage: report.py RESULT.json|DIR ... [--out-dir bench/results] [--date YYYY-MM-DD] [--suffix run2]
"""
import argparse
import csv
import glob
import json
import os
import re
import statistics
import sys

from report_baselines import fill_compile

FORMAT = "kforge-suite-result"
LIMIT = 0.10  # evaluator vs do_bench disagreement flagged beyond this (as in card_bench.py)
BASELINE_MARK = " †"  # a torch.compile number from a separate pass (baselines or an earlier run)
HOST_BOUND_FRACTION = 0.9  # a .cast whose host enqueue reaches this share of its GPU time is marked host-bound
NOISY_SPREAD = 0.10  # eager rounds of the in-process .cast measurement spreading wider than this are marked noisy

# The Kernel Forge paper's headline per-op speedups over eager (GB10 GPU, LLM proposer, 50
# iterations per op), and the suite models of the same family.
PAPER = [
    ("adaptive_avg_pool2d", ("aten::adaptive_avg_pool2d",), 1.52, "ResNet-50", ("resnet50_",)),
    ("group_norm", ("aten::group_norm",), 1.70, "Stable Diffusion 3.5 Medium", ("sd_",)),
    ("softmax", ("aten::softmax.int", "aten::_softmax"), 2.83, "Gemma 4 E2B", ("gemma_",)),
    ("softmax", ("aten::softmax.int", "aten::_softmax"), 1.54, "Qwen 3.5 35B-A3B", ("qwen_",)),
]
_DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "int64": "i64", "int32": "i32",
           "bool": "bool", "uint8": "u8"}


def load_results(paths):
    """{model: result}, in the suite's order; a later file of the same model replaces an earlier one.
    Baselines passes (suite.py --baselines-from) among the inputs fill their model's missing
    torch.compile numbers (bench/report_baselines.py); where none did, the newest replaced run of the
    model that has them does."""
    results, baselines, earlier = {}, {}, {}
    for path in paths:
        if not os.path.exists(path):
            raise ValueError(f"{path}: no such file or folder")
        files = sorted(glob.glob(os.path.join(path, "*.json")) + glob.glob(os.path.join(path, "*", "result.json"))) \
            if os.path.isdir(path) else [path]
        for file in files:
            try:
                with open(file) as f:
                    data = json.load(f)
            except json.JSONDecodeError as e:
                raise ValueError(f"{file}: not valid JSON ({e})")
            if isinstance(data, dict) and data.get("format") == FORMAT:
                if data.get("kind") == "baselines":
                    baselines[data["model"]] = data
                else:
                    if data["model"] in results:
                        earlier.setdefault(data["model"], []).append(results[data["model"]])
                    results[data["model"]] = data
    for model, base in baselines.items():
        if model in results:
            results[model] = fill_compile(results[model], base)
        else:
            print(f"report: baselines of {model} ignored: no suite result of {model} among the inputs", file=sys.stderr)
    # A run without torch.compile (suite.py --no-compile) that replaced one with it keeps that run's
    # torch.compile numbers, marked, where no baselines pass gave them: the newest such run.
    for model, runs in earlier.items():
        if results[model].get("baselines"):
            continue
        for run in reversed(runs):
            filled = fill_compile(results[model], run, source="earlier run")
            if filled.get("baselines"):
                results[model] = filled
                break
    return dict(sorted(results.items(), key=lambda kv: (kv[1].get("order", 99), kv[0])))


def short_key(key):
    """'softmax.int bf16[4,8,512,512]' from a card key; '(strided)' when the first tensor is not
    contiguous."""
    op = key.split("(", 1)[0].replace("aten::", "")
    m = re.search(r"tensor(?:-list)?:\(([a-z0-9]+)\[([\d,]*)\]\{([\d,]*)\}", key)
    if not m:
        return op
    sizes = [int(s) for s in m[2].split(",") if s]
    strides = [int(s) for s in m[3].split(",") if s]
    expected, contiguous = 1, True
    for size, stride in reversed(list(zip(sizes, strides))):
        if size != 1 and stride != expected:
            contiguous = False
        expected *= size
    return f"{op} {_DTYPES.get(m[1], m[1])}[{m[2]}]" + ("" if contiguous else " (strided)")


def fmt(value, pattern="{:.2f}", missing="-"):
    return missing if value is None else pattern.format(value)


def pct(value, digits=0):
    return "-" if value is None else f"{value * 100:.{digits}f}%"


def card_numbers(card):
    """The numbers of one searched card that the tables and CSV show, None where absent."""
    ev = card.get("evaluator") or {}
    db = card.get("do_bench") or {}
    cand = db.get("candidate") or {}
    comp = db.get("compile") or {}
    bw = card.get("bandwidth") or {}
    sp = card.get("speedups") or {}
    dis = card.get("disagreement") or {}
    exp = card.get("export") or {}
    return {
        "card": card["id"], "op": card.get("op"), "shape": short_key(card.get("key", card.get("op", ""))),
        "time_share": card.get("time_share"), "calls": card.get("call_count"),
        "eager_us": db.get("eager_us"), "compile_us": comp.get("us"), "kf_us": cand.get("us"),
        "kf_vs_eager": sp.get("candidate_vs_eager"), "compile_vs_eager": sp.get("compile_vs_eager"),
        "kf_vs_compile": sp.get("candidate_vs_compile"),
        "eager_device_us": db.get("eager_device_us") or comp.get("eager_device_us_same_pass"),
        "compile_device_us": comp.get("device_us"), "kf_device_us": cand.get("device_us"),
        "compile_vs_eager_device": sp.get("compile_vs_eager_device"),
        "kf_vs_compile_device": sp.get("candidate_vs_compile_device"),
        "compile_device_source": card.get("compile_device_source") or card.get("compile_source") or "",
        "evaluator_kf_us": ev.get("median_us"), "evaluator_eager_us": ev.get("eager_us"),
        "evaluator_speedup": ev.get("speedup"),
        "disagreement_kf": dis.get("candidate"), "disagreement_eager": dis.get("eager"),
        "disagreement_speedup": dis.get("speedup"),
        "kf_gb_per_s": (bw.get("candidate") or {}).get("gb_per_s"),
        "kf_fraction_of_copy": (bw.get("candidate") or {}).get("fraction_of_copy"),
        "eager_fraction_of_copy": (bw.get("eager") or {}).get("fraction_of_copy"),
        "best_node": ev.get("best_id"), "best_iteration": ev.get("iteration"), "nodes": card.get("nodes"),
        "optimize_wall_s": (card.get("optimize") or {}).get("wall_s"),
        "export": exp.get("decision"), "export_reason": exp.get("reason"),
        "compile_s": comp.get("compile_s"), "compile_source": card.get("compile_source") or "",
        "flags": ",".join(card.get("flagged") or []),
        "errors": "; ".join(e for e in (card.get("error"), cand.get("error"), comp.get("error")) if e),
        "no_kernel": card.get("no_best_reason"),
        "inputs": card.get("inputs"), "measured": card.get("measured", True),
    }


def cast_rounds(result):
    """The alternating eager / .cast rounds of the in-process .cast measurement ({} without)."""
    return (((result.get("end_to_end") or {}).get("cast_runtime") or {}).get("rounds") or {})


def model_numbers(result):
    s = result["summary"]
    e2e = s.get("end_to_end", {})
    return {
        "model": result["model"], "cards": s["cards_total"], "vendor_backed": s["cards_vendor_backed"],
        "searched": s["cards_searched"], "faster_evaluator": s["faster_than_eager"]["evaluator"],
        "faster_do_bench": s["faster_than_eager"]["do_bench"], "exported": s["faster_than_eager"]["exported"],
        "share_searched": s["time_share"]["searched"], "share_exported": s["time_share"]["exported"],
        "predicted_speedup": s.get("predicted_speedup_from_shares"),
        "eager_ms": e2e.get("eager_ms"), "cast_ms": e2e.get("cast_runtime_ms"),
        "cast_speedup": e2e.get("cast_runtime_speedup_vs_eager"), "cast_eager_ms": e2e.get("cast_runtime_eager_ms"),
        "cast_eager_rounds_ms": cast_rounds(result).get("eager_ms"),
        "cast_host_rounds_ms": cast_rounds(result).get("cast_host_ms"),
        "cast_device_rounds_ms": cast_rounds(result).get("cast_device_ms"),
        "backend_ms": e2e.get("cast_backend_ms"), "backend_speedup": e2e.get("cast_backend_speedup_vs_eager"),
        "backend_eager_ms": e2e.get("cast_backend_eager_ms"), "backend_device_ms": e2e.get("cast_backend_device_ms"),
        "backend_device_speedup": e2e.get("cast_backend_device_speedup_vs_eager"),
        "compile_ms": e2e.get("compile_ms"),
        "compile_speedup": e2e.get("compile_speedup_vs_eager"), "compile_source": e2e.get("compile_source") or "",
        "kforge_run_eager_ms": e2e.get("kforge_run_eager_ms"), "kforge_run_cast_ms": e2e.get("kforge_run_cast_ms"),
        "kforge_run_speedup": e2e.get("kforge_run_speedup"),
        "kforge_run_eager_gpu_ms": e2e.get("kforge_run_eager_gpu_ms"),
        "kforge_run_cast_gpu_ms": e2e.get("kforge_run_cast_gpu_ms"),
        "eager_device_ms": e2e.get("eager_device_ms"), "cast_device_ms": e2e.get("cast_runtime_device_ms"),
        "cast_device_speedup": e2e.get("cast_runtime_device_speedup_vs_eager"),
        "compile_device_ms": e2e.get("compile_device_ms"),
        "compile_device_source": e2e.get("compile_device_source") or "",
        "compile_device_speedup": e2e.get("compile_device_speedup_vs_eager"),
        "optimization_wall_s": s.get("optimization_wall_s"),
        "flagged_cards": s.get("flagged_cards"), "missing": "; ".join(result.get("missing") or []),
    }


def headline_rows(results):
    rows = []
    for op_name, ops, paper, paper_model, prefixes in PAPER:
        models = [m for m in results if m.startswith(prefixes)]
        if not models:
            rows.append((op_name, paper_model, paper, "(not run)", "-", "-", "-", "-", "-"))
        for model in models:
            result = results[model]
            cards = [c for c in result["cards"] if c.get("op") in ops]
            if not cards:
                skipped = [c for c in result.get("not_searched", []) if c.get("op") in ops]
                why = f"not searched: {skipped[0]['reason']}" if skipped else "no such card captured"
                rows.append((op_name, paper_model, paper, model, why, "-", "-", "-", "-"))
                continue
            for card in sorted(cards, key=lambda c: -(c.get("time_share") or 0)):
                n = card_numbers(card)
                rows.append((op_name, paper_model, paper, model, n["shape"], fmt(n["evaluator_speedup"], "{:.2f}x"),
                             fmt(n["kf_vs_eager"], "{:.2f}x"),
                             f"{fmt(n['kf_vs_compile'], '{:.2f}x')} / {fmt(n['kf_vs_compile_device'], '{:.2f}x')}",
                             n["export"] or "-"))
    return rows


def environment_lines(results):
    envs = [r["environment"] for r in results.values() if r.get("environment")]
    env = max(envs, key=lambda e: e.get("date", "")) if envs else {}
    lines = [
        f"- GPU: {env.get('gpu')} ({env.get('capability')}), driver {env.get('driver')}, {env.get('cpus')} CPU cores",
        f"- Versions: torch {env.get('torch')}, CUDA {env.get('cuda')}, cuDNN {env.get('cudnn')}, triton "
        f"{env.get('triton')}, torchvision {env.get('torchvision')}, transformers {env.get('transformers')}, "
        f"Python {env.get('python')}, {env.get('kforge')}",
    ]
    commits = {}
    for model, result in results.items():
        e = result.get("environment") or {}
        label = f"{e.get('commit')}" + (" (with uncommitted changes)" if e.get("uncommitted_changes") else "")
        commits.setdefault(label, []).append(model)
    if len(commits) == 1:
        lines.append(f"- Commit: {next(iter(commits))}")
    else:  # models measured by different trees (a report assembled from several suite runs)
        lines += [f"- Commit of {', '.join(models)}: {label}" for label, models in commits.items()]
    dates = sorted({e.get("date") for e in envs if e.get("date")})
    if len(dates) > 1:
        lines.append(f"- Results of invocations between {dates[0]} and {dates[-1]} (UTC)")
    settings = {}
    for model, result in results.items():
        label = ", ".join(f"{k} {v}" for k, v in (result.get("settings") or {}).items())
        settings.setdefault(label, []).append(model)
    if len(settings) == 1:
        lines.append(f"- Settings: {next(iter(settings))}")
    else:  # runs with different settings (e.g. one without torch.compile)
        lines += [f"- Settings of {', '.join(models)}: {label}" for label, models in settings.items()]
    return lines


def command_lines(results):
    lines, seen = [], set()
    for model, result in results.items():
        commands = [i["command"] for i in result.get("invocations", [])]
        commands.append((result.get("capture") or {}).get("command"))
        commands.extend(run["command"] for run in (result.get("optimize") or {}).get("runs", []))
        commands.append((result.get("export") or {}).get("command"))
        commands.append(((result.get("end_to_end") or {}).get("kforge_run") or {}).get("command"))
        commands.extend((result.get("baselines") or {}).get("commands", []))
        for command in commands:
            if command and command not in seen:
                seen.add(command)
                lines.append(f"  `{command}`")
    return lines


def cast_cell(n):
    """The in-process .cast time and speedup, after the eager time it alternated with (median of the
    rounds) where the run recorded rounds; a package without custom kernels registers nothing, so
    its time is eager's run again and no speedup is shown for it. Rounds whose eager times spread
    by more than NOISY_SPREAD are marked noisy with their range: the ratio is then within noise. A
    package whose host enqueue (median over the rounds) reaches HOST_BOUND_FRACTION of its GPU time
    is marked host-bound: its wall time is the host's, whatever its kernels do."""
    if not n["exported"] and n["cast_ms"] is not None:
        return f"{fmt(n['cast_ms'])} (no custom kernel)"
    paired = f"{fmt(n['cast_eager_ms'])} -> " if n["cast_eager_ms"] is not None else ""
    cell = f"{paired}{fmt(n['cast_ms'])} ({fmt(n['cast_speedup'], '{:.2f}x')})"
    rounds = n["cast_eager_rounds_ms"]
    if rounds and max(rounds) > min(rounds) * (1 + NOISY_SPREAD):
        cell += f", noisy: eager rounds {min(rounds):.2f}-{max(rounds):.2f}"
    host = [h for h in n.get("cast_host_rounds_ms") or [] if h is not None]
    gpu = [g for g in n.get("cast_device_rounds_ms") or [] if g is not None]
    if host and gpu and statistics.median(host) >= HOST_BOUND_FRACTION * statistics.median(gpu):
        cell += (f", host-bound: enqueue {statistics.median(host):.2f} ms for {statistics.median(gpu):.2f} ms "
                 "of GPU time")
    return cell


def device_cell(n):
    """End-to-end GPU time (host launch overhead hidden): eager / .cast / torch.compile, each speedup
    over eager after it; "-" where the run predates the measurement or it could not be isolated."""
    if n["eager_device_ms"] is None and n["cast_device_ms"] is None and n["compile_device_ms"] is None:
        return "-"

    def side(ms, speedup, mark=""):
        return fmt(ms) + (f" ({fmt(speedup, '{:.2f}x')}){mark}" if ms is not None else "")
    return " / ".join([fmt(n["eager_device_ms"]), side(n["cast_device_ms"], n["cast_device_speedup"]),
                       side(n["compile_device_ms"], n["compile_device_speedup"],
                            BASELINE_MARK if n["compile_source"] or n["compile_device_source"] else "")])


def backend_cell(n):
    """The .cast through torch.compile(backend=kforge_backend) (region kernels too): eager -> .cast
    wall ms of the same rounds (speedup), and its GPU time (speedup)."""
    if n["backend_ms"] is None:
        return "-"
    cell = f"{fmt(n['backend_eager_ms'])} -> {fmt(n['backend_ms'])} ({fmt(n['backend_speedup'], '{:.2f}x')})"
    if n["backend_device_ms"] is not None:
        cell += f", GPU time {fmt(n['backend_device_ms'])} ({fmt(n['backend_device_speedup'], '{:.2f}x')})"
    return cell


def kforge_run_cell(n):
    """`kforge run`'s wall times (eager -> .cast) and, where it isolated them, its GPU times."""
    cell = f"{fmt(n['kforge_run_eager_ms'])} -> {fmt(n['kforge_run_cast_ms'])}"
    if n.get("kforge_run_eager_gpu_ms") is not None and n.get("kforge_run_cast_gpu_ms") is not None:
        cell += f" (GPU time {fmt(n['kforge_run_eager_gpu_ms'])} -> {fmt(n['kforge_run_cast_gpu_ms'])})"
    return cell


def model_table(results):
    lines = ["| model | cards (searched / vendor / all) | faster than eager: evaluator / do_bench | exported kernels | "
             "model time searched / exported | eager ms (alone) | .cast in Python: eager -> .cast ms (speedup) | "
             ".cast via torch.compile(backend=kforge_backend) | kforge run eager -> .cast ms | "
             "torch.compile ms (speedup) | GPU time ms: eager / .cast / torch.compile | optimize wall s | "
             "flagged cards |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    totals = [0, 0, 0]
    for result in results.values():
        n = model_numbers(result)
        totals = [totals[0] + n["faster_evaluator"], totals[1] + n["faster_do_bench"], totals[2] + n["exported"]]
        lines.append(
            f"| {n['model']} | {n['searched']} / {n['vendor_backed']} / {n['cards']} | {n['faster_evaluator']} / "
            f"{n['faster_do_bench']} | {n['exported']} | {pct(n['share_searched'])} / {pct(n['share_exported'])} | "
            f"{fmt(n['eager_ms'])} | {cast_cell(n)} | {backend_cell(n)} | "
            f"{kforge_run_cell(n)} | {fmt(n['compile_ms'])} "
            f"({fmt(n['compile_speedup'], '{:.2f}x')}){BASELINE_MARK if n['compile_source'] else ''} | "
            f"{device_cell(n)} | {fmt(n['optimization_wall_s'], '{:.0f}')} | "
            f"{n['flagged_cards']} |")
    lines.append(f"| **all** | | **{totals[0]} / {totals[1]}** | **{totals[2]}** | | | | | | | | | |")
    return lines


def card_table(result):
    lines = ["| card | share | calls | eager us | torch.compile us | KF best kernel us | KF vs eager | compile vs eager | "
             "KF vs compile | GPU time: compile vs eager, KF vs compile | evaluator KF / eager us (speedup) | "
             "disagreement KF / eager | KF GB/s (of copy) | best at iteration | optimize s | export | flags |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for card in result["cards"]:
        n = card_numbers(card)
        flags = n["flags"] + (" not measured" if not n["measured"] else "")
        if n["no_kernel"]:
            flags = (flags + " " if flags else "") + "no kernel: " + n["no_kernel"][:120]
        if n["errors"]:
            flags = (flags + " " if flags else "") + "error: " + n["errors"][:120]
        lines.append(
            f"| {n['shape']} | {pct(n['time_share'], 1)} | {n['calls'] or '-'} | {fmt(n['eager_us'], '{:.1f}')} | "
            f"{fmt(n['compile_us'], '{:.1f}')}{BASELINE_MARK if n['compile_source'] else ''} | {fmt(n['kf_us'], '{:.1f}')} | "
            f"{fmt(n['kf_vs_eager'], '{:.2f}x')} | "
            f"{fmt(n['compile_vs_eager'], '{:.2f}x')} | {fmt(n['kf_vs_compile'], '{:.2f}x')} | "
            f"{fmt(n['compile_vs_eager_device'], '{:.2f}x')}, {fmt(n['kf_vs_compile_device'], '{:.2f}x')}"
            f"{BASELINE_MARK if n['compile_device_source'] and n['compile_vs_eager_device'] else ''} | "
            f"{fmt(n['evaluator_kf_us'], '{:.1f}')} / {fmt(n['evaluator_eager_us'], '{:.1f}')} "
            f"({fmt(n['evaluator_speedup'], '{:.2f}x')}) | {pct(n['disagreement_kf'])} / {pct(n['disagreement_eager'])} "
            f"| {fmt(n['kf_gb_per_s'], '{:.0f}')} ({pct(n['kf_fraction_of_copy'])}) | "
            f"{fmt(n['best_iteration'], '{}')} | {fmt(n['optimize_wall_s'], '{:.1f}')} | {n['export'] or '-'} | "
            f"{flags or '-'} |")
    return lines


def not_searched_lines(result):
    groups = {}
    for card in result.get("not_searched", []):
        key = (card["op"], card["reason"])
        count, share = groups.get(key, (0, 0.0))
        groups[key] = (count + 1, share + (card.get("time_share") or 0))
    return [f"- {op} x{count} ({pct(share, 1)} of model time): {reason}"
            for (op, reason), (count, share) in sorted(groups.items(), key=lambda kv: -kv[1][1])]


def baselines_line(result):
    """Where a result's filled-in torch.compile numbers came from, or nothing."""
    base = result.get("baselines")
    if not base:
        return []
    commit = (base.get("commit") or "?").split(" ", 1)[0][:12]
    what = [f"{base['cards_filled']} card(s)"] + (["end to end"] if base.get("end_to_end_filled") else [])
    source = ("an earlier run of this model (bench/suite.py with torch.compile; a later run without it replaced "
              "it here)" if base.get("source") == "earlier run" else
              "a separate baselines pass (bench/suite.py --baselines-from)")
    line = (f"- torch.compile numbers marked{BASELINE_MARK} ({' and '.join(what)}) come from {source} "
            f"of {base.get('date')}, commit {commit}"
            + (" with uncommitted changes" if base.get("uncommitted_changes") else "") +
            ": speedups over the eager time of that pass" +
            (f" (end to end eager there {base['eager_ms']:.2f} ms)" if base.get("eager_ms") else "") +
            "; KF vs compile is the ratio of the two speedups over eager")
    if base.get("missing"):
        line += f"; that pass lacks {'; '.join(base['missing'])}"
    return [line]


def sanitizer_timing_text(result):
    """Where the sanitizer gate's time went, from the per-tool step times kforge records: the
    kernels run now and reused, and the slowest tool run's start-up, evaluation and exit."""
    exports = [(card, card.get("export") or {}) for card in result["cards"]]
    checked = [(card, export["sanitizer_seconds"]) for card, export in exports if export.get("sanitizer_seconds")]
    reused = sum(1 for _, export in exports if export.get("sanitizer_reused"))
    if not checked and not reused:
        return ""
    runs = [(sum(steps.get(k) or 0 for k in ("start", "evaluate", "exit")), card, tool, steps)
            for card, tools in checked for tool, steps in tools.items()]
    text = f" Sanitizer gate: {len(checked)} kernel(s) run, {reused} reused"
    if runs:
        total, card, tool, steps = max(runs, key=lambda r: r[0])
        text += (f"; slowest tool run {tool} on {short_key(card.get('key', card.get('op', '')))}: {total:.0f} s "
                 f"(start {steps.get('start', 0):.0f} s, evaluate {steps.get('evaluate', 0):.0f} s, "
                 f"exit {steps.get('exit', 0):.0f} s)")
    return text + "."


def paired_rounds(rounds, measure):
    """"eager / .cast" per alternating round of one measure ("ms", "device_ms", "host_ms")."""
    return ", ".join(f"{fmt(e, '{:.2f}')} / {fmt(c, '{:.2f}')}"
                     for e, c in zip(rounds.get("eager_" + measure) or [], rounds.get("cast_" + measure) or []))


def end_to_end_lines(result):
    """Notes under a model's heading: optimize's note, each end-to-end measurement's output check,
    the runtime's kernel hits, where filled-in torch.compile numbers came from, and every error."""
    lines = []
    note = (result.get("optimize") or {}).get("note")
    if note:
        lines.append(f"- optimize: {note}")
    e2e = result.get("end_to_end") or {}
    for name, label in (("eager", "eager"), ("cast_runtime", ".cast in Python (libkforge_runtime)"),
                        ("cast_backend", ".cast via torch.compile(backend=kforge_backend)"),
                        ("kforge_run", "kforge run"), ("compile", "torch.compile")):
        piece = e2e.get(name)
        if not piece:
            continue
        if piece.get("error"):
            lines.append(f"- {label}: error: {piece['error']}")
            continue
        output = piece.get("output") or (piece.get("report") or {}).get("output")
        kernels = (piece.get("stats") or {}).get("kernels") or (piece.get("report") or {}).get("kernels")
        parts = []
        if output:
            parts.append(f"max abs diff vs eager {fmt(output.get('max_abs_diff'), '{:.3g}')}" +
                         (f" (outputs up to {fmt(output.get('reference_max_abs'), '{:.3g}')})"
                          if output.get("reference_max_abs") is not None else "") +
                         (f", within tolerance {output.get('within_tolerance')} ({output.get('tolerance')})"
                          if "within_tolerance" in output else ""))
        if kernels is not None:
            parts.append(f"{len(kernels)} kernels, {sum(k.get('hits') or 0 for k in kernels)} hits, "
                         f"{sum(k.get('fallbacks') or 0 for k in kernels)} fallbacks")
        rounds = piece.get("rounds")
        if rounds:
            parts.append("alternating rounds, eager / .cast ms: " + paired_rounds(rounds, "ms") +
                         f"; speedup {fmt(piece.get('speedup'), '{:.3f}')}x (median of the rounds' ratios)")
            if any(rounds.get("eager_device_ms") or []):
                parts.append("GPU time, eager / .cast ms: " + paired_rounds(rounds, "device_ms") +
                             f"; speedup {fmt(piece.get('device_speedup'), '{:.3f}')}x")
            if any(rounds.get("eager_host_ms") or []):
                parts.append("host enqueue of one forward, eager / .cast ms: " + paired_rounds(rounds, "host_ms") +
                             " (where it reaches the GPU time, the host sets the wall time)")
            for error in rounds.get("device_errors") or []:
                parts.append(f"GPU time not isolated ({error})")
        elif piece.get("eager_before_ms") is not None:
            parts.append(f"eager in the same process {fmt(piece['eager_before_ms'], '{:.2f}')} ms before loading, "
                         f"{fmt(piece.get('eager_after_ms'), '{:.2f}')} ms after unloading")
        if piece.get("compile_s") is not None:
            parts.append(f"first call (compile) {piece['compile_s']:.0f} s")
        report = piece.get("report") or {}
        if report.get("eager_gpu_ms"):
            parts.append(f"GPU time eager / .cast ms: {fmt(report['eager_gpu_ms'])} / {fmt(report.get('cast_gpu_ms'))}"
                         f" ({fmt(report.get('gpu_speedup'), '{:.2f}x')})")
        if report.get("gpu_time_note"):
            parts.append(report["gpu_time_note"])
        if piece.get("device_ms_error"):
            parts.append(f"GPU time not isolated ({piece['device_ms_error']})")
        if piece.get("host_ms") is not None:
            parts.append(f"GPU time {fmt(piece.get('device_ms'))} ms, host enqueue of one forward "
                         f"{fmt(piece['host_ms'])} ms")
        if parts:
            lines.append(f"- {label}{BASELINE_MARK if piece.get('source') else ''}: " + "; ".join(parts))
    lines += baselines_line(result)
    return lines + ([""] if lines else [])


def flagged_lines(results):
    lines = []
    for model, result in results.items():
        for card in result["cards"]:
            n = card_numbers(card)
            if n["flags"]:
                lines.append(f"- {model} {n['shape']}: {n['flags']}; evaluator KF {fmt(n['evaluator_kf_us'], '{:.1f}')} "
                             f"us vs do_bench {fmt(n['kf_us'], '{:.1f}')} us ({pct(n['disagreement_kf'], 1)}), eager "
                             f"{fmt(n['evaluator_eager_us'], '{:.1f}')} vs {fmt(n['eager_us'], '{:.1f}')} us "
                             f"({pct(n['disagreement_eager'], 1)}), speedup {pct(n['disagreement_speedup'], 1)}")
    return lines or ["- none"]


def write_markdown(path, results, date, gpu, files, argv):
    out = [f"# Kernel Forge on real models vs eager and torch.compile, {gpu} ({date})", ""]
    out += environment_lines(results)
    out += ["- Commands (suite invocations, then the kforge commands they ran; bench/suite.py):"]
    out += command_lines(results)
    out += [f"  report: `{argv}`", ""]
    out += ["## Per model", ""] + model_table(results) + [""]
    out += ["Faster than eager: the best node's speedup > 1.0 by the evaluator (paired, CUPTI) / by do_bench "
            "(the same cubin vs the eager ATen op). Exported: custom kernels in the .cast (speedup >= "
            "--min-speedup 1.05 and every export gate passed). Model time: the cards' share of the sum of per-card "
            "eager times at capture (each timed alone, L2 flushed), not a profile of the model. End to end: do_bench "
            "median of the eager nn.Module, of the same module with the .cast loaded through libkforge_runtime, and "
            "of torch.compile(mode='max-autotune-no-cudagraphs'); the .cast speedup is the median ratio over rounds "
            "that alternate eager and the loaded package in one process (where the run recorded them; the rounds "
            "are listed under each model), shown after the median eager time of those rounds, which can differ "
            "from eager timed alone when the host's speed drifts; rounds whose eager times spread by more than "
            f"{NOISY_SPREAD:.0%} are marked noisy (a host-bound model, where Python's launch speed sets the time), "
            f"and a .cast whose host enqueue of one forward reaches {HOST_BOUND_FRACTION:.0%} of its GPU time is "
            "marked host-bound. "
            "`kforge run` times the TorchScript model (wall clock + synchronize), "
            "eager and the package alternating too. GPU time: the same forward passes with the host's launch "
            "overhead hidden (bench/card_bench.py model_device_time_ms: L2 flushed, the forward enqueued behind a "
            "GPU sleep, median), the kernels' time alone, which host drift does not move; the .cast's is the median "
            "over the same alternating rounds. Where the GPU time gains and the wall time does not, the host's "
            "launch speed sets the model's time." + (
                f" {BASELINE_MARK.strip()}: torch.compile measured by a separate pass (a baselines pass, or an earlier "
                "run of the model where the latest ran without torch.compile), against the eager time of that pass "
                "(see the model's section)." if any(r.get("baselines") for r in results.values()) else ""),
            ""]
    out += ["Per card, torch.compile is timed two ways. Per call (do_bench, like eager and the Kernel Forge "
            "cubin): for one small op this includes dynamo's guards and the compiled wrapper, tens of microseconds "
            "that a compiled model pays once per graph, not per op. GPU time (bench/card_bench.py device_time_us: "
            "the host's launch overhead hidden behind a GPU sleep, L2 flushed) compares the kernels alone; Kernel "
            "Forge against it goes through the evaluator's paired speedup (CUPTI kernel time), or the cubin's own GPU "
            "time where the same pass took it.", ""]
    out += ["## The paper's headline per-op speedups next to ours", "",
            "| op | paper model | paper speedup (GB10, LLM proposer) | our model | our card | evaluator | do_bench | "
            "vs torch.compile: per call / GPU time | exported |", "|---|---|---|---|---|---|---|---|---|"]
    out += [f"| {r[0]} | {r[1]} | {r[2]:.2f}x | " + " | ".join(str(x) for x in r[3:]) + " |"
            for r in headline_rows(results)]
    out += ["", "Ours: built-in proposer (no LLM), on the H200; the paper's: an LLM proposer on a GB10. Different "
            "GPUs and proposers: the comparison is of magnitude, not a like-for-like rerun.", ""]
    out += ["## Evaluator and do_bench disagreements over 10% (flagged, not hidden)", ""] + flagged_lines(results)
    out += ["", "do_bench times each launch with CUDA events, which add about 2 us per launch that the evaluator's "
            "kernel activity records do not contain: short kernels disagree most.", ""]
    for model, result in results.items():
        out += [f"## {model}", "", result.get("description", ""), ""]
        if result.get("missing"):
            out += [f"**Incomplete**: missing {'; '.join(result['missing'])}", ""]
        out += end_to_end_lines(result)
        check = (result.get("export") or {}).get("in_model_check")
        if check:
            out += [f"Export in-model check: run {check.get('run')}, passed {check.get('passed')}: "
                    f"{check.get('reason')}" + (f"; dropped {check.get('dropped')}" if check.get("dropped") else ""), ""]
        seconds = (result.get("export") or {}).get("seconds")
        if seconds:  # runs from before kforge export reported its phases have none
            out += [f"Export took {seconds['total']:.0f} s: sanitizer gate {seconds['sanitizer']:.0f} s, "
                    f"in-model check {seconds['in_model_check']:.0f} s." + sanitizer_timing_text(result), ""]
        out += [f"Every searched card ({len(result['cards'])}), by share of model time:", ""] + card_table(result)
        out += ["", "Not searched:"] + (not_searched_lines(result) or ["- none"]) + [""]
    out += ["## Files", ""] + [f"- {os.path.basename(f)}" for f in files if f]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def write_csv(path, rows):
    if not rows:
        return
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def write_chart(path, results):
    """Horizontal bars: per searched card, Kernel Forge and torch.compile speedup over eager."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"report: matplotlib is not installed: {os.path.basename(path)} not written", file=sys.stderr)
        return None
    numbers = [(model, card_numbers(card)) for model, result in results.items() for card in result["cards"]]
    # GPU time where torch.compile has it (its per-call time is mostly dynamo overhead on small ops):
    # Kernel Forge by the evaluator (CUPTI), torch.compile by device_time_us; else both per call.
    gpu_time = any(n["compile_vs_eager_device"] for _, n in numbers)
    kf_key, compile_key = ("evaluator_speedup", "compile_vs_eager_device") if gpu_time else ("kf_vs_eager",
                                                                                             "compile_vs_eager")
    labels, kf, compiled = [], [], []
    for model, n in numbers:
        if n[kf_key] is None and n[compile_key] is None:
            continue
        labels.append(f"{model}: {n['shape']}" + (" (no kernel)" if n[kf_key] is None else ""))
        kf.append(n[kf_key] or 0)
        compiled.append(n[compile_key] or 0)
    if not labels:
        print(f"report: no measured card: {os.path.basename(path)} not written", file=sys.stderr)
        return None
    fig, ax = plt.subplots(figsize=(11, 1.4 + 0.28 * len(labels)))
    y = list(range(len(labels)))
    ax.barh([i - 0.2 for i in y], kf, height=0.4, label="Kernel Forge best kernel", color="#1f77b4")
    ax.barh([i + 0.2 for i in y], compiled, height=0.4, label="torch.compile max-autotune", color="#ff7f0e")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("speedup over eager, GPU time (Kernel Forge: evaluator, CUPTI; torch.compile: kernels alone), "
                  "L2 flushed" if gpu_time else "speedup over eager (triton do_bench per call, L2 flushed, median)")
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncol=2, fontsize=8, frameon=False)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="+", help="result JSON files or folders holding them")
    parser.add_argument("--out-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    parser.add_argument("--date", help="date in the file names (default: the latest result's)")
    parser.add_argument("--suffix", default="", help="appended to the file names, for a second run on one date")
    args = parser.parse_args()
    try:
        results = load_results(args.inputs)
    except ValueError as e:
        print(f"report: error: {e}", file=sys.stderr)
        return 1
    if not results:
        print(f"report: error: no suite result (format {FORMAT}) in {', '.join(args.inputs)}", file=sys.stderr)
        return 1
    dates = sorted((r.get("environment") or {}).get("date", "") for r in results.values())
    date = args.date or (dates[-1][:10] if dates and dates[-1] else "undated")
    gpu_name = next(((r.get("environment") or {}).get("gpu") for r in results.values()), None) or "unknown GPU"
    slug = re.sub(r"[^a-z0-9]+", "-", gpu_name.lower().replace("nvidia", "")).strip("-") or "gpu"
    os.makedirs(args.out_dir, exist_ok=True)
    base = os.path.join(args.out_dir, f"{date}-suite-{slug}" + (f"-{args.suffix}" if args.suffix else ""))
    cards = [dict(model=m, **card_numbers(c)) for m, r in results.items() for c in r["cards"]]
    write_csv(base + "-cards.csv", cards)
    write_csv(base + "-models.csv", [model_numbers(r) for r in results.values()])
    chart = write_chart(base + "-speedups.png", results)
    argv = " ".join(["python3", "bench/report.py"] + sys.argv[1:])
    write_markdown(base + ".md", results, date, gpu_name, [base + "-cards.csv", base + "-models.csv", chart], argv)
    for path in (base + ".md", base + "-cards.csv", base + "-models.csv", chart):
        if path:
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
