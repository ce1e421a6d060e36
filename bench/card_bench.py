"""One operator card timed by one independent timer, shared by the benchmark scripts.

The timer is triton.testing.do_bench (CUDA events around each call, the L2 cache flushed by
zeroing a 256 MiB buffer before every repetition, median). For a card of a kforge project it
times, on the same inputs (the card's captured sample, else inputs synthesized from its sizes,
strides and dtypes):
  - eager: the card's ATen operator called directly (torch.ops.aten.OP.OVERLOAD);
  - the best node of its search tree: the node's cubin (`kforge bench --emit-cubin`) launched
    with bench/cubin_launch.py, after checking that its outputs match eager;
  - torch.compile(mode="max-autotune-no-cudagraphs", fullgraph=True) of a one-op function that
    calls the operator with the card's non-tensor arguments baked in.
Each is also timed on the GPU alone (device_time_us: the host's launch overhead hidden behind a
GPU sleep), which compares kernels where a per-call time would compare Python and dynamo overhead.

Needs a CUDA device, triton and cuda-python (cubin_launch). Callers add ROOT/tools and ROOT/bench
to sys.path (kforge_samples, cubin_launch).
"""
import json
import os
import statistics
import time
import traceback

import torch
from processes import run  # noqa: F401 - the scripts import it from here
from speedups import device_speedups

COMPILE_MODE = "max-autotune-no-cudagraphs"
DISAGREEMENT_LIMIT = 0.10  # evaluator vs do_bench beyond this is flagged in the report


def one_line(text, limit=400):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def run_each(names, tag, bench_one, errors, after_each=None):
    """Runs `bench_one(name)` for each name in turn, printing "TAG: NAME" first. A name whose run
    raises is recorded in `errors` (name -> one line; its traceback printed) and the others still run;
    `after_each(name, done)` runs after every name, failed or not, with the names done so far (to
    clean up, or to write the results so far with their errors, so that a stopped run keeps them)."""
    for k, name in enumerate(names):
        print(f"{tag}: {name}", flush=True)
        try:
            bench_one(name)
        except Exception as e:  # noqa: BLE001 - recorded; the other names still run
            traceback.print_exc()
            errors[name] = one_line(f"{type(e).__name__}: {e}")
        if after_each:
            after_each(name, names[:k + 1])


def qualified(card):
    return card["op"] + ("." + card["overload"] if card.get("overload") else "")


def to_cuda(value, device="cuda"):
    """`value` (a tensor, or lists and tuples of them) on `device` with its sizes and strides kept.

    Tensor.cuda() keeps strides only for a dense tensor: a captured slice (a decoder's
    rotate_half reads q[..., d/2:] of a transposed query) would arrive dense, and a kernel built
    for the card's strides would read the wrong elements."""
    if isinstance(value, torch.Tensor):
        try:
            return torch.empty_strided(value.size(), value.stride(), dtype=value.dtype, device=device).copy_(value)
        except RuntimeError:  # an overlapping layout (an expand's 0 strides) is not written element by element
            storage = value.untyped_storage().to(device=device)
            return torch.empty(0, dtype=value.dtype, device=device).set_(storage, value.storage_offset(), value.size(),
                                                                          value.stride())
    if isinstance(value, (list, tuple)):
        return type(value)(to_cuda(v, device) for v in value)
    return value


def aten_op(card):
    """The callable eager runs for a card: its ATen op, or for a fused-region card its chain."""
    if card.get("region"):
        return RegionChainOp(card)
    packet = getattr(torch.ops.aten, card["op"].split("::", 1)[1])
    return getattr(packet, card.get("overload") or "default")


def _captured_value(arg):
    """A non-tensor argument as the capture wrote it (floats that JSON cannot hold are strings)."""
    value = arg.get("value")
    if isinstance(value, str) and value in ("nan", "inf", "-inf") and "str" not in arg["type"]:
        return float(value)
    return _enum_arg(arg, value)


