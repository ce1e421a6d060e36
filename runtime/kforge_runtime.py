"""A loaded .cast package's fused-region kernels for a PyTorch model in Python (docs/runtime.md,
"Fused regions"): a torch.compile backend.

    import torch
    torch.ops.load_library("build/runtime/libkforge_runtime.so")
    torch.ops.kforge.load_cast("model.cast")
    from kforge_runtime import kforge_backend          # runtime/ on sys.path or PYTHONPATH
    model = torch.compile(model, backend=kforge_backend, dynamic=False)

Op kernels need none of this: once the package is loaded, the dispatcher sends every matching call
to them, compiled or not. A region kernel replaces a chain of calls, which only a graph shows: the
backend traces each graph dynamo hands it (the same TorchScript trace the capture made of the
model, so the chains are the ones the region cards were captured from), the runtime adds a method
that calls the region kernels where their chains run (kforge::region_module), and that method runs
the graph op by op, as eager would, with the original ops wherever a guard does not hold. A graph
with no region of the package runs as dynamo handed it. A call whose inputs differ from the
traced ones in shape, stride, dtype or device runs the graph as handed too: a trace holds its
example's shapes (hence dynamic=False, which makes dynamo compile again for new shapes).
"""
import io
import json

import torch

__all__ = ["kforge_backend"]


def _signature(values):
    return tuple((tuple(v.shape), tuple(v.stride()), v.dtype, v.device) if isinstance(v, torch.Tensor) else v
                 for v in values)


def kforge_backend(gm, example_inputs):
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
