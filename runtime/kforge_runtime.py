"""A loaded .cast package's fused-region kernels for a PyTorch model in Python (docs/runtime.md,
"Fused regions"): torch.compile backends.

    import torch
    torch.ops.load_library("build/runtime/libkforge_runtime.so")
    torch.ops.kforge.load_cast("model.cast")
    from kforge_runtime import kforge_backend          # runtime/ on sys.path or PYTHONPATH
    model = torch.compile(model, backend=kforge_backend)

Op kernels need none of this: once the package is loaded, the dispatcher sends every matching call
to them, compiled or not. A region kernel replaces a chain of calls, which only a graph shows.

`kforge_backend` is Inductor with the package's region kernels swapped in where their chains run
(kforge_region_patterns.py: each chain a pattern of Inductor's pattern matcher, replaced by a call
that the kernels' guards serve and that runs the chain's ops where none holds); Inductor compiles
and fuses everything else as torch.compile does. `make_kforge_backend(mode=...)` gives the same
with one of torch.compile's modes ("max-autotune-no-cudagraphs", ...).

`kforge_script_backend` runs no Inductor: it traces each graph dynamo hands it (the same
TorchScript trace the capture made of the model, so the chains are the ones the region cards were
captured from), the runtime adds a method that calls the region kernels where their chains run
(kforge::region_module), and that method runs the graph op by op, as eager would, with the original
ops wherever a guard does not hold. A graph with no region of the package runs as dynamo handed it.
A call whose inputs differ from the traced ones in shape, stride, dtype or device runs the graph as
handed too: a trace holds its example's shapes (pass dynamic=False, which makes dynamo compile
again for new shapes).
"""
import io
import json

import torch

__all__ = ["kforge_backend", "kforge_script_backend", "make_kforge_backend"]


def _signature(values):
    return tuple((tuple(v.shape), tuple(v.stride()), v.dtype, v.device) if isinstance(v, torch.Tensor) else v
                 for v in values)


_pattern_passes = {}  # the loaded region kernels (JSON text) -> RegionPatternPass


def _region_pattern_pass():
    """The pattern pass for the region kernels loaded now (None without any)."""
    listing = getattr(getattr(torch.ops, "kforge", None), "region_kernels", None)
    text = listing() if listing is not None else "[]"
    kernels = json.loads(text)
    if not kernels:
        return None
    if text not in _pattern_passes:
        from kforge_region_patterns import RegionPatternPass
        _pattern_passes[text] = RegionPatternPass(kernels)
    return _pattern_passes[text]


def make_kforge_backend(mode=None, options=None):
    """A torch.compile backend: Inductor in `mode` (as torch.compile's `mode`) with `options` (as
    its `options`), and the loaded package's region kernels where their chains run."""
    def backend(gm, example_inputs):
        from torch._inductor import list_mode_options
        from torch._inductor.compile_fx import compile_fx
        patches = dict(list_mode_options(mode)) if mode else {}
        patches.update(options or {})
        pattern_pass = _region_pattern_pass()
        if pattern_pass is not None:
            patches["post_grad_custom_pre_pass"] = pattern_pass.inductor_pass
        return compile_fx(gm, example_inputs, config_patches=patches)

    return backend


kforge_backend = make_kforge_backend()


def kforge_script_backend(gm, example_inputs):
    """torch.compile backend: region kernels where the graph runs their chains, eager elsewhere."""
    if not all(isinstance(v, torch.Tensor) for v in example_inputs):
        return gm.forward  # symbolic sizes or Python values: nothing a trace can hold
    with torch.no_grad():
        traced = torch.jit.trace(gm, tuple(example_inputs), check_trace=False, strict=False)
    saved = io.BytesIO()
    torch.jit.save(traced, saved)
    data, report = torch.ops.kforge.region_module(torch.frombuffer(bytearray(saved.getvalue()), dtype=torch.uint8))
    report = json.loads(report)
    if report["replaced"] == 0:
        return gm.forward
    method = getattr(torch.jit.load(io.BytesIO(data.numpy().tobytes())), report["method"])
    traced_signature = _signature(example_inputs)

    def run(*args):
        if _signature(args) != traced_signature:
            return gm.forward(*args)
        # Op by op, as the capture ran the model: TorchScript's executor would otherwise fuse
        # elementwise chains into kernels of its own from the second call on.
        with torch.jit.optimized_execution(False):
            return method(*args)

    return run
