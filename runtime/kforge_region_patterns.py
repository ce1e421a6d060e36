"""Fused-region kernels inside Inductor (docs/runtime.md, "Fused regions"): each loaded region
kernel's chain becomes a pattern of Inductor's pattern matcher, matched in the post-grad ATen
graph, where a match is replaced by one call of `kforge_regions::run`. That op offers the region's
inputs to the package's kernels of the chain (`torch.ops.kforge.region_call`, whose guards decide)
and runs the chain's own ops where none serves, so a match can never change what the graph
computes. Everything else in the graph stays Inductor's to fuse and generate.

A region card (docs/project-format.md, "Region cards") gives the chain: its members' ATen ops in
order, their non-tensor arguments as captured, and where each tensor comes from. The chain is run
as ATen calls (`chain_function`), which is both the pattern Inductor traces (through its own
decompositions, so the pattern has the form of the graph it is matched in) and the fallback.

- In-place members (`relu_`, `add_`) are matched by their functional ops: Inductor's graph is
  functional, and a region is only replaced where its intermediates have no other reader.
- A 0-dim region input is a Python number in a graph dynamo traced (`y * 0.125`) where the
  capture's TorchScript trace had a 0-dim tensor: such an input is a scalar of the pattern, any
  value matches, and the kernel receives it as a 0-dim host tensor of the captured dtype (the
  runtime serves that only where eager would compute alike, docs/runtime.md "Number operands").
  A real 0-dim tensor in the graph at that place is not matched (the region stays Inductor's).
- A match is replaced only where some kernel of the chain has exactly the matched tensors'
  dtypes, sizes and strides: elsewhere Inductor keeps the ops, as it would fuse them better than
  a fallback runs them.

Nothing here needs a GPU or the runtime library: without `torch.ops.kforge.region_call` the op
runs the chain (tests/runtime/test_region_patterns.py checks matching and fallback on the CPU).
"""
import hashlib
import inspect
import json
import threading

import torch

__all__ = ["RegionPatternPass", "chain_function", "region_stats"]

# c10::ScalarType codes, as a capture records a dtype argument.
_DTYPES = {0: torch.uint8, 1: torch.int8, 2: torch.int16, 3: torch.int32, 4: torch.int64, 5: torch.float16,
           6: torch.float32, 7: torch.float64, 9: torch.complex64, 10: torch.complex128, 11: torch.bool,
           15: torch.bfloat16}
_DTYPE_NAMES = {"uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
                "int64": torch.int64, "float16": torch.float16, "float32": torch.float32, "float64": torch.float64,
                "bool": torch.bool, "bfloat16": torch.bfloat16}
_MEMORY_FORMATS = {0: torch.contiguous_format, 1: torch.preserve_format, 2: torch.channels_last,
                   3: torch.channels_last_3d}
_NUMBER_WORDS = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}

_lock = threading.Lock()
_regions = {}  # key -> _Region, for kforge_regions::run
_stats = {}    # key -> {"served": n, "ran_chain": n}


def _views_as_reshapes(trace):
    """`trace` (fwd_only) with every aten.view of the traced pattern made an aten.reshape: Inductor's
    post-grad passes turn the graph's views into reshapes before the custom pass runs, so a pattern
    whose decomposition views (group_norm's [N, G, C/G, HW]) would otherwise never match."""

    def traced(*args, **kwargs):
        gm = trace(*args, **kwargs)
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target is torch.ops.aten.view.default:
                node.target = torch.ops.aten.reshape.default
        gm.recompile()
        return gm

    return traced


class RegionUnsupported(Exception):
    """A region card whose chain cannot be run as ATen calls here (the message says why)."""


def _functional_op(member):
    name = member["op"].split("::", 1)[1]
    if name.endswith("_") and not name.endswith("__"):
        name = name[:-1]  # in place -> functional (the graph Inductor matches in is functional)
    packet = getattr(torch.ops.aten, name, None)
    overload = getattr(packet, member["overload"] or "default", None) if packet is not None else None
    if overload is None:
        raise RegionUnsupported(f"no functional ATen op for {member['op']}.{member['overload']}")
    return overload


def _argument_value(arg, schema_type):
    """A captured non-tensor argument as the op takes it (dtype codes as torch.dtype, ...)."""
    value = arg["value"]
    if arg["kind"] == "none":
        return None
    if arg["kind"] != "value":
        raise RegionUnsupported(f"argument {arg['name']} of kind {arg['kind']}")
    text = str(schema_type)
    if isinstance(value, str) and value in _NUMBER_WORDS:
        return _NUMBER_WORDS[value]
    if "ScalarType" in text and isinstance(value, int):
        if value not in _DTYPES:
            raise RegionUnsupported(f"dtype code {value}")
        return _DTYPES[value]
    if "MemoryFormat" in text and isinstance(value, int):
        return _MEMORY_FORMATS[value]
    if "Layout" in text and isinstance(value, int):
        return torch.strided
    if "Device" in text and isinstance(value, str):
        return torch.device(value)
    return value


