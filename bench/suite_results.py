"""Assembles one model's result.json for the issue-7 suite from what its stages left in OUT/MODEL/.

bench/suite.py calls `assemble` at the end of every invocation; the file always lists what is
still missing, so a partial run is never mistaken for a complete one. Layout of OUT/MODEL/ (all written by
suite.py):

    capture.json            model export + `kforge capture --json` summary, or {"error"}
    project/                the kforge project (cards.json, samples/, search/<card id>/tree.json)
    optimize.json           {"runs": [one per `kforge optimize` invocation], "done"}
    export.json             `kforge export --json` report, or {"error"}
    measure/copy.json       device copy bandwidth by do_bench
    measure/cards/ID.json   bench/card_bench.measure_card of one searched card
    measure/e2e_*.json      end to end: eager, cast_runtime, cast_backend, kforge_run, compile
    baselines/cards/ID.json, baselines/e2e_{eager,compile}.json
                            suite.py --baselines-from: eager and torch.compile alone

result.json schema (format "kforge-suite-result", version 1): model, description, environment,
settings, invocations, capture, optimize, export, cards (every searched card), not_searched,
end_to_end, summary, missing. bench/report.py reads only these files.

A baselines result (suite.py --baselines-from; "kind": "baselines") has model, description,
environment, invocations, capture, card_ids (the earlier run's cards it was asked for), cards
(eager and torch.compile, per call and GPU time), end_to_end (eager, compile) and missing; bench/report.py
fills an earlier run's missing torch.compile numbers from it (bench/report_baselines.py).
"""
import json
import os

import card_bench

