"""Speedup ratios shared by bench/card_bench.py (on a GPU) and bench/report_baselines.py
(anywhere): plain Python, no torch."""


def device_speedups(eager_device_us, compile_device_us, candidate_device_us=None, evaluator_speedup=None):
    """GPU-time speedups (device_time_us: no host launch overhead) of one measurement pass: torch.compile
    and the Kernel Forge cubin over eager, and Kernel Forge over torch.compile: the two cubins'
    times when both were taken in this pass, else the evaluator's paired speedup (CUPTI kernel time,
    L2 flushed) over torch.compile's speedup, ratios that combine across passes (a torch.compile
    timing from a baselines pass, bench/report_baselines.py)."""
    sp = {}
    if candidate_device_us and eager_device_us:
        sp["candidate_vs_eager_device"] = eager_device_us / candidate_device_us
    if compile_device_us and eager_device_us:
        sp["compile_vs_eager_device"] = eager_device_us / compile_device_us
        if candidate_device_us:
            sp["candidate_vs_compile_device"] = compile_device_us / candidate_device_us
        elif evaluator_speedup:
            sp["candidate_vs_compile_device"] = evaluator_speedup / sp["compile_vs_eager_device"]
    return sp