def chain_function(card):
    """The chain of region card `card` (cards.json's form) as fn(in0, in1, ...) -> tuple of its
    outputs, each member one ATen call (functional), as the capture recorded it."""
    chain = card["region"]
    steps = []
    for member in chain["members"]:
        op = _functional_op(member)
        schema = {a.name: a for a in op._schema.arguments}
        plan = []  # (name, ("source", source) | ("sources", [sources]) | ("value", v))
        for arg, sources in zip(member["args"], member["sources"]):
            if arg["name"] not in schema:
                raise RegionUnsupported(f"{member['op']}: no argument {arg['name']}")
            if arg["kind"] == "tensor":
                plan.append((arg["name"], ("source", sources[0])))
            elif arg["kind"] == "tensor-list":
                plan.append((arg["name"], ("sources", sources)))
            else:
                plan.append((arg["name"], ("value", _argument_value(arg, schema[arg["name"]].type))))
        steps.append((op, plan))
    outputs = chain["outputs"]

    def run(*inputs):
        values = []

        def read(source):
            if "input" in source:
                return inputs[source["input"]]
            return values[source["member"]][source["output"]]

        for op, plan in steps:
            kwargs = {}
            for name, (kind, what) in plan:
                if kind == "source":
                    kwargs[name] = read(what)
                elif kind == "sources":
                    kwargs[name] = [read(s) for s in what]
                else:
                    kwargs[name] = what
            result = op(**kwargs)
            values.append(tuple(result) if isinstance(result, (tuple, list)) else (result,))
        return tuple(read(o) for o in outputs)

    return run