FORMAT = "kforge-suite-result"
VERSION = 1


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def write_json(path, data):
    """Atomic: a killed invocation never leaves a half-written piece that would count as done."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


def load_cards(project):
    data = read_json(os.path.join(project, "cards.json"))
    return data["cards"] if data else []


def searched_ids(project):
    search = os.path.join(project, "search")
    if not os.path.isdir(search):
        return set()
    return {d for d in os.listdir(search) if os.path.isfile(os.path.join(search, d, "tree.json"))}


def optimize_per_card(optimize):
    """Wall seconds and stop reasons per card id prefix, summed over every optimize invocation."""
    per_card = {}
    for run in (optimize or {}).get("runs", []):
        for line in run.get("cards", []):
            entry = per_card.setdefault(line["id8"], {"wall_s": 0.0, "stops": []})
            entry["wall_s"] += line["seconds"]
            entry["stops"].append(line["stop"])
    return per_card


def not_searched(cards, searched, optimize):
    """Every card without a search tree and why: vendor-backed, the proposer's refusal (kforge's
    'skip' lines), or not replayable."""
    reasons = {}
    for run in (optimize or {}).get("runs", []):
        for skip in run.get("skipped", []):
            reasons[skip["id8"]] = skip["reason"]
    rows = []
    for card in cards:
        if card["id"] in searched:
            continue
        reason = "vendor-backed (cuBLAS/cuDNN)" if card.get("vendor_backed") else reasons.get(card["id"][:8])
        rows.append({"id": card["id"], "op": card["op"] + ("." + card["overload"] if card.get("overload") else ""),
                     "key": card["key"], "time_share": card.get("time_share"), "vendor_backed": card.get("vendor_backed"),
                     "reason": reason or "not searched (optimize has not reached it)"})
    return rows


def sanitizer_timing(record):
    """{"sanitizer_reused": True} for a verdict reused from an earlier export, {"sanitizer_seconds":
    {tool: {"start", "evaluate", "exit"}}} for one run now (kforge records the steps' wall times
    since 2026-12-01), else {}."""
    if not isinstance(record, dict) or not record.get("checked"):
        return {}
    if record.get("reused"):
        return {"sanitizer_reused": True}
    seconds = {tool: result["seconds"] for tool, result in (record.get("tools") or {}).items()
               if isinstance(result, dict) and isinstance(result.get("seconds"), dict)}
    return {"sanitizer_seconds": seconds} if seconds else {}


def covered_share(rows, all_cards):
    """The model time the cards of `rows` cover, each call counted once. A region card's share is
    its members' calls, which their op cards hold too: summing shares would count those calls twice
    (a run read 134% of model time searched). So the calls are gathered (an op card's
    `call_positions`, a region card's `occurrences`) and each adds its op card's share per call.
    Cards without positions (results older than region cards): their shares summed."""
    per_call = {}
    for card in all_cards:
        positions = card.get("call_positions") or []
        if not card.get("region") and positions:
            for position in positions:
                per_call[position] = (card.get("time_share") or 0) / len(positions)
    if not per_call:
        return sum(r.get("time_share") or 0 for r in rows)
    ids = {r["id"] for r in rows}
    covered = set()
    for card in all_cards:
        if card["id"] not in ids:
            continue
        if card.get("region"):
            covered.update(p for occurrence in card["region"].get("occurrences") or [] for p in occurrence)
        else:
            covered.update(card.get("call_positions") or [])
    return sum(per_call.get(p, 0) for p in covered)


def summarize(cards, end_to_end, optimize, all_cards):
    def share(rows):
        return covered_share(rows, all_cards)

    evaluator_faster = [c for c in cards if ((c.get("evaluator") or {}).get("speedup") or 0) > 1.0]
    do_bench_faster = [c for c in cards if ((c.get("speedups") or {}).get("candidate_vs_eager") or 0) > 1.0]
    exported = [c for c in cards if (c.get("export") or {}).get("decision") == "custom"]
    # Amdahl over the capture's per-card (cold L2) time shares: the model speedup the exported
    # kernels predict if every card kept its share inside the model. A prediction, not a measurement.
    saved = sum((c.get("time_share") or 0) * (1 - 1 / c["evaluator"]["speedup"]) for c in exported
                if (c.get("evaluator") or {}).get("speedup"))
    e2e = {}
    eager = (end_to_end.get("eager") or {}).get("ms")
    eager_device = (end_to_end.get("eager") or {}).get("device_ms")
    for name in ("eager", "cast_runtime", "cast_backend", "compile"):
        piece = end_to_end.get(name) or {}
        ms = piece.get("ms")
        if ms:
            e2e[name + "_ms"] = ms
            if piece.get("speedup"):  # measured against eager alternating with it in one process
                e2e[name + "_speedup_vs_eager"] = piece["speedup"]
                e2e[name + "_eager_ms"] = piece.get("eager_ms")
            elif eager and name != "eager":
                e2e[name + "_speedup_vs_eager"] = eager / ms
        # GPU time (host launch overhead hidden): the model's kernels alone, which host drift
        # and Python's launch speed do not move.
        device_ms = piece.get("device_ms")
        if device_ms:
            e2e[name + "_device_ms"] = device_ms
            if piece.get("device_speedup"):
                e2e[name + "_device_speedup_vs_eager"] = piece["device_speedup"]
            elif eager_device and name != "eager":
                e2e[name + "_device_speedup_vs_eager"] = eager_device / device_ms
    run = end_to_end.get("kforge_run") or {}
    if run.get("report"):
        report = run["report"]
        e2e["kforge_run_eager_ms"] = (report.get("eager_ms") or {}).get("median")
        e2e["kforge_run_cast_ms"] = (report.get("cast_ms") or {}).get("median")
        e2e["kforge_run_speedup"] = report.get("speedup")
        e2e["kforge_run_eager_gpu_ms"] = report.get("eager_gpu_ms")
        e2e["kforge_run_cast_gpu_ms"] = report.get("cast_gpu_ms")
        e2e["kforge_run_gpu_speedup"] = report.get("gpu_speedup")
    runs = (optimize or {}).get("runs", [])
    return {
        "cards_total": len(all_cards),
        "cards_vendor_backed": sum(1 for c in all_cards if c.get("vendor_backed")),
        "cards_searched": len(cards),
        "faster_than_eager": {"evaluator": len(evaluator_faster), "do_bench": len(do_bench_faster),
                              "exported": len(exported)},
        "time_share": {"searched": share(cards), "evaluator_faster": share(evaluator_faster),
                       "exported": share(exported)},
        "predicted_speedup_from_shares": 1 / (1 - saved) if saved < 1 else None,
        "flagged_cards": sum(1 for c in cards if c.get("flagged")),
        "optimization_wall_s": sum(r.get("wall_s") or 0 for r in runs),
        "end_to_end": e2e,
    }


def assemble(model_dir, name, description, environment, settings, invocations):
    project = os.path.join(model_dir, "project")
    capture = read_json(os.path.join(model_dir, "capture.json"))
    optimize = read_json(os.path.join(model_dir, "optimize.json"))
    export = read_json(os.path.join(model_dir, "export.json"))
    all_cards = load_cards(project)
    searched = searched_ids(project)
    per_card_wall = optimize_per_card(optimize)
    decisions = {d["card"]: d for d in ((export or {}).get("report") or {}).get("cards", [])}
    missing = []
    cards = []
    for card in sorted((c for c in all_cards if c["id"] in searched), key=lambda c: -(c.get("time_share") or 0)):
        row = read_json(os.path.join(model_dir, "measure", "cards", card["id"] + ".json"))
        if row is None:
            tree = read_json(os.path.join(project, "search", card["id"], "tree.json")) or {"nodes": []}
            row, _ = card_bench.evaluator_summary(card, tree["nodes"])
            row["measured"] = False
            missing.append(f"measure card {card['id'][:8]} {row['op']}")
        decision = decisions.get(card["id"])
        if decision:
            row["export"] = {k: decision.get(k) for k in ("decision", "reason", "kernel", "speedup")}
            row["export"].update(sanitizer_timing(decision.get("sanitizer")))
        row["optimize"] = per_card_wall.get(card["id"][:8])
        cards.append(row)

    end_to_end = {}
    for piece in ("eager", "cast_runtime", "kforge_run", "compile"):
        data = read_json(os.path.join(model_dir, "measure", f"e2e_{piece}.json"))
        if data is None and (piece != "compile" or settings.get("torch_compile")):
            missing.append(f"end to end {piece}")
        end_to_end[piece] = data
    copy = read_json(os.path.join(model_dir, "measure", "copy.json"))
    missing[:0] = [stage for stage, done in (("capture", capture is not None),
                                             ("optimize", bool((optimize or {}).get("done"))),
                                             ("export", export is not None)) if not done]

    return {
        "format": FORMAT, "version": VERSION, "model": name, "description": description,
        "environment": environment, "settings": settings, "invocations": invocations,
        "capture": capture, "optimize": optimize,
        "export": {k: v for k, v in (export or {}).items() if k != "report"} | (
            {"custom": sum(1 for d in decisions.values() if d.get("decision") == "custom"),
             "fallback": sum(1 for d in decisions.values() if d.get("decision") != "custom"),
             "in_model_check": (export.get("report") or {}).get("in_model_check"),
             "notes": (export.get("report") or {}).get("notes"),
             "seconds": (export.get("report") or {}).get("seconds")} if export and export.get("report") else {}),
        "copy_gb_per_s": (copy or {}).get("gb_per_s"),
        "cards": cards, "not_searched": not_searched(all_cards, searched, optimize),
        "end_to_end": end_to_end,
        "summary": summarize(cards, end_to_end, optimize, all_cards),
        "missing": missing,
    }


def assemble_baselines(model_dir, name, description, environment, invocations, card_ids, end_to_end_skipped=False):
    """The result of a --baselines-from pass: the requested cards' eager and torch.compile rows
    (a card this capture did not produce, or not measured yet, is listed as missing), and end to
    end eager and torch.compile unless the earlier run had them (`end_to_end_skipped`)."""
    captured = {c["id"] for c in load_cards(os.path.join(model_dir, "project"))}
    capture = read_json(os.path.join(model_dir, "capture.json"))
    missing = [] if capture is not None else ["capture"]
    cards = []
    for card_id in card_ids:
        row = read_json(os.path.join(model_dir, "baselines", "cards", card_id + ".json"))
        if row is not None:
            cards.append(row)
        elif capture is not None and card_id not in captured:
            missing.append(f"card {card_id[:8]} (not in this capture)")
        else:
            missing.append(f"measure card {card_id[:8]}")
    end_to_end = {}
    for piece in ("eager", "compile"):
        end_to_end[piece] = read_json(os.path.join(model_dir, "baselines", f"e2e_{piece}.json"))
        if end_to_end[piece] is None and not end_to_end_skipped:
            missing.append(f"end to end {piece}")
    return {"format": FORMAT, "version": VERSION, "kind": "baselines", "model": name, "description": description,
            "environment": environment, "invocations": invocations, "capture": capture, "card_ids": card_ids,
            "cards": cards, "end_to_end": end_to_end, "missing": missing}
