#!/usr/bin/env python3
"""CPU test: pointwise region kernels, run by the host emulation of CUDA, against eager PyTorch.

Each case builds a chain of ATen calls in torch on the CPU (GELU written out with tanh, a SiLU gate,
scale * scores + mask, residual add + relu_, a bfloat16 chain with casts, a per-channel broadcast
operand, a 0-dim scalar tensor operand with NaNs, a transposed input, where over an exact GELU; integer
tensors: an int64 attention mask, an int32 chain that wraps and divides, int tensors broadcast
into float ones),
runs it eagerly, and writes the region card the capture would write for it (docs/project-format.md,
"Region cards": arguments in0..inN-1, outputs with eager's dtypes, sizes and strides, the chain with
each member's arguments and sources). kforge_kernel_dump writes the built-in proposer's root
candidate and a few neighbours (PointwiseRegionFamily); each is compiled with the host C++ compiler
against cuda_host_shim.h, run on the chain's inputs with its launch plan (outputs poisoned with NaN)
and compared with eager's outputs within emulate_builtin_families.py's tolerances (NaN where eager
has NaN; integer and bool outputs bit for bit).

Skipped (exit 77) without torch or a host C++ compiler.
Usage: emulate_pointwise_regions.py --dump build/.../kforge_kernel_dump [--cuda-include DIR]
                                    [--variants 3] [--only NAME] [--keep]
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True

try:
    import torch
except ImportError:
    print("skipped: torch is not installed")
    sys.exit(77)

sys.path.insert(0, HERE)
from emulate_builtin_families import Runner, clean_up, compare, summary  # noqa: E402

# c10::ScalarType codes, as a captured dtype argument holds them.
SCALAR_TYPE = {torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4, torch.float16: 5,
               torch.float32: 6, torch.bool: 11, torch.bfloat16: 15}
NAMES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16", torch.bool: "bool",
         torch.float64: "float64", torch.int64: "int64", torch.int32: "int32", torch.int16: "int16",
         torch.int8: "int8", torch.uint8: "uint8"}


def fnv1a64_hex(text):
    h = 0xcbf29ce484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def spec(t):
    return {"dtype": NAMES[t.dtype], "sizes": list(t.shape), "strides": list(t.stride()), "device": "cuda:0"}


def captured_number(v):
    """A Python number as the capture writes it: non-finite floats as "inf", "-inf" or "nan"."""
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


class Value:
    def __init__(self, source, tensor):
        self.source, self.tensor = source, tensor


class Chain:
    """A region under construction: inputs, member calls (run eagerly as they are added), outputs."""

    def __init__(self):
        self.inputs, self.members, self.outputs, self.references = [], [], [], []

    def input(self, t):
        self.inputs.append(t)
        return Value({"input": len(self.inputs) - 1}, t)

    def call(chain, op, overload="default", **kwargs):  # noqa: N805 (an argument may be named self)
        """aten::op.overload with its schema arguments by name: Values, Python numbers, dtypes or None."""
        packet = getattr(torch.ops.aten, op)
        schema = getattr(packet, overload)._schema
        positional, keywords, args, sources = [], {}, [], []
        for argument in schema.arguments:
            if argument.name not in kwargs:
                continue
            v = kwargs[argument.name]
            eager = v.tensor if isinstance(v, Value) else v
            if argument.kwarg_only:
                keywords[argument.name] = eager
            else:
                positional.append(eager)
            entry = {"name": argument.name, "type": str(argument.type), "tensors": [], "value": None}
            if isinstance(v, Value):
                entry.update(kind="tensor", tensors=[spec(v.tensor)])
                sources.append([v.source])
            elif isinstance(v, list) and v and all(isinstance(e, Value) for e in v):  # a Tensor[]
                if argument.kwarg_only:
                    keywords[argument.name] = [e.tensor for e in v]
                else:
                    positional[-1] = [e.tensor for e in v]
                entry.update(kind="tensor-list", tensors=[spec(e.tensor) for e in v])
                sources.append([e.source for e in v])
            elif v is None:
                entry["kind"] = "none"
                sources.append([])
            else:
                entry.update(kind="value", value=SCALAR_TYPE[v] if isinstance(v, torch.dtype) else captured_number(v))
                sources.append([])
            args.append(entry)
        out = getattr(packet, overload)(*positional, **keywords)
        outs = list(out) if isinstance(out, tuple) else [out]
        chain.members.append({"op": "aten::" + op, "overload": "" if overload == "default" else overload,
                             "card_id": fnv1a64_hex(f"member {len(chain.members)}"), "args": args,
                             "sources": sources, "outputs": [spec(o) for o in outs]})
        values = [Value({"member": len(chain.members) - 1, "output": k}, o) for k, o in enumerate(outs)]
        return tuple(values) if isinstance(out, tuple) else values[0]

    def output(self, v, reference=None):
        """Output `v`, judged against eager's value, or `reference` where eager's own rounding is the
        larger error (the exact value rounded to the output's dtype)."""
        self.outputs.append(v)
        self.references.append(v.tensor if reference is None else reference)

    def card(self):
        text = " -> ".join(m["op"][6:] for m in self.members)
        key = "kforge::region(" + json.dumps([m["args"] for m in self.members]) + ")"
        return {"id": fnv1a64_hex(key), "key": key, "op": "kforge::region", "overload": "",
                "schema": "kforge::region(" + ", ".join(f"Tensor in{k}" for k in range(len(self.inputs))) + ")",
                "args": [{"name": f"in{k}", "type": "Tensor", "kind": "tensor", "tensors": [spec(t)], "value": None}
                         for k, t in enumerate(self.inputs)],
                "outputs": [spec(v.tensor) for v in self.outputs], "call_count": 1, "call_positions": [0],
                "vendor_backed": False, "samples": [], "samples_note": "", "eager": None, "eager_note": "",
                "time_share": 0.0,
                "region": {"chain": text, "members": self.members, "outputs": [v.source for v in self.outputs],
                           "occurrences": [list(range(len(self.members)))]}}


def randn(*sizes, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*sizes, generator=g).to(dtype)


def gelu_tanh_written_out():
    c = Chain()
    x = c.input(randn(64, 197) * 3)
    half = c.call("mul", "Scalar", self=x, other=0.5)
    cube = c.call("pow", "Tensor_Scalar", self=x, exponent=3)
    scaled = c.call("mul", "Scalar", self=cube, other=0.044715)
    inner = c.call("add", "Tensor", self=x, other=scaled, alpha=1)
    k = c.call("mul", "Scalar", self=inner, other=math.sqrt(2 / math.pi))
    th = c.call("tanh", self=k)
    one = c.call("add", "Scalar", self=th, other=1.0, alpha=1)
    c.output(c.call("mul", "Tensor", self=half, other=one))
    return c


def silu_gate():
    c = Chain()
    x, y = c.input(randn(32, 200, dtype=torch.float16, seed=1)), c.input(randn(32, 200, dtype=torch.float16, seed=2))
    s = c.call("sigmoid", self=x)
    c.output(c.call("mul", "Tensor", self=c.call("mul", "Tensor", self=x, other=s), other=y))
    return c


def scale_scores_plus_mask():
    c = Chain()
    scores = c.input(randn(2, 4, 16, 33, seed=3))
    mask = c.input(torch.where(randn(2, 1, 16, 33, seed=4) > 1, float("-inf"), 0.0))
    scaled = c.call("mul", "Scalar", self=scores, other=0.125)
    c.output(c.call("add", "Tensor", self=scaled, other=mask, alpha=1))
    return c


def residual_add_relu():
    c = Chain()
    shape = (8, 64, 7, 7)
    x = c.input(randn(*shape, dtype=torch.bfloat16, seed=5).contiguous(memory_format=torch.channels_last))
    r = c.input(randn(*shape, dtype=torch.bfloat16, seed=6).contiguous(memory_format=torch.channels_last))
    c.output(c.call("relu_", self=c.call("add", "Tensor", self=x, other=r, alpha=1)))
    return c


def bf16_chain_with_casts():
    c = Chain()
    x = c.input(randn(16, 96, dtype=torch.bfloat16, seed=7))
    w = c.input(randn(96, dtype=torch.bfloat16, seed=8))
    xf = c.call("to", "dtype", self=x, dtype=torch.float32)
    r = c.call("rsqrt", self=c.call("add", "Scalar", self=c.call("mul", "Tensor", self=xf, other=xf), other=1e-6,
                                    alpha=1))
    hb = c.call("_to_copy", self=c.call("mul", "Tensor", self=xf, other=r), dtype=torch.bfloat16)
    c.output(c.call("mul", "Tensor", self=hb, other=w))
    c.output(hb)
    return c


def per_channel_broadcast():
    c = Chain()
    x = c.input(randn(4, 32, 9, 9, seed=9) * 4)
    scale, shift = c.input(randn(32, 1, 1, seed=10)), c.input(randn(32, 1, 1, seed=11))
    y = c.call("add", "Tensor", self=c.call("mul", "Tensor", self=x, other=scale), other=shift, alpha=1)
    c.output(c.call("hardswish", self=y))
    c.output(c.call("hardsigmoid", self=y))
    return c


def zero_dim_scalar_with_nans():
    c = Chain()
    xs = randn(1001, dtype=torch.float16, seed=12)
    xs[::97] = float("nan")
    ws = randn(1001, dtype=torch.float16, seed=13)
    ws[5::89] = float("nan")
    x, s, w = c.input(xs), c.input(torch.tensor(1.7)), c.input(ws)
    z = c.call("clamp", self=c.call("mul", "Tensor", self=x, other=s), min=-1.0, max=1.0)
    c.output(c.call("maximum", self=z, other=w))
    c.output(c.call("div", "Tensor", self=c.call("relu", self=x), other=s))
    return c


def transposed_input():
    c = Chain()
    a = c.input(randn(40, 48, seed=14).t())
    y = c.input(randn(48, 40, seed=15))
    m = c.call("sigmoid", self=c.call("mul", "Tensor", self=a, other=y))
    d = c.call("sub", "Scalar", self=m, other=0.5, alpha=1)
    c.output(c.call("leaky_relu", self=d, negative_slope=0.2))
    return c


def where_exact_gelu():
    c = Chain()
    xs = randn(3, 50, 7, seed=16) * 2
    x, cond = c.input(xs), c.input(xs > -0.5)
    g = c.call("gelu", self=x, approximate="none")
    w = c.call("where", "ScalarOther", condition=cond, self=g, other=0.0)
    c.output(c.call("exp", self=c.call("minimum", self=w, other=x)))
    return c


def batch_norm_relu_add():
    """ResNet's batch_norm (inference) -> relu_ -> residual add: per-channel statistics."""
    c = Chain()
    x = c.input(randn(4, 16, 7, 7, seed=17) * 3)
    w, b = c.input(randn(16, seed=18)), c.input(randn(16, seed=19))
    mean, var = c.input(randn(16, seed=20)), c.input(randn(16, seed=21).abs() + 0.5)
    r = c.input(randn(4, 16, 7, 7, seed=22))
    y = c.call("batch_norm", input=x, weight=w, bias=b, running_mean=mean, running_var=var,
               training=False, momentum=0.1, eps=1e-5, cudnn_enabled=True)
    c.output(c.call("add", "Tensor", self=c.call("relu_", self=y), other=r, alpha=1))
    return c


def batch_norm_hardswish_half_channels_last():
    """MobileNetV3's batch_norm -> hardswish in float16, channels-last, float32 statistics, no affine."""
    c = Chain()
    x = c.input(randn(8, 24, 5, 5, dtype=torch.float16, seed=23).contiguous(memory_format=torch.channels_last))
    mean, var = c.input(randn(24, seed=24)), c.input(randn(24, seed=25).abs() + 0.5)
    y = c.call("batch_norm", input=x, weight=None, bias=None, running_mean=mean, running_var=var,
               training=False, momentum=0.1, eps=1e-3, cudnn_enabled=True)
    c.output(c.call("hardswish", self=y))
    return c


def rotary_as_transformers_writes_it():
    """q * cos + rotate_half(q) * sin, rotate_half(x) = cat(-x[..., d/2:], x[..., :d/2]): q a
    transposed projection, its halves strided slices of it, cos and sin broadcast over the heads."""
    c = Chain()
    batch, seq, heads, dim = 2, 12, 3, 16
    q = randn(batch, seq, heads * dim, dtype=torch.bfloat16, seed=40).view(batch, seq, heads, dim).transpose(1, 2)
    angles = randn(batch, 1, seq, dim, seed=41)
    qv = c.input(q)
    first, second = c.input(q[..., : dim // 2]), c.input(q[..., dim // 2:])
    cos, sin = c.input(angles.cos().to(torch.bfloat16)), c.input(angles.sin().to(torch.bfloat16))
    rotated = c.call("cat", tensors=[c.call("neg", self=second), first], dim=-1)
    c.output(c.call("add", "Tensor", self=c.call("mul", "Tensor", self=qv, other=cos),
                    other=c.call("mul", "Tensor", self=rotated, other=sin), alpha=1))
    return c


def partial_rotary_as_neox_writes_it():
    """GPT-NeoX / Phi partial rotary: cat(q_rot * cos + rotate_half(q_rot) * sin, q_pass) with
    q_rot, q_pass = q[..., :rot], q[..., rot:] (a cat inside a cat's branch), float16."""
    c = Chain()
    heads, seq, dim, rot = 2, 10, 32, 16
    q = randn(3, seq, heads * dim, dtype=torch.float16, seed=46).view(3, seq, heads, dim).transpose(1, 2)
    angles = randn(3, 1, seq, rot, seed=47)
    q_rot, q_pass = c.input(q[..., :rot]), c.input(q[..., rot:])
    second, first = c.input(q[..., rot // 2:rot]), c.input(q[..., :rot // 2])
    cos, sin = c.input(angles.cos().to(torch.float16)), c.input(angles.sin().to(torch.float16))
    rotated = c.call("cat", tensors=[c.call("neg", self=second), first], dim=-1)
    embedded = c.call("add", "Tensor", self=c.call("mul", "Tensor", self=q_rot, other=cos),
                      other=c.call("mul", "Tensor", self=rotated, other=sin), alpha=1)
    c.output(c.call("cat", tensors=[embedded, q_pass], dim=-1))
    return c


def cat_of_cats_along_two_dims():
    """A cat along the rows of two cats along the columns, one of them reading one input twice."""
    c = Chain()
    x, y = c.input(randn(4, 8, seed=48)), c.input(randn(4, 8, seed=49))
    left = c.call("cat", tensors=[c.call("neg", self=x), x], dim=1)
    right = c.call("cat", tensors=[c.call("exp", self=y), c.call("mul", "Tensor", self=x, other=y)], dim=1)
    c.output(c.call("relu", self=c.call("cat", tensors=[left, right], dim=0)))
    return c


def cat_on_an_outer_dim():
    """A cat along dim 1 of branches of 3 and 5 rows (one broadcast over the last dim, one a chain of
    two inputs), then an op with a third input: the branches' boundary inside a vector's reach."""
    c = Chain()
    a = c.input(randn(4, 3, 1, seed=42))
    b, e = c.input(randn(4, 5, 6, seed=43)), c.input(randn(5, 6, seed=44))
    other = c.input(randn(4, 8, 6, seed=45))
    ones = c.input(torch.ones(4, 3, 6))
    top = c.call("mul", "Tensor", self=c.call("exp", self=a), other=ones)
    joined = c.call("cat", tensors=[top, c.call("sub", "Tensor", self=b, other=e, alpha=2)], dim=1)
    c.output(c.call("mul", "Tensor", self=joined, other=other))
    return c


def randint(low, high, *sizes, dtype=torch.int64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(low, high, sizes, generator=g, dtype=torch.int64).to(dtype)


def attention_mask_int64():
    """An int64 attention mask into the scores: (1 - mask.to(float32)) * -1e9 + scores."""
    c = Chain()
    scores = c.input(randn(2, 4, 16, 33, seed=26))
    mask = c.input(randint(0, 2, 2, 1, 1, 33, seed=27))
    inverted = c.call("rsub", "Scalar", self=c.call("to", "dtype", self=mask, dtype=torch.float32), other=1.0, alpha=1)
    c.output(c.call("add", "Tensor", self=scores, other=c.call("mul", "Scalar", self=inverted, other=-1e9), alpha=1))
    return c


def int_chain_wraps_and_divides():
    """int32 products that overflow, floor division and remainder of negative values, clamp, where,
    a comparison and casts into int16 and bool: integer, exact."""
    c = Chain()
    xs = randint(-2**31, 2**31, 12, 37, dtype=torch.int32, seed=28)
    xs.view(-1)[:4] = torch.tensor([2**31 - 1, -2**31, -7, 7], dtype=torch.int32)
    ys = randint(1, 9, 37, dtype=torch.int32, seed=29) * (randint(0, 2, 37, dtype=torch.int32, seed=30) * 2 - 1)
    x, y = c.input(xs), c.input(ys)
    cond = c.input(randint(0, 2, 12, 1, seed=31).bool())
    p = c.call("mul", "Tensor", self=x, other=y)
    q = c.call("div", "Tensor_mode", self=p, other=y, rounding_mode="floor")
    r = c.call("remainder", "Scalar", self=c.call("add", "Scalar", self=q, other=7, alpha=3), other=-5)
    c.output(c.call("where", "ScalarOther", condition=cond, self=c.call("clamp", self=r, min=-3, max=2), other=9))
    c.output(c.call("to", "dtype", self=p, dtype=torch.int16))
    c.output(c.call("ge", "Tensor", self=p, other=x))
    return c


def int_broadcast_into_float():
    """Integer tensors broadcast against float ones: int32 positions [8, 1, 40] plus float16 [8, 5, 40]
    (eager reads the integer in float16), int64 values near 2^40 into bfloat16 and float32."""
    c = Chain()
    h = c.input(randn(8, 5, 40, dtype=torch.float16, seed=32) * 4)
    positions = c.input(randint(-3000, 3000, 8, 1, 40, dtype=torch.int32, seed=33))
    big = c.input(randint(2**40, 2**40 + 2**20, 8, 5, 40, seed=34) * 2 + 1)
    c.output(c.call("add", "Tensor", self=h, other=positions, alpha=1))
    c.output(c.call("to", "dtype", self=big, dtype=torch.bfloat16))
    c.output(c.call("mul", "Tensor", self=c.call("to", "dtype", self=h, dtype=torch.float32), other=big))
    return c


CASES = {f.__name__: f for f in [batch_norm_relu_add, batch_norm_hardswish_half_channels_last, gelu_tanh_written_out, silu_gate, scale_scores_plus_mask, residual_add_relu,
                                 bf16_chain_with_casts, per_channel_broadcast, zero_dim_scalar_with_nans,
                                 transposed_input, where_exact_gelu, attention_mask_int64,
                                 int_chain_wraps_and_divides, int_broadcast_into_float,
                                 rotary_as_transformers_writes_it, cat_on_an_outer_dim,
                                 partial_rotary_as_neox_writes_it, cat_of_cats_along_two_dims]}


def compare_outputs(got, expected):
    """compare(), with integer and bool outputs equal bit for bit (its comparison in double cannot
    tell 2^62 + 1 from 2^62)."""
    for i, (g, e) in enumerate(zip(got, expected)):
        if not e.dtype.is_floating_point and (g.dtype != e.dtype or not torch.equal(g, e)):
            bad = (g != e).nonzero()
            where = tuple(int(v) for v in bad[0]) if len(bad) else ()
            return (f"output {i}: {g.dtype}, eager {e.dtype}; {len(bad)} of {e.numel()} elements differ"
                    + (f"; at {list(where)} got {g[where].item()}, eager {e[where].item()}" if where else ""))
    return compare(got, expected)


def emulate(name, chain, work, args):
    """Problems of one case (empty when every candidate matches eager), and the candidates run."""
    case_dir = os.path.join(work, name)
    os.makedirs(case_dir)
    card = chain.card()
    card_file = os.path.join(case_dir, "card.json")
    with open(card_file, "w") as f:
        json.dump(card, f)
    dumped = subprocess.run([args.dump, card_file, case_dir, str(args.variants)], capture_output=True, text=True)
    if dumped.returncode != 0:
        return [f"{name}: {dumped.stdout.strip() or dumped.stderr.strip()}"], 0
    tensors = {f"in{k}": t for k, t in enumerate(chain.inputs)}
    runner = Runner(case_dir, card, tensors, {}, args.cuda_include)
    expected = chain.references
    count = int(dumped.stdout.strip())
    return run_candidates(name, case_dir, count, runner, lambda got: compare_outputs(got, expected)), count


def run_candidates(name, case_dir, count, runner, check):
    """Runs candidates 0..count-1 of case_dir; the problems `check` (outputs -> problem or None) finds."""
    problems = []
    for k in range(count):
        with open(os.path.join(case_dir, f"{k}.json")) as f:
            plan = json.load(f)
        try:
            problem = check(runner.run(f"{k}.cu", plan))
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            problem = str(e)
        if problem:
            problems.append(f"{name} candidate {k}: {problem}")
    return problems


def parse_arguments(description, cases, variants):
    """The command line these scripts share; (args, None), or (None, 77) when the host cannot emulate."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--dump", required=True, help="the kforge_kernel_dump test helper")
    parser.add_argument("--cuda-include", help="the CUDA toolkit include directory (cuda_fp16.h, cuda_bf16.h)")
    parser.add_argument("--variants", type=int, default=variants, help="candidates per card: the root and neighbours")
    parser.add_argument("--only", nargs="+", choices=sorted(cases), help="run these cases only")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    if shutil.which(os.environ.get("CXX", "g++")) is None:
        print("skipped: no host C++ compiler")
        return None, 77
    if not args.cuda_include or not os.path.exists(os.path.join(args.cuda_include, "cuda_bf16.h")):
        print("skipped: no CUDA include directory with cuda_bf16.h (--cuda-include)")
        return None, 77
    return args, None


def run_cases(description, cases, prefix):
    """Every case (or --only's) emulated against eager, with a line each and the summary; the exit
    status (77: skipped)."""
    args, skipped = parse_arguments(description, cases, 3)
    if skipped:
        return skipped
    work = tempfile.mkdtemp(prefix=prefix)
    failures, checked = [], 0
    try:
        for name in args.only or cases:
            problems, count = emulate(name, cases[name](), work, args)
            print(f"  {name}: {count} candidate(s) emulated, {len(problems)} failure(s)", flush=True)
            failures += problems
            checked += count
    finally:
        clean_up(work, args.keep)
    return summary(checked, failures)


def main():
    return run_cases(__doc__.split("\n\n")[0], CASES, "kforge-regions-")


if __name__ == "__main__":
    sys.exit(main())
