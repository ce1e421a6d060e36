"""Launch a candidate's cubin from Python with the cuda-python driver API, the way the worker does.

The benchmarks time the very cubin that `kforge bench --emit-cubin FILE` wrote with an independent
timer (triton.testing.do_bench). This module reads a launch plan (docs/kernel-contract.md) and binds
its argument tokens the way the evaluator does (core/gpu_evaluation/CandidateEvaluator.cpp, bindingsFor):

    ptr:NAME       the card's tensor argument NAME (schema name); ptr:NAME.K element K of a Tensor[]
    ptr:outN       output N (allocated from the plan's "outputs", or passed in)
    ptr:scratch.S  a scratch buffer of the plan (filled once, with 0 or the 0xA5 poison, as the
                   evaluator's timing does: scratch is not refilled between timed launches)
    TYPE:NUMBER    a literal;  TYPE:NAME  the card's non-tensor argument NAME (bools are 0/1)

    from cubin_launch import PlanLauncher, card_bindings
    launcher = PlanLauncher(cubin_bytes, plan, tensors={"self": x}, outputs=[y])
    launcher()                       # every launch of the plan, on torch's current stream

The CUDA context is PyTorch's primary context: make a CUDA tensor before creating a launcher.
"""
import ctypes

import torch

try:  # card_bindings needs only torch (the CPU host emulation of tests/core/builtin uses it)
    from cuda.bindings import driver as cu
except ImportError:
    cu = None

_CTYPES = {
    "ptr": ctypes.c_void_p, "i32": ctypes.c_int, "u32": ctypes.c_uint, "i64": ctypes.c_longlong,
    "u64": ctypes.c_ulonglong, "f32": ctypes.c_float, "f64": ctypes.c_double,
}
_INTEGRAL = {"i32", "u32", "i64", "u64"}


class CudaDriverError(RuntimeError):
    pass


def check(result):
    """Unwraps a cuda-python result tuple (or bare CUresult); raises on an error code."""
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        name = cu.cuGetErrorName(err)
        raise CudaDriverError(f"CUDA driver error {name[1].decode() if name[0] == cu.CUresult.CUDA_SUCCESS else err}")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


def _dims(value):
    dims = [value] if isinstance(value, int) else list(value)
    dims = [int(d) for d in dims] + [1] * (3 - len(dims))
    return dims[:3]


_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64,
           "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8,
           "uint8": torch.uint8, "bool": torch.bool}


def torch_dtype(name):
    if name not in _DTYPES:
        raise ValueError(f"dtype '{name}' is not known to cubin_launch")
    return _DTYPES[name]


def card_bindings(card, inputs):
    """The tensors and numbers a plan may name, from a card (cards.json entry) and the op's
    arguments in schema order (a sample's inputs: on the GPU to launch, on the CPU for the host emulation)."""
    tensors, values = {}, {}
    for arg, value in zip(card["args"], inputs):
        name = arg["name"]
        if isinstance(value, torch.Tensor):
            tensors[name] = value
        elif isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in value):
            k = 0
            for element in value:
                if isinstance(element, torch.Tensor):
                    tensors[f"{name}.{k}"] = element
                    k += 1
        elif isinstance(value, bool):
            values[name] = 1 if value else 0
        elif isinstance(value, (int, float)):
            values[name] = value
    return tensors, values


class PlanLauncher:
    """Loads a cubin and launches every kernel of a plan in order with bound arguments.

    plan: {"launches": [{"kernel", "grid", "block", "shared_bytes"?, "args"}], "outputs"?, "scratch"?}
    tensors: schema name (or name.K) -> CUDA tensor; values: schema name -> number;
    outputs: tensors for outN; when None they are allocated from plan["outputs"] (dtype, sizes, strides).
    The argument values are resolved once here: the launcher keeps every tensor alive and the same
    buffers are used by every call (so it can be timed without per-call allocation).
    """

    def __init__(self, cubin, plan, tensors=None, values=None, outputs=None):
        if cu is None:
            raise CudaDriverError("cuda-python (cuda.bindings) is not installed: cubins cannot be launched")
        tensors = dict(tensors or {})
        values = dict(values or {})
        torch.cuda.current_device()  # the primary context is current on this thread from here on
        check(cu.cuInit(0))
        self.module = check(cu.cuModuleLoadData(cubin))
        if outputs is None:
            outputs = [torch.empty_strided(spec["sizes"], spec["strides"], dtype=torch_dtype(spec["dtype"]),
                                           device="cuda") for spec in plan.get("outputs", [])]
        self.outputs = list(outputs)
        self.scratch = {}
        for spec in plan.get("scratch", []):
            buffer = torch.empty(int(spec["bytes"]), dtype=torch.uint8, device="cuda")
            buffer.fill_(0 if spec.get("zero", False) else 0xA5)
            self.scratch[spec["name"]] = buffer
        self.tensors = tensors
        self.launches = []
        for i, launch in enumerate(plan["launches"]):
            function = check(cu.cuModuleGetFunction(self.module, launch["kernel"].encode()))
            shared = int(launch.get("shared_bytes", 0))
            if shared > 48 * 1024:
                check(cu.cuFuncSetAttribute(
                    function, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared))
            args, types = [], []
            for token in launch["args"]:
                kind, _, source = token.partition(":")
                if kind not in _CTYPES or not source:
                    raise ValueError(f"launches[{i}]: argument '{token}' is not TYPE:SOURCE")
                types.append(_CTYPES[kind])
                args.append(self._resolve(kind, source, tensors, values, token))
            self.launches.append((function, _dims(launch["grid"]), _dims(launch["block"]), shared,
                                  (tuple(args), tuple(types))))

    def _resolve(self, kind, source, tensors, values, token):
        if kind == "ptr":
            if source.startswith("out") and source[3:].isdigit():
                index = int(source[3:])
                if index >= len(self.outputs):
                    raise ValueError(f"'{token}': the plan has {len(self.outputs)} outputs")
                return self.outputs[index].data_ptr()
            if source.startswith("scratch."):
                return self.scratch[source[len("scratch."):]].data_ptr()
            if source not in tensors:
                raise ValueError(f"'{token}': no tensor bound (bound: {', '.join(sorted(tensors)) or 'none'})")
            return tensors[source].data_ptr()
        try:
            number = float(source)
        except ValueError:
            if source not in values:
                raise ValueError(f"'{token}': no argument value '{source}' (known: {', '.join(sorted(values))})")
            number = float(values[source])
        return int(number) if kind in _INTEGRAL else number

    def __call__(self):
        stream = cu.CUstream(torch.cuda.current_stream().cuda_stream)
        for function, grid, block, shared, params in self.launches:
            check(cu.cuLaunchKernel(function, *grid, *block, shared, stream, params, 0))

    def unload(self):
        if self.module is not None:
            check(cu.cuModuleUnload(self.module))
            self.module = None