class RegionChainOp:
    """A region card's chain (docs/project-format.md, "Region cards") as one callable: the member ops
    in order, each reading the region's inputs (in0..) or earlier members' outputs, with their
    captured non-tensor arguments. `_schema.arguments` mimics an op's, so split_call and
    one_op_function treat it as one."""

    class _Argument:
        def __init__(self, name):
            self.name, self.kwarg_only = name, False

    class _Schema:
        def __init__(self, names):
            self.arguments = [RegionChainOp._Argument(n) for n in names]

    def __init__(self, card):
        self.chain = card["region"]
        self._schema = RegionChainOp._Schema([a["name"] for a in card["args"]])
        self.members = [aten_op(m) for m in self.chain["members"]]
        # Read from the schemas here, not in __call__: torch.compile traces __call__ and cannot
        # handle a FunctionSchema inside the traced code.
        self.keyword_names = [[a.name if a.kwarg_only else None for a in op._schema.arguments] for op in self.members]

    def __call__(self, *inputs):
        produced = []

        def source(s):
            return inputs[s["input"]] if "input" in s else produced[s["member"]][s.get("output", 0)]

        for member, op, names in zip(self.chain["members"], self.members, self.keyword_names):
            positional, keywords = [], {}
            for arg, sources, name in zip(member["args"], member["sources"], names):
                if arg["kind"] == "tensor":
                    value = source(sources[0])
                elif arg["kind"] == "tensor-list":
                    value = [source(s) for s in sources]
                elif arg["kind"] == "none":
                    value = None
                else:
                    value = _captured_value(arg)
                if name is None:
                    positional.append(value)
                else:
                    keywords[name] = value
            produced.append(flatten(op(*positional, **keywords)))
        outputs = [produced[s["member"]][s.get("output", 0)] for s in self.chain["outputs"]]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def flatten(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in flatten(v)]
    return []


def do_bench_us(fn, warmup=25, rep=200):
    import triton.testing
    return triton.testing.do_bench(fn, warmup=warmup, rep=rep, return_mode="median") * 1000.0


SLEEP_CYCLES = 4_000_000  # torch.cuda._sleep before each timed call: about 2 ms at the H200's clock


def _sleep_us(cycles):
    """How long torch.cuda._sleep(cycles) keeps the GPU busy, in microseconds."""
    began, ended = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    began.record()
    torch.cuda._sleep(cycles)
    ended.record()
    torch.cuda.synchronize()
    return began.elapsed_time(ended) * 1000.0