def _structure_key(card):
    """What makes two region cards one pattern: the chain's ops, values and data flow and its
    inputs' dtypes and ranks; sizes and strides (one kernel each) are left to the guards."""
    def shape_free(spec):
        return {"dtype": spec["dtype"], "rank": len(spec["sizes"]), "device": spec["device"].split(":")[0]}

    members = [{"op": m["op"], "overload": m["overload"], "sources": m["sources"],
                "args": [{"name": a["name"], "kind": a["kind"], "value": a["value"],
                          "tensors": [shape_free(t) for t in a["tensors"]]} for a in m["args"]]}
               for m in card["region"]["members"]]
    inputs = [shape_free(a["tensors"][0]) for a in card["args"]]
    text = json.dumps({"members": members, "outputs": card["region"]["outputs"], "inputs": inputs},
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class _Region:
    """One chain (a structure key) and the loaded kernels that compute it, one per shape."""

    def __init__(self, key, card):
        self.key = key
        self.chain = chain_function(card)
        self.inputs = [a["tensors"][0] for a in card["args"]]
        self.scalar = [len(spec["sizes"]) == 0 for spec in self.inputs]
        self.names = [f"in{i}" for i in range(len(self.inputs))]
        self.kernels = []  # (id, card)

    def floating(self, k):
        return _DTYPE_NAMES[self.inputs[k]["dtype"]].is_floating_point

    def python_scalar(self, k, value):
        """Region input k (a scalar of the pattern) as the Python number the graph passes."""
        dtype = self.inputs[k]["dtype"]
        if dtype == "bool":
            return bool(value)
        return float(value) if self.floating(k) else int(value)

    def call_inputs(self, tensors, scalars):
        """The region's inputs in order: tensors as given, scalars as 0-dim host tensors of the
        captured dtype (what the kernel's guard was proven with)."""
        tensors, scalars, merged = list(tensors), list(scalars), []
        for k, is_scalar in enumerate(self.scalar):
            if is_scalar:
                merged.append(torch.tensor(self.python_scalar(k, scalars.pop(0)),
                                           dtype=_DTYPE_NAMES[self.inputs[k]["dtype"]]))
            else:
                merged.append(tensors.pop(0))
        return merged

    def chain_inputs(self, tensors, scalars):
        """The region's inputs in order with scalars as Python numbers, as the graph had them."""
        tensors, scalars = list(tensors), list(scalars)
        return [self.python_scalar(k, scalars.pop(0)) if s else tensors.pop(0) for k, s in enumerate(self.scalar)]

    def fits_a_kernel(self, tensors):
        """Whether the matched tensors (fake ones: dtype, sizes, strides, device) are exactly some
        kernel's inputs."""
        for _, card in self.kernels:
            wanted = [a["tensors"][0] for a, s in zip(card["args"], self.scalar) if not s]
            if all(t.dtype == _DTYPE_NAMES.get(w["dtype"]) and list(t.shape) == w["sizes"] and
                   list(t.stride()) == w["strides"] and t.device.type == w["device"].split(":")[0]
                   for t, w in zip(tensors, wanted)):
                return True
        return False


def _fresh(outputs, inputs):
    """Outputs that are none of the inputs (a custom op may not return its input; a region holds
    no view or aliasing call, so an output that is not an input shares no memory with one)."""
    return [o.clone() if any(o is i for i in inputs) else o for o in outputs]


@torch.library.custom_op("kforge_regions::run", mutates_args=())
def _run(key: str, tensors: list[torch.Tensor], scalars: list[float]) -> list[torch.Tensor]:
    region = _regions[key]
    region_call = getattr(getattr(torch.ops, "kforge", None), "region_call", None)
    if region_call is not None and region.kernels:
        served, outputs = region_call([k for k, _ in region.kernels], region.call_inputs(tensors, scalars))
        if served:
            with _lock:
                _stats[key]["served"] += 1
            return list(outputs)
    inputs = region.chain_inputs(tensors, scalars)
    with _lock:
        _stats[key]["ran_chain"] += 1
    return _fresh(region.chain(*inputs), inputs)


@_run.register_fake
def _run_fake(key, tensors, scalars):
    region = _regions[key]
    inputs = region.chain_inputs(tensors, scalars)
    return _fresh(region.chain(*inputs), inputs)


def _example(spec, fake_mode):
    """A tensor standing for region input `spec` when the pattern is traced: its captured sizes
    and strides (arguments such as normalized_shape refer to them), a fake tensor on the captured
    device, so nothing is allocated. The device matters: some decompositions differ by device type
    (group_norm's on the meta device is not the one a CUDA or CPU graph holds). Meta where the
    device is not available here."""
    device = spec.get("device", "meta")
    if device.startswith("cuda") and not torch.cuda.is_available():
        device = "meta"
    with fake_mode:
        return torch.empty_strided(spec["sizes"], spec["strides"], dtype=_DTYPE_NAMES[spec["dtype"]], device=device)


def _with_signature(fn, names):
    fn.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
    return fn


def region_stats():
    """Per region structure key: calls a kernel served, and calls that ran the chain's own ops."""
    with _lock:
        return {k: dict(v) for k, v in _stats.items()}


class RegionPatternPass:
    """An Inductor post-grad pass (torch._inductor.config.post_grad_custom_pre_pass) that replaces
    where the given region kernels' chains run. `kernels`: [{"id", "card"}], the cards as
    cards.json writes them (what torch.ops.kforge.region_kernels() returns). Region cards this
    module cannot express are listed in `skipped` with the reason, not raised."""

    def __init__(self, kernels):
        from torch._inductor.custom_graph_pass import CustomGraphPass
        from torch._inductor.pattern_matcher import PatternMatcherPass, fwd_only, register_replacement

        self.skipped = []
        self.keys = []
        self._pass = PatternMatcherPass(pass_name="kforge_regions")
        by_key = {}
        for kernel in kernels:
            card = kernel["card"]
            try:
                key = _structure_key(card)
                if key not in by_key:
                    by_key[key] = _Region(key, card)
                by_key[key].kernels.append((kernel["id"], card))
            except (RegionUnsupported, KeyError, TypeError, ValueError) as e:
                self.skipped.append((kernel.get("id"), str(e)))
        for key, region in by_key.items():
            try:
                self._register(region, fwd_only, register_replacement)
            except Exception as e:  # a pattern Inductor cannot trace: the region stays Inductor's
                self.skipped.append((region.kernels[0][0], f"pattern not traced: {e}"))
                continue
            with _lock:
                _regions[key] = region
                _stats.setdefault(key, {"served": 0, "ran_chain": 0})
            self.keys.append(key)
        # Inductor's graph cache keys on this: the kernels' ids and cards (a match depends on their shapes).
        self._uuid = hashlib.sha256(json.dumps(kernels, sort_keys=True).encode()).hexdigest()
        pattern_pass = self

        class _Pass(CustomGraphPass):
            def __call__(self, graph):
                pattern_pass.replaced += pattern_pass._pass.apply(graph)

            def uuid(self):
                return pattern_pass._uuid

        self.replaced = 0
        self.inductor_pass = _Pass()

    def _register(self, region, fwd_only, register_replacement):
        names = region.names
        # Scalars: example values no chain constant is likely to equal (the matcher finds a
        # scalar argument by its example value).
        scalar_values = {n: region.python_scalar(k, 0.123456789 + 0.001 * k if region.floating(k) else 7919 + k)
                         for k, n in enumerate(names) if region.scalar[k]}
        from torch._subclasses.fake_tensor import FakeTensorMode

        fake_mode = FakeTensorMode()
        examples = [_example(spec, fake_mode) for spec, s in zip(region.inputs, region.scalar) if not s]
        tensor_names = [n for n, s in zip(names, region.scalar) if not s]
        scalar_names = [n for n, s in zip(names, region.scalar) if s]

        def search(*args):
            outputs = region.chain(*args)
            return outputs[0] if len(outputs) == 1 else outputs

        def replace(*args):
            named = dict(zip(names, args))
            outputs = torch.ops.kforge_regions.run(region.key, [named[n] for n in tensor_names],
                                                   [named[n] for n in scalar_names])
            return outputs[0] if len(outputs) == 1 else tuple(outputs)

        def fits(match):
            tensors = [match.kwargs[n].meta["val"] for n in tensor_names]
            return region.fits_a_kernel(tensors)

        register_replacement(_with_signature(search, names), _with_signature(replace, names), examples,
                             _views_as_reshapes(fwd_only), self._pass, extra_check=fits,
                             scalar_workaround=scalar_values)
