"""Fills a suite result's missing torch.compile numbers from a baselines pass of the same model.

A baselines pass (bench/suite.py --baselines-from; "kind": "baselines") times eager and
torch.compile alone, per card and end to end, on another day or machine than the run whose
Kernel Forge numbers the report shows. Absolute times from two passes are not compared: every
torch.compile speedup is taken against the eager time of its own pass, and Kernel Forge against
torch.compile is the ratio of the two speedups over eager. Only numbers the run lacks are filled:
the whole torch.compile timing of a card or of the model end to end, or only its GPU time
(device_time_us, model_device_time_ms) for runs from before that was measured; a measured number
(or a recorded compile error) is never replaced.
An earlier suite run of the same model can fill the same way (report.py: a run with
--no-compile replacing one that measured torch.compile), its source then "earlier run".
Every filled number is marked ("compile_source" or "compile_device_source": "baselines" or
"earlier run") and the result records where they came from ("baselines", with its "source").
Plain Python: no torch, no GPU.
"""
import copy

from speedups import device_speedups


def _fill_card(card, base, source):
    """Copies what `card` lacks of base's torch.compile timing: the whole timing (per call and GPU
    time), or only the GPU time (runs from before device_time_us). Returns whether it copied."""
    base_db = base.get("do_bench") or {}
    compiled = base_db.get("compile") or {}
    base_eager, base_eager_device = base_db.get("eager_us"), base_db.get("eager_device_us")
    db = card.setdefault("do_bench", {})
    speedups = card.setdefault("speedups", {})
    if not db.get("compile"):
        if not compiled.get("us") or not base_eager:
            return False
        db["compile"] = dict(compiled, eager_us_same_pass=base_eager, eager_device_us_same_pass=base_eager_device)
        card["compile_source"] = source
        speedups["compile_vs_eager"] = base_eager / compiled["us"]
        if speedups.get("candidate_vs_eager"):
            speedups["candidate_vs_compile"] = speedups["candidate_vs_eager"] / speedups["compile_vs_eager"]
        base_bandwidth = (base.get("bandwidth") or {}).get("compile")
        if base_bandwidth:
            card.setdefault("bandwidth", {})["compile"] = base_bandwidth
    elif not db["compile"].get("device_us") and compiled.get("device_us") and base_eager_device:
        db["compile"]["device_us"] = compiled["device_us"]
        db["compile"]["eager_device_us_same_pass"] = base_eager_device
        card["compile_device_source"] = source
    else:
        return False
    # GPU time: torch.compile against the eager time of the baselines pass; Kernel Forge through
    # the evaluator's speedup (this run's cubin and that pass's torch.compile never shared a pass).
    speedups.update(device_speedups(base_eager_device, compiled.get("device_us"), None,
                                    (card.get("evaluator") or {}).get("speedup")))
    return True


def fill_compile(result, baselines, source="baselines"):
    """A copy of `result` with its missing torch.compile numbers taken from `baselines` (same model):
    a baselines pass, or an earlier suite run of the model (source "earlier run")."""
    if baselines.get("model") != result.get("model"):
        raise ValueError(f"baselines of {baselines.get('model')} cannot fill {result.get('model')}")
    result = copy.deepcopy(result)
    base_cards = {card["id"]: card for card in baselines.get("cards", [])}
    filled_cards = 0
    for card in result.get("cards", []):
        base = base_cards.get(card["id"])
        if base is not None and _fill_card(card, base, source):
            filled_cards += 1

    e2e = result.setdefault("end_to_end", {})
    base_e2e = baselines.get("end_to_end") or {}
    base_eager = (base_e2e.get("eager") or {}).get("ms")
    base_compile = base_e2e.get("compile") or {}
    filled_e2e = False
    base_eager_device = (base_e2e.get("eager") or {}).get("device_ms")
    summary = result.setdefault("summary", {}).setdefault("end_to_end", {})
    if not e2e.get("compile") and base_compile.get("ms") and base_eager:
        e2e["compile"] = dict(base_compile, eager_ms_same_pass=base_eager, eager_device_ms_same_pass=base_eager_device,
                              source=source)
        summary["compile_ms"] = base_compile["ms"]
        summary["compile_speedup_vs_eager"] = base_eager / base_compile["ms"]
        summary["compile_source"] = source
        result["missing"] = [m for m in result.get("missing", []) if m != "end to end compile"]
        filled_e2e = True
    elif (e2e.get("compile") or {}).get("ms") and not e2e["compile"].get("device_ms"):
        # A run from before the end-to-end GPU time: its per-call number stays, the GPU time is the pass's.
        if base_compile.get("device_ms") and base_eager_device:
            e2e["compile"]["device_source"] = source
            summary["compile_device_source"] = source
            filled_e2e = True
    if filled_e2e and base_compile.get("device_ms") and base_eager_device:
        summary["compile_device_ms"] = base_compile["device_ms"]
        summary["compile_device_speedup_vs_eager"] = base_eager_device / base_compile["device_ms"]

    if filled_cards or filled_e2e:
        environment = baselines.get("environment") or {}
        result["baselines"] = {
            "source": source, "date": environment.get("date"), "commit": environment.get("commit"),
            "uncommitted_changes": environment.get("uncommitted_changes"),
            "commands": [i["command"] for i in baselines.get("invocations", []) if i.get("command")],
            "cards_filled": filled_cards, "end_to_end_filled": filled_e2e, "eager_ms": base_eager,
            "missing": baselines.get("missing", []),
        }
    return result