def device_time_us(fn, reps=30, warmup=3, sleep_cycles=SLEEP_CYCLES):
    """GPU time of one call of `fn`, without the host's launch overhead: before each call the L2
    is flushed (a 256 MiB zero_) and the GPU is kept busy by torch.cuda._sleep while the host
    enqueues the call, so the CUDA events around it see its kernels (and the gaps between them)
    run back to back, not Python, dynamo's guards or a launcher. Median over `reps` calls.

    do_bench's per-call time includes that overhead whenever the host is slower than the flush:
    torch.compile of one small op spends tens of microseconds in guards and its wrapper, which
    a compiled whole model pays once per graph, not per op. Raises when a call was not isolated:
    the sleep had finished before the host finished enqueuing the call (the GPU may then have
    waited for the host, and the time would include it). Checked on the GPU itself, by querying an
    event recorded after the sleep, not against the sleep's expected length: the SM clock, which
    sets how long a sleep of N cycles lasts, moves between calibration and measurement."""
    cache = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    host_us, overran = [], 0
    for start, end in zip(starts, ends):
        cache.zero_()
        torch.cuda._sleep(sleep_cycles)
        sleep_end = torch.cuda.Event()
        sleep_end.record()
        began = time.perf_counter()
        start.record()
        fn()
        end.record()
        host_us.append((time.perf_counter() - began) * 1e6)
        overran += sleep_end.query()  # the GPU already past the sleep: it may have waited for the host
        torch.cuda.synchronize()  # one call at a time: the next call's host work must not overlap this one's sleep
    if overran:
        raise RuntimeError(f"the host took up to {max(host_us):.0f} us to enqueue a call and outlasted the "
                           f"{_sleep_us(sleep_cycles):.0f} us sleep before it in {overran} of {reps} calls: "
                           "the GPU time would include host time")
    times = sorted(start.elapsed_time(end) * 1000.0 for start, end in zip(starts, ends))
    return times[len(times) // 2]


def model_device_time_ms(fn, reps=20, warmup=3, host=None):
    """device_time_us of a whole model's forward, in milliseconds, with a sleep sized to the model:
    a host-bound model takes milliseconds to enqueue its launches, longer than the fixed sleep
    of one op. The sleep is three times the slowest of five enqueues (at least SLEEP_CYCLES), so
    device_time_us's check (the sleep still running when the call is enqueued) leaves room for the
    host's jitter.
    host: a dict that receives "host_ms", the median of those enqueues (the GPU idle, so nothing
    holds the host back): a forward whose host_ms reaches its GPU time is host-bound, and its wall
    time follows the host's speed."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    host_us = []
    for _ in range(5):
        began = time.perf_counter()
        fn()
        host_us.append((time.perf_counter() - began) * 1e6)
        torch.cuda.synchronize()
    if host is not None:
        host["host_ms"] = statistics.median(host_us) / 1000.0
    cycles = max(SLEEP_CYCLES, int(SLEEP_CYCLES * 3.0 * max(host_us) / _sleep_us(SLEEP_CYCLES)))
    return device_time_us(fn, reps=reps, warmup=0, sleep_cycles=cycles) / 1000.0


def model_device_time_into(record, key, fn):
    """device_time_into with model_device_time_ms for a whole model's forward; the host's enqueue
    time goes to record["host_ms"]."""
    device_time_into(record, key, fn, timer=lambda forward: model_device_time_ms(forward, host=record))


def device_time_into(record, key, fn, timer=device_time_us):
    """record[key] = timer(fn) (device_time_us, or model_device_time_ms for a whole model), or
    record[key + "_error"] when it cannot be isolated (an op that synchronizes, a host that cannot
    enqueue a call within the sleep): the per-call time stands without it."""
    try:
        record[key] = timer(fn)
    except Exception as e:  # noqa: BLE001 - recorded next to the number it would have been
        record[key + "_error"] = one_line(f"{type(e).__name__}: {e}")


def split_call(op, inputs):
    """The arguments in schema order as (positional, keywords): keyword-only schema arguments
    (gelu's `approximate`) must go by name."""
    schema_args = op._schema.arguments
    positional = [v for a, v in zip(schema_args, inputs) if not a.kwarg_only]
    keywords = {a.name: v for a, v in zip(schema_args, inputs) if a.kwarg_only}
    return positional, keywords


def best_exportable(nodes):
    """The node `kforge export` packages (core/cast_export/CastExport.cpp, bestExportableNode): passed
    with a positive median, highest paired speedup (else speedup of medians), ties: lower median."""
    best, best_speedup = None, 0.0
    for node in nodes:
        latency = node.get("latency") or {}
        if node["status"] != "passed" or not latency.get("median_us") or latency["median_us"] <= 0:
            continue
        speedup = export_speedup(node)
        if speedup is None:
            continue
        if best is None or speedup > best_speedup or (
                speedup == best_speedup and latency["median_us"] < best["latency"]["median_us"]):
            best, best_speedup = node, speedup
    return best


def export_speedup(node):
    timing = (node.get("evaluation_details") or {}).get("evaluation", {}).get("timing", {})
    paired = timing.get("speedup")
    if isinstance(paired, (int, float)) and paired > 0:
        return float(paired)
    return node.get("speedup")


# ScalarType and MemoryFormat arguments are stored as their integer codes (c10 enums).
_SCALAR_TYPES = {0: torch.uint8, 1: torch.int8, 2: torch.int16, 3: torch.int32, 4: torch.int64, 5: torch.float16,
                 6: torch.float32, 7: torch.float64, 11: torch.bool, 15: torch.bfloat16}
_MEMORY_FORMATS = {0: torch.contiguous_format, 1: torch.preserve_format, 2: torch.channels_last,
                   3: torch.channels_last_3d}


def _enum_arg(arg, value):
    if isinstance(value, int) and not isinstance(value, bool):
        if "ScalarType" in arg["type"]:
            return _SCALAR_TYPES.get(value, value)
        if "MemoryFormat" in arg["type"]:
            return _MEMORY_FORMATS.get(value, value)
    return value


def _synthesize_tensor(spec, generator):
    sizes, strides = spec["sizes"], spec["strides"]
    extent = 0 if 0 in sizes else 1 + sum((s - 1) * st for s, st in zip(sizes, strides))
    dtype = getattr(torch, spec["dtype"])
    if dtype.is_floating_point:
        storage = torch.randn(extent, generator=generator).to(dtype)
    elif dtype == torch.bool:
        storage = torch.rand(extent, generator=generator) > 0.5
    else:
        storage = torch.randint(0, 2, (extent,), generator=generator).to(dtype)
    return storage.cuda().as_strided(sizes, strides)


def card_inputs(project, card):
    """(inputs in schema order on the GPU, eager outputs or None, where they came from).

    The card's first sample when it has one (its real activations); otherwise tensors of the
    card's dtypes, sizes and strides (normal random floats) and the card's non-tensor values."""
    from kforge_samples import load_sample
    if card.get("samples"):
        inputs, outputs = load_sample(os.path.join(project, card["samples"][0]["file"]))
        inputs = [_enum_arg(arg, value) for arg, value in zip(card["args"], to_cuda(list(inputs)))]
        return inputs, [t.cuda() for t in flatten(outputs)], "sample"
    generator = torch.Generator().manual_seed(0)
    inputs = []
    for arg in card["args"]:
        if arg["kind"] == "tensor":
            inputs.append(_synthesize_tensor(arg["tensors"][0], generator))
        elif arg["kind"] == "tensor-list":
            inputs.append([_synthesize_tensor(spec, generator) for spec in arg["tensors"]])
        elif arg["kind"] == "none":
            inputs.append(None)
        elif arg["kind"] == "value":
            inputs.append(_enum_arg(arg, arg["value"]))
        else:
            raise ValueError(f"argument '{arg['name']}' is opaque: the card cannot be replayed")
    return inputs, None, "synthesized (" + (card.get("samples_note") or "no sample") + ")"


def clone_inputs(inputs):
    """Fresh copies (same sizes and strides) so that in-place ops and timing loops never touch
    the inputs another measurement uses."""
    def clone(value):
        if isinstance(value, torch.Tensor):
            return torch.empty_strided(value.size(), value.stride(), dtype=value.dtype,
                                       device=value.device).copy_(value)
        if isinstance(value, (list, tuple)):
            return type(value)(clone(v) for v in value)
        return value
    return [clone(v) for v in inputs]


def card_bytes(card):
    """Bytes read + written by one call: the storage extent of every tensor argument and output."""
    def extent(spec):
        if 0 in spec["sizes"]:
            return 0
        elements = 1 + sum((s - 1) * st for s, st in zip(spec["sizes"], spec["strides"]))
        return elements * torch.empty(0, dtype=getattr(torch, spec["dtype"])).element_size()
    specs = [spec for arg in card["args"] for spec in arg.get("tensors", [])] + card.get("outputs", [])
    return sum(extent(spec) for spec in specs)


def copy_bandwidth_gbps(gib=1):
    """Device-to-device copy of a large buffer with do_bench: (read + write bytes) / time."""
    buffers = [torch.empty(gib << 30, dtype=torch.uint8, device="cuda").fill_(1)]
    buffers.append(torch.empty_like(buffers[0]))
    us = do_bench_us(lambda: buffers[1].copy_(buffers[0]), warmup=50, rep=500)
    buffers.clear()
    torch.cuda.empty_cache()
    return 2 * (gib << 30) / (us * 1e-6) / 1e9


def one_op_function(op, inputs):
    """A function of the card's tensors alone (tensor-list elements flattened) that calls `op`
    with every other argument as a constant: what torch.compile gets for the card."""
    template, tensors = [], []
    for value in inputs:
        if isinstance(value, torch.Tensor):
            template.append(("tensor", len(tensors)))
            tensors.append(value)
        elif isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in value):
            template.append(("list", list(range(len(tensors), len(tensors) + len(value)))))
            tensors.extend(value)
        else:
            template.append(("value", value))
    schema_args = op._schema.arguments

    def one_op(*ts):
        positional, keywords = [], {}
        for arg, (kind, what) in zip(schema_args, template):
            value = ts[what] if kind == "tensor" else [ts[i] for i in what] if kind == "list" else what
            if arg.kwarg_only:
                keywords[arg.name] = value
            else:
                positional.append(value)
        return op(*positional, **keywords)

    return one_op, tensors


def _matches(got, expected):
    if len(got) != len(expected):
        return False, None
    errors = [(g.float() - e.float()).abs().max().item() if g.numel() else 0.0 for g, e in zip(got, expected)]
    ok = all(g.shape == e.shape and torch.allclose(g.float(), e.float(), atol=5e-2, rtol=2e-2, equal_nan=True)
             for g, e in zip(got, expected))
    return ok, max(errors, default=0.0)


def time_candidate(card, project, best, kforge, env, workdir, inputs, expected):
    """`kforge bench` of the best node (one more evaluator measurement, and its cubin), then the
    cubin launched from Python and timed with do_bench. Returns a dict; raises on failure."""
    from cubin_launch import PlanLauncher, card_bindings
    source_path, plan_path = os.path.join(workdir, "best.cu"), os.path.join(workdir, "best_plan.json")
    cubin_path = os.path.join(workdir, "best.cubin")
    with open(source_path, "w") as f:
        f.write(best["candidate"]["source"])
    with open(plan_path, "w") as f:
        json.dump(best["candidate"]["launch_plan"], f, indent=1)
    cmd = [kforge, "bench", project, "--card", card["id"], "--kernel", source_path, "--plan", plan_path,
           "--emit-cubin", cubin_path]
    bench = run(cmd, 600, env)
    try:
        report = json.loads(bench.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"kforge bench gave no report (exit {bench.returncode}): {one_line(bench.stderr)}")
    if report.get("status") != "passed":
        raise RuntimeError(f"kforge bench of {best['id']}: {report.get('status')}: {one_line(report.get('reason'))}")
    timing = report["evaluation"]["timing"]
    result = {"bench_rerun": {"median_us": timing["candidate"]["median_us"], "eager_us": timing["eager"]["median_us"],
                              "paired_speedup": timing["speedup"]}}
    try:
        own = clone_inputs(inputs)
        tensors, values = card_bindings(card, own)
        with open(cubin_path, "rb") as f:
            launcher = PlanLauncher(f.read(), report["plan"], tensors, values)
        with torch.no_grad():
            launcher()
            torch.cuda.synchronize()
            got = [t for t in launcher.outputs] or flatten(own[0])
            result["matches_eager"], result["max_abs_error"] = _matches(got, expected)
            result["us"] = do_bench_us(launcher)
            device_time_into(result, "device_us", launcher)
        launcher.unload()
    finally:
        if os.path.exists(cubin_path):  # cubins are build products, not results
            os.remove(cubin_path)
    return result


def time_compiled(op, inputs, expected):
    """torch.compile of the one-op function: compile seconds, a check against eager, do_bench."""
    one_op, tensors = one_op_function(op, clone_inputs(inputs))
    torch._dynamo.reset()  # every card compiles the same code object: no recompile limit, no stale guards
    compiled = torch.compile(one_op, mode=COMPILE_MODE, fullgraph=True, dynamic=False)
    with torch.no_grad():
        started = time.monotonic()
        got = flatten(compiled(*tensors))
        torch.cuda.synchronize()
        compile_s = time.monotonic() - started
        matches, error = _matches(got, expected)
        us = do_bench_us(lambda: compiled(*tensors))
        result = {"us": us, "compile_s": compile_s, "matches_eager": matches, "max_abs_error": error}
        device_time_into(result, "device_us", lambda: compiled(*tensors))
    return result


def evaluator_summary(card, nodes):
    """What the search itself measured for a card: its tree's node counts, the node `kforge export`
    would package (the evaluator's CUPTI timing, L2 flushed, paired against eager) and the root."""
    statuses = {}
    for node in nodes:
        statuses[node["status"]] = statuses.get(node["status"], 0) + 1
    result = {"id": card["id"], "op": qualified(card), "key": card["key"], "time_share": card.get("time_share"),
              "call_count": card.get("call_count"), "capture_eager_us": (card.get("eager") or {}).get("median_us"),
              "nodes": len(nodes), "node_statuses": statuses}
    best = best_exportable(nodes)
    if best is None:
        failed = [n for n in nodes if n["status"] not in ("passed", "compiled-only", "validated-only")]
        result["no_best_reason"] = "no passed node with a measured speedup" + (
            ": " + one_line(failed[0].get("failure_reason", ""), 200) if failed else "")
    else:
        evaluation = (best.get("evaluation_details") or {}).get("evaluation", {})
        bandwidth = evaluation.get("bandwidth", {})
        result["evaluator"] = {
            "best_id": best["id"], "iteration": best["iteration"],
            "transformation": best["provenance"].get("transformation"),
            "params": best["provenance"].get("details", {}).get("params"),
            "median_us": best["latency"]["median_us"], "eager_us": best.get("eager_us"),
            "paired_speedup": evaluation.get("timing", {}).get("speedup"), "speedup_of_medians": best.get("speedup"),
            "speedup": export_speedup(best), "method": evaluation.get("timing", {}).get("method"),
            "bytes": bandwidth.get("bytes"), "fraction_of_copy": bandwidth.get("fraction_of_copy"),
            "device_copy_gb_per_s": bandwidth.get("device_copy_gb_per_s"),
        }
    root = nodes[0] if nodes else None
    if root and root["status"] == "passed" and root.get("latency"):
        result["root"] = {"median_us": root["latency"]["median_us"], "speedup": export_speedup(root)}
    return result, best


def measure_card(card, project, nodes, kforge, env, workdir, copy_gbps, with_compile=True):
    """Every number of one searched card: the evaluator's (from its tree's nodes) and do_bench's of
    eager, the best node and torch.compile; speedups, bandwidth, disagreement flags."""
    result, best = evaluator_summary(card, nodes)
    op = aten_op(card)
    inputs, expected, source = card_inputs(project, card)
    result["inputs"] = source
    db = result["do_bench"] = {}
    with torch.no_grad():
        if expected is None:  # synthesized inputs: eager on a copy is the reference
            positional, keywords = split_call(op, clone_inputs(inputs))
            expected = [t.clone() for t in flatten(op(*positional, **keywords))]
        own = clone_inputs(inputs)
        positional, keywords = split_call(op, own)
        db["eager_us"] = do_bench_us(lambda: op(*positional, **keywords))
        device_time_into(db, "eager_device_us", lambda: op(*positional, **keywords))
        del own
    if best is not None:
        try:
            db["candidate"] = time_candidate(card, project, best, kforge, env, workdir, inputs, expected)
        except Exception as e:  # noqa: BLE001 - recorded; the card still appears
            db["candidate"] = {"error": one_line(f"{type(e).__name__}: {e}")}
    if with_compile:
        try:
            db["compile"] = time_compiled(op, inputs, expected)
        except Exception as e:  # noqa: BLE001 - an op inductor cannot compile is a result too
            db["compile"] = {"error": one_line(f"{type(e).__name__}: {e}")}
    del inputs, expected
    torch.cuda.empty_cache()

    derive(result, card, copy_gbps)
    return result


def derive(result, card, copy_gbps):
    """Speedups, achieved bandwidth and evaluator-vs-do_bench disagreement from the raw numbers."""
    ev, db = result.get("evaluator") or {}, result["do_bench"]
    cand, comp = db.get("candidate") or {}, db.get("compile") or {}
    moved = ev.get("bytes") or card_bytes(card)
    result["bytes"] = moved
    result["copy_gb_per_s"] = copy_gbps
    bw = result["bandwidth"] = {}
    for name, us in (("eager", db.get("eager_us")), ("candidate", cand.get("us")), ("compile", comp.get("us"))):
        if us:
            gbps = moved / (us * 1e-6) / 1e9
            bw[name] = {"gb_per_s": gbps, "fraction_of_copy": gbps / copy_gbps if copy_gbps else None}
    sp = result["speedups"] = {}
    if cand.get("us") and db.get("eager_us"):
        sp["candidate_vs_eager"] = db["eager_us"] / cand["us"]
    if comp.get("us") and db.get("eager_us"):
        sp["compile_vs_eager"] = db["eager_us"] / comp["us"]
    if cand.get("us") and comp.get("us"):
        sp["candidate_vs_compile"] = comp["us"] / cand["us"]
    if ev.get("speedup"):
        sp["evaluator_candidate_vs_eager"] = ev["speedup"]
    sp.update(device_speedups(db.get("eager_device_us"), comp.get("device_us"), cand.get("device_us"),
                              ev.get("speedup")))
    dis = result["disagreement"] = {}
    if ev and cand.get("us"):
        dis["candidate"] = ev["median_us"] / cand["us"] - 1
        if ev.get("eager_us"):
            dis["eager"] = ev["eager_us"] / db["eager_us"] - 1
        if sp.get("candidate_vs_eager"):
            dis["speedup"] = ev["speedup"] / sp["candidate_vs_eager"] - 1
    result["flagged"] = sorted(k for k, v in dis.items() if abs(v) > DISAGREEMENT_LIMIT)
    if cand.get("matches_eager") is False:
        result["flagged"].append("cubin-output")
