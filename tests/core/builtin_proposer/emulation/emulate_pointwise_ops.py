#!/usr/bin/env python3
"""CPU test: the pointwise table's activations, rounding, comparison, logical, bitwise, selection,
power and rounding-division rows, as region chains and as single-op cards, run by the host emulation of CUDA
against eager PyTorch.

Chains are built and run in torch on the CPU as emulate_pointwise_regions.py builds them; a
single-op case writes the op's own card (its schema arguments, no region), which the built-in
proposer routes to the pointwise generator as a one-member chain. In-place single-op cards run as
the evaluator runs them: `self` and output 0 are one buffer that starts with self's values.
Inputs hold NaN, +-inf, -0 and halfway values; operands broadcast; float32, float16, bfloat16 and
bool; and integer tensors (int64, int32, int16, int8, uint8: wrap-around near the limits, floor
division and remainder of negative values, int64 comparisons beyond float32's integers, selections,
casts from and to floats and bools, integers read by float ops). Every candidate must match eager
within the elementwise tolerance of core/checks/Tolerance.cpp (integer and bool outputs and the
cases marked exact: equal, bit for bit; NaN where eager has NaN).

Eager's CPU kernels differ from its CUDA ones (which the kernels follow) in places the inputs here
stay clear of: sign(NaN) is 0 on both; CPU softshrink and threshold compare a bfloat16 / float16
tensor with the unrounded Python scalar where CUDA rounds it to the tensor's dtype first (the
shrink and threshold cases use scalars the 16-bit dtypes hold exactly; PointwiseExpressionTest
checks the rounding in the generated code). Cases marked "refused" must be refused.

Skipped (exit 77) without torch, a host C++ compiler or the CUDA include directory.
Usage: emulate_pointwise_ops.py --dump build/.../kforge_kernel_dump --cuda-include DIR
                                [--variants 2] [--only NAME ...] [--keep]
"""
import json
import math
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# emulate_pointwise_regions exits 77 (skipped) when torch is not installed.
from emulate_pointwise_regions import (NAMES, SCALAR_TYPE, Chain, fnv1a64_hex, parse_arguments,  # noqa: E402
                                       randn, run_candidates, spec)
import torch  # noqa: E402

from emulate_builtin_families import Runner, clean_up, summary  # noqa: E402


# core/checks/Tolerance.cpp, toleranceFor(dtype, OpClass::Elementwise).
ELEMENTWISE = {torch.float32: (1e-6, 1e-5), torch.float16: (1e-4, 2e-3), torch.bfloat16: (1e-3, 1.6e-2)}
NAN, INF = float("nan"), float("inf")


def specials(t):
    """`t` with NaN, +-inf, -0, +0 and a few halfway values written over its first elements."""
    t = t.clone()
    flat = t.view(-1)
    values = [NAN, INF, -INF, -0.0, 0.0, 0.5, 1.5, 2.5, -0.5, -2.5]
    flat[:len(values)] = torch.tensor(values, dtype=t.dtype)
    return t


def compare(got, expected, exact):
    """None when every output matches eager, else the first problem."""
    if len(got) != len(expected):
        return f"{len(got)} outputs, eager gave {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        if g.shape != e.shape or g.dtype != e.dtype:
            return f"output {i}: {g.dtype} {list(g.shape)}, eager {e.dtype} {list(e.shape)}"
        if not e.dtype.is_floating_point:  # integers and bools bit for bit (double cannot tell 2^62 + 1 from 2^62)
            bad = g != e
            if bad.any():
                where = tuple(int(x) for x in bad.nonzero()[0])
                return (f"output {i}: {int(bad.sum())} of {e.numel()} elements differ; at {list(where)} got "
                        f"{g[where].item()}, eager {e[where].item()}")
            continue
        atol, rtol = (0.0, 0.0) if exact or e.dtype not in ELEMENTWISE else ELEMENTWISE[e.dtype]
        g, e = g.double(), e.double()
        bad = ~((g - e).abs() <= atol + rtol * e.abs()) & ~(torch.isnan(g) & torch.isnan(e)) & ~(g == e)
        if bad.any():
            where = tuple(int(x) for x in bad.nonzero()[0])
            return (f"output {i}: {int(bad.sum())} of {e.numel()} elements differ; at {list(where)} got "
                    f"{g[where].item():.9g}, eager {e[where].item():.9g}")
    return None


class Single:
    """A single-op card: the op's schema arguments (Values of inputs, Python scalars, None), its output."""

    def __init__(card, op, overload="default", **kwargs):  # noqa: N805 (an argument may be named self)
        card.inputs = []
        packet = getattr(torch.ops.aten, op)
        schema = getattr(packet, overload)._schema
        positional, keywords, args = [], {}, []
        for argument in schema.arguments:
            if argument.name not in kwargs:
                continue
            v = kwargs[argument.name]
            eager = v.clone() if isinstance(v, torch.Tensor) else v  # an in-place op writes its copy
            if argument.kwarg_only:
                keywords[argument.name] = eager
            else:
                positional.append(eager)
            entry = {"name": argument.name, "type": str(argument.type), "tensors": [], "value": None}
            if isinstance(v, torch.Tensor):
                entry.update(kind="tensor", tensors=[spec(v)])
                card.inputs.append((argument.name, v))
            elif v is None:
                entry["kind"] = "none"
            else:
                entry.update(kind="value", value=SCALAR_TYPE[v] if isinstance(v, torch.dtype) else v)
            args.append(entry)
        out = getattr(packet, overload)(*positional, **keywords)
        card.outputs = [out]
        key = f"aten::{op}.{overload}(" + json.dumps(args) + ")"
        card.json = {"id": fnv1a64_hex(key), "key": key, "op": "aten::" + op,
                     "overload": "" if overload == "default" else overload, "schema": str(schema), "args": args,
                     "outputs": [spec(out)], "call_count": 1, "call_positions": [0], "vendor_backed": False,
                     "samples": [], "samples_note": "", "eager": None, "eager_note": "", "time_share": 0.0}

    def card(self):
        return self.json

    def tensors(self):
        return dict(self.inputs)

    def expected(self):
        return self.outputs


class InPlaceRunner(Runner):
    """The evaluator's binding of an in-place op: `ptr:self` is output 0's buffer, filled with self."""

    def buffers(self, plan):
        out = super().buffers(plan)
        out["out:0"] = out.pop("in:self")
        return out

    def argument(self, token, names):
        return super().argument("ptr:out0" if token == "ptr:self" else token, names)


def capture_spelling(card):
    """The card as the capture writes it: non-finite Python floats as "inf", "-inf", "nan"."""
    members = card.get("region", {}).get("members", [])
    for arg in [a for m in members for a in m["args"]] + card["args"]:
        v = arg.get("value")
        if isinstance(v, float) and not math.isfinite(v):
            arg["value"] = "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return card


def chain_case(chain):
    chain.tensors = lambda: {f"in{k}": t for k, t in enumerate(chain.inputs)}
    chain.expected = lambda: [v.tensor for v in chain.outputs]
    return chain


def activations_f32():
    c = Chain()
    x = c.input(specials(randn(8, 125, seed=1) * 4))
    c.output(c.call("elu", self=x, alpha=1.3, scale=1.1, input_scale=0.9))
    c.output(c.call("selu", self=x))
    c.output(c.call("celu", self=x, alpha=0.7))
    c.output(c.call("softplus", self=x, beta=2.0, threshold=5.0))
    c.output(c.call("mish", self=x))
    c.output(c.call("softshrink", self=x, lambd=0.3))
    return chain_case(c)


def activations_bf16():
    c = Chain()
    x = c.input(specials(randn(6, 97, dtype=torch.bfloat16, seed=2) * 3))
    h = c.call("hardtanh", self=x, min_val=-0.5, max_val=0.75)
    c.output(c.call("mul", "Scalar", self=h, other=3.0))
    c.output(c.call("relu6", self=c.call("mul", "Scalar", self=x, other=4.0)))
    c.output(c.call("hardshrink", self=x, lambd=0.3))  # CPU and CUDA both compare with bfloat16(0.3)
    c.output(c.call("softshrink", self=x, lambd=0.375))
    c.output(c.call("threshold", self=x, threshold=0.25, value=20.0))
    return chain_case(c)


def activations_f16_in_place():
    c = Chain()
    x = c.input(specials(randn(4, 33, dtype=torch.float16, seed=3) * 5))
    y = c.call("mul", "Scalar", self=x, other=2.0)
    c.output(c.call("hardtanh_", self=y, min_val=0.0, max_val=6.0))
    return chain_case(c)


def rounding_f16():
    c = Chain()
    x = c.input(specials(randn(5, 41, dtype=torch.float16, seed=4) * 6))
    for op in ("floor", "ceil", "round", "trunc", "frac", "sign"):
        c.output(c.call(op, self=x))
    c.output(c.call("round", "decimals", self=x, decimals=0))
    return chain_case(c)


def unary_math_f32():
    c = Chain()
    x = c.input(specials(randn(3, 77, seed=5) * 3))
    p = c.input(specials(torch.rand(3, 77, generator=torch.Generator().manual_seed(6)) * 2.2 - 1.1))
    for op in ("expm1", "exp2", "square"):
        c.output(c.call(op, self=x))
    for op in ("log1p", "log2", "log10", "erfinv"):
        c.output(c.call(op, self=p))
    return chain_case(c)


def unary_math_bf16():
    c = Chain()
    x = c.input(specials(randn(2, 64, dtype=torch.bfloat16, seed=7)))
    c.output(c.call("erfinv", self=c.call("tanh", self=x)))
    c.output(c.call("log1p", self=c.call("expm1", self=x)))
    c.output(c.call("sign", self=x))
    return chain_case(c)


def compare_broadcast_f32():
    c = Chain()
    a = specials(randn(4, 1, 33, seed=8).round())
    b = randn(5, 33, seed=9).round()
    b[0, :4] = torch.tensor([NAN, INF, 0.0, -0.0])
    x, y = c.input(a), c.input(b)
    for op in ("eq", "ne", "lt", "le", "gt", "ge"):
        c.output(c.call(op, "Tensor", self=x, other=y))
    return chain_case(c)


def compare_scalar_bf16():
    c = Chain()
    t = randn(3, 40, dtype=torch.bfloat16, seed=10)
    t.view(-1)[:6] = torch.tensor([0.10009765625, 0.099609375, 0.1, NAN, -0.0, 0.0], dtype=torch.bfloat16)
    x = c.input(t)
    for op in ("eq", "ne", "lt", "le", "gt", "ge"):
        c.output(c.call(op, "Scalar", self=x, other=0.1))  # 0.1 becomes bfloat16 0.10009765625, as eager
    return chain_case(c)


def logical_and_bool_math():
    c = Chain()
    xs = specials(randn(6, 50, seed=11).round())
    x = c.input(xs)
    m = c.input(randn(6, 50, seed=12) > 0)
    n = c.input(randn(1, 50, seed=13) > 0.5)
    c.output(c.call("logical_and", self=x, other=m))
    c.output(c.call("logical_or", self=x, other=n))
    c.output(c.call("logical_xor", self=m, other=n))
    c.output(c.call("logical_not", self=x))
    c.output(c.call("bitwise_not", self=m))
    both = c.call("add", "Tensor", self=m, other=n, alpha=1)  # bool + bool is true, not 2
    c.output(c.call("mul", "Tensor", self=x, other=both))
    c.output(c.call("mul", "Tensor", self=x, other=c.call("gt", "Scalar", self=x, other=0)))
    return chain_case(c)


def selection_and_interpolation_f16():
    c = Chain()
    x = c.input(specials(randn(7, 35, dtype=torch.float16, seed=14)))
    y = c.input(randn(7, 35, dtype=torch.float16, seed=15))
    w = c.input(torch.rand(1, 35, generator=torch.Generator().manual_seed(16)).half())
    m = c.input(randn(1, 35, seed=17) > 0)
    c.output(c.call("masked_fill", "Scalar", self=x, mask=m, value=-INF))
    c.output(c.call("lerp", "Scalar", self=x, end=y, weight=0.3))
    c.output(c.call("lerp", "Scalar", self=x, end=y, weight=0.7))
    c.output(c.call("lerp", "Tensor", self=x, end=y, weight=w))
    c.output(c.call("addcmul", self=x, tensor1=y, tensor2=w, value=0.5))
    c.output(c.call("addcdiv", self=x, tensor1=y, tensor2=w, value=-2.0))
    return chain_case(c)


def div_modes_f32():
    c = Chain()
    a = specials(randn(4, 60, seed=18) * 10)
    b = randn(4, 60, seed=19) * 3
    b.view(-1)[10:14] = torch.tensor([0.0, -0.0, NAN, -INF])
    x, y = c.input(a), c.input(b)
    c.output(c.call("div", "Tensor_mode", self=x, other=y, rounding_mode="trunc"))
    c.output(c.call("div", "Tensor_mode", self=x, other=y, rounding_mode="floor"))
    c.output(c.call("div", "Scalar_mode", self=x, other=-0.7, rounding_mode="floor"))
    c.output(c.call("div", "Scalar_mode", self=x, other=4.0, rounding_mode="trunc"))
    c.output(c.call("div", "Scalar_mode", self=x, other=0.0, rounding_mode="floor"))
    return chain_case(c)


def fmod_remainder_f32():
    c = Chain()
    a = specials(randn(4, 50, seed=44) * 10)
    b = randn(4, 50, seed=45) * 3
    b.view(-1)[5:9] = torch.tensor([0.0, -0.0, NAN, -INF])
    x, y = c.input(a), c.input(b)
    c.output(c.call("fmod", "Tensor", self=x, other=y))
    c.output(c.call("remainder", "Tensor", self=x, other=y))
    c.output(c.call("fmod", "Scalar", self=x, other=-0.7))
    c.output(c.call("remainder", "Scalar", self=x, other=2.5))
    return chain_case(c)


def single(op, overload="default", **kwargs):
    return Single(op, overload, **kwargs)


# Integer and bool tensors: exact integer code, compared bit for bit. Divisors are never 0 (eager
# raises ZeroDivisionError on the CPU; the kernels' result is undefined there), and float -> int
# casts take finite values in the target's range (eager's conversion is undefined beyond it).
I64_MAX, I64_MIN = 2**63 - 1, -2**63


def ints(values, dtype=torch.int64):
    return torch.tensor(values, dtype=dtype)


def randint(low, high, *sizes, dtype=torch.int64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(low, high, sizes, generator=g, dtype=torch.int64).to(dtype)


def int64_add_wraps():
    a = randint(-2**62, 2**62, 5, 24, seed=50)
    a.view(-1)[:4] = ints([I64_MAX, I64_MAX - 5, I64_MIN, I64_MIN + 3])
    b = randint(-100, 100, 5, 24, seed=51)
    b.view(-1)[:4] = ints([1, 10, -1, -10])
    return single("add", "Tensor", self=a, other=b, alpha=1)


def int_arithmetic_wraps():
    c = Chain()
    x = c.input(randint(-2**31, 2**31, 6, 33, dtype=torch.int32, seed=52))
    y = c.input(randint(-2**31, 2**31, 33, dtype=torch.int32, seed=53))
    u = c.input(randint(0, 256, 6, 33, dtype=torch.uint8, seed=54))
    s8 = ints([-128, 127, -1, 0, 5, -100] * 33, torch.int8).view(6, 33)
    i8 = c.input(s8)
    c.output(c.call("mul", "Tensor", self=x, other=y))  # overflows and wraps
    c.output(c.call("sub", "Tensor", self=x, other=y, alpha=3))
    c.output(c.call("sub", "Scalar", self=u, other=200, alpha=1))  # uint8 wraps below 0
    c.output(c.call("rsub", "Scalar", self=u, other=3, alpha=2))
    c.output(c.call("neg", self=i8))  # -128 stays -128
    c.output(c.call("abs", self=i8))
    c.output(c.call("square", self=i8))
    c.output(c.call("sign", self=i8))
    c.output(c.call("add", "Scalar", self=i8, other=1000, alpha=1))  # 1000 wraps into int8
    c.output(c.call("bitwise_not", self=u))
    c.output(c.call("relu", self=i8))
    return chain_case(c)


def int_division_of_negatives():
    c = Chain()
    a = randint(-1000, 1000, 4, 40, seed=55)
    a.view(-1)[:6] = ints([-7, 7, -7, 7, I64_MIN, I64_MIN])
    b = randint(1, 12, 4, 40, seed=56) * (randint(0, 2, 4, 40, seed=57) * 2 - 1)
    b.view(-1)[:6] = ints([2, -2, -2, 2, -3, 3])
    x, y = c.input(a), c.input(b)
    c.output(c.call("div", "Tensor_mode", self=x, other=y, rounding_mode="floor"))
    c.output(c.call("div", "Tensor_mode", self=x, other=y, rounding_mode="trunc"))
    c.output(c.call("remainder", "Tensor", self=x, other=y))
    c.output(c.call("fmod", "Tensor", self=x, other=y))
    c.output(c.call("div", "Scalar_mode", self=x, other=-3, rounding_mode="floor"))
    c.output(c.call("remainder", "Scalar", self=x, other=-3))
    c.output(c.call("div", "Tensor", self=x, other=y))  # true division: float32
    c.output(c.call("div", "Scalar_mode", self=x, other=2.0, rounding_mode="floor"))  # float32 by a float
    return chain_case(c)


def int_division_of_the_minimum():
    """The minimum over -1 wraps in floor division and gives 0 in remainder and fmod (eager's CPU
    truncating division traps on it: not asked here)."""
    c = Chain()
    lowest = c.input(ints([I64_MIN, I64_MIN + 1, -5, I64_MIN]))
    minus_one = c.input(ints([-1, -1, -1, 1]))
    c.output(c.call("div", "Tensor_mode", self=lowest, other=minus_one, rounding_mode="floor"))
    c.output(c.call("remainder", "Tensor", self=lowest, other=minus_one))
    c.output(c.call("fmod", "Tensor", self=lowest, other=minus_one))
    return chain_case(c)


def int64_comparisons_beyond_float():
    c = Chain()
    base = 2**24
    a = ints([base + 1, base, base + 1, base - 1, 2**62 + 1, 2**62, -base - 1, 7] * 5).view(5, 8)
    b = ints([base, base + 1, base + 1, base, 2**62, 2**62 + 1, -base, 7])
    x, y = c.input(a), c.input(b)
    for op in ("eq", "ne", "lt", "le", "gt", "ge"):
        c.output(c.call(op, "Tensor", self=x, other=y))
    c.output(c.call("eq", "Scalar", self=x, other=base + 1))
    c.output(c.call("gt", "Scalar", self=x, other=base))
    c.output(c.call("lt", "Scalar", self=x, other=base + 0.5))  # a Python float: compared in float32, as eager
    c.output(c.call("maximum", self=x, other=y))
    c.output(c.call("minimum", self=x, other=y))
    c.output(c.call("clamp", self=x, min=base - 1, max=base))
    return chain_case(c)


def int_selection_and_logic():
    c = Chain()
    x = c.input(randint(-50, 50, 6, 30, dtype=torch.int32, seed=58))
    y = c.input(randint(-50, 50, 30, dtype=torch.int32, seed=59))
    m = c.input(randint(0, 2, 6, 1, seed=60).bool())
    i8 = c.input(randint(-128, 128, 6, 30, dtype=torch.int8, seed=61))
    c.output(c.call("where", "self", condition=m, self=x, other=y))
    c.output(c.call("where", "ScalarOther", condition=m, self=x, other=-7))
    c.output(c.call("masked_fill", "Scalar", self=x, mask=m, value=123))
    c.output(c.call("masked_fill", "Scalar", self=x, mask=m, value=-2.7))  # truncated toward zero: -2
    c.output(c.call("logical_and", self=x, other=y))
    c.output(c.call("logical_xor", self=x, other=m))
    c.output(c.call("logical_not", self=x))
    c.output(c.call("lt", "Scalar", self=i8, other=300))  # 300 is int8 44 to eager
    c.output(c.call("clamp_min", self=i8, min=-5))
    c.output(c.call("clamp_max", "Tensor", self=x, max=y))
    return chain_case(c)


def casts_between_ints_and_floats():
    c = Chain()
    f = randn(4, 40, seed=62) * 50
    f.view(-1)[:6] = torch.tensor([-0.7, -1.5, 2.9, -2.9, 0.0, -0.0])
    x = c.input(f)
    big = c.input(ints([2**40 + 2**16 + 1, 2**60 + 2**52 + 1, -(2**33) - 3, 16777217, 16777219, 3, 2**62 + 1,
                        -1] * 20).view(4, 40))
    m = c.input(randint(0, 2, 4, 40, seed=63).bool())
    c.output(c.call("to", "dtype", self=x, dtype=torch.int32))  # negative fractions truncate toward zero
    c.output(c.call("to", "dtype", self=c.call("abs", self=x), dtype=torch.uint8))
    c.output(c.call("to", "dtype", self=c.call("clamp", self=x, min=-128.0, max=127.0), dtype=torch.int8))
    c.output(c.call("to", "dtype", self=big, dtype=torch.bfloat16))  # rounds through float, as c10
    c.output(c.call("to", "dtype", self=big, dtype=torch.float16))
    c.output(c.call("to", "dtype", self=big, dtype=torch.float32))
    c.output(c.call("to", "dtype", self=big, dtype=torch.int16))  # keeps the low bits
    c.output(c.call("to", "dtype", self=m, dtype=torch.int32))
    c.output(c.call("to", "dtype", self=big, dtype=torch.bool))
    c.output(c.call("exp", self=c.call("to", "dtype", self=m, dtype=torch.int64)))  # float op of an int: float32
    return chain_case(c)


def int_mixed_with_half():
    c = Chain()
    i = c.input(ints([2049, 2051, -2049, 4097, 7, 65519, 1, 0] * 4).view(4, 8))
    h = c.input(torch.full((4, 8), 0.5, dtype=torch.float16))
    c.output(c.call("add", "Tensor", self=i, other=h, alpha=1))  # the int is read in float16 first
    c.output(c.call("mul", "Tensor", self=h, other=i))
    return chain_case(c)


def bitwise_ops_bool_and_ints():
    c = Chain()
    a = c.input(randn(6, 40, seed=79) > 0)
    b = c.input(randn(40, seed=80) > 0.3)
    x = c.input(randint(-2**31, 2**31, 6, 40, dtype=torch.int32, seed=81))
    y = c.input(randint(-2**31, 2**31, 40, dtype=torch.int32, seed=82))
    u = c.input(randint(0, 256, 6, 40, dtype=torch.uint8, seed=83))
    i8 = c.input(randint(-128, 128, 6, 40, dtype=torch.int8, seed=84))
    c.output(c.call("__and__", "Tensor", self=a, other=b))  # `a & b` as a trace writes it
    c.output(c.call("__or__", "Tensor", self=a, other=b))
    c.output(c.call("bitwise_xor", "Tensor", self=a, other=b))
    c.output(c.call("bitwise_and", "Tensor", self=x, other=y))
    c.output(c.call("__or__", "Tensor", self=x, other=y))
    c.output(c.call("__xor__", "Tensor", self=u, other=i8))  # uint8 ^ int8 is int16: sign-extended
    c.output(c.call("bitwise_and", "Scalar", self=u, other=0x0F))
    c.output(c.call("__or__", "Scalar", self=a, other=True))
    c.output(c.call("__and__", "Scalar", self=a, other=3))  # bool & int is int64
    return chain_case(c)


def pow_of_tensors():
    c = Chain()
    base = c.input(randn(5, 30, seed=85).abs() * 3)
    exponent = c.input(specials(randn(5, 30, seed=86)))
    hb = c.input(randn(30, dtype=torch.bfloat16, seed=87).abs() + 0.5)
    he = c.input(randn(5, 30, dtype=torch.bfloat16, seed=88))
    c.output(c.call("pow", "Tensor_Tensor", self=base, exponent=exponent))
    c.output(c.call("pow", "Tensor_Tensor", self=hb, exponent=he))  # broadcast base, bfloat16
    c.output(c.call("pow", "Scalar", self=2, exponent=exponent))  # `2 ** x`
    c.output(c.call("pow", "Scalar", self=0.1, exponent=he))  # the base in bfloat16 first
    return chain_case(c)


CASES = {
    # name: (builder, exact)
    "activations_f32": (activations_f32, False),
    "activations_bf16": (activations_bf16, False),
    "activations_f16_in_place": (activations_f16_in_place, True),
    "rounding_f16": (rounding_f16, True),
    "unary_math_f32": (unary_math_f32, False),
    "unary_math_bf16": (unary_math_bf16, False),
    "compare_broadcast_f32": (compare_broadcast_f32, True),
    "compare_scalar_bf16": (compare_scalar_bf16, True),
    "logical_and_bool_math": (logical_and_bool_math, True),
    "selection_and_interpolation_f16": (selection_and_interpolation_f16, False),
    "div_modes_f32": (div_modes_f32, True),
    "single_elu_f32": (lambda: single("elu", self=specials(randn(9, 31, seed=20) * 3), alpha=1.0, scale=1.0,
                                      input_scale=1.0), False),
    "single_softplus_bf16": (lambda: single("softplus", self=specials(randn(9, 31, dtype=torch.bfloat16, seed=21) * 9),
                                            beta=1.0, threshold=20.0), False),
    "single_masked_fill_f16_broadcast": (lambda: single("masked_fill", "Scalar",
                                                        self=specials(randn(2, 3, 40, dtype=torch.float16, seed=22)),
                                                        mask=randn(3, 1, seed=23) > 0, value=300.7), True),
    "single_masked_fill_tensor_f32": (lambda: single("masked_fill", "Tensor", self=specials(randn(5, 21, seed=24)),
                                                     mask=randn(5, 21, seed=25) > 0,
                                                     value=torch.tensor(-3.5)), True),
    "single_lt_scalar_bf16": (lambda: single("lt", "Scalar", self=specials(randn(8, 16, dtype=torch.bfloat16,
                                                                                  seed=26)), other=0.1), True),
    "single_eq_tensor_broadcast_f32": (lambda: single("eq", "Tensor", self=specials(randn(6, 20, seed=27).round()),
                                                      other=randn(20, seed=28).round()), True),
    "single_logical_not_bool": (lambda: single("logical_not", self=randn(70, seed=29) > 0), True),
    "single_div_floor_f32": (lambda: single("div", "Tensor_mode", self=specials(randn(7, 19, seed=30) * 9),
                                            other=randn(7, 19, seed=31) * 2, rounding_mode="floor"), True),
    "single_pow_cube_f16": (lambda: single("pow", "Tensor_Scalar", self=specials(randn(50, dtype=torch.float16,
                                                                                   seed=32)), exponent=3), False),
    "single_pow_general_f32": (lambda: single("pow", "Tensor_Scalar", self=randn(50, seed=33).abs(),
                                              exponent=1.7), False),
    "single_hardtanh_inplace_bf16": (lambda: single("hardtanh_", self=specials(randn(3, 50, dtype=torch.bfloat16,
                                                                                     seed=34) * 2),
                                                    min_val=-1.0, max_val=1.0), True),
    "single_add_scalar_inplace_f32": (lambda: single("add_", "Scalar", self=specials(randn(4, 33, seed=35)),
                                                     other=2.5, alpha=2), False),
    "single_clamp_f16": (lambda: single("clamp", self=specials(randn(60, dtype=torch.float16, seed=36) * 3),
                                        min=-1.0, max=2.0), True),
    "single_where_broadcast_f32": (lambda: single("where", "self", condition=randn(3, 1, seed=37) > 0,
                                                  self=specials(randn(3, 44, seed=38)),
                                                  other=randn(44, seed=39)), True),
    "single_sign_f16": (lambda: single("sign", self=specials(randn(40, dtype=torch.float16, seed=40))), True),
    "single_round_f32": (lambda: single("round", self=specials(randn(40, seed=41) * 4)), True),
    "single_exp_transposed_f32": (lambda: single("exp", self=randn(24, 40, seed=42).t()), False),
    "single_erfinv_f32": (lambda: single("erfinv", self=torch.rand(64, generator=torch.Generator().manual_seed(43))
                                         * 2 - 1), False),
    "fmod_remainder_f32": (fmod_remainder_f32, True),
    "single_erfc_f32": (lambda: single("erfc", self=specials(randn(64, seed=46) * 3)), False),
    "single_clip_bf16": (lambda: single("clip", self=specials(randn(60, dtype=torch.bfloat16, seed=47) * 3),
                                        min=-1.0, max=2.0), True),
    "int64_add_wraps": (int64_add_wraps, True),
    "int_arithmetic_wraps": (int_arithmetic_wraps, True),
    "int_division_of_negatives": (int_division_of_negatives, True),
    "int_division_of_the_minimum": (int_division_of_the_minimum, True),
    "int64_comparisons_beyond_float": (int64_comparisons_beyond_float, True),
    "int_selection_and_logic": (int_selection_and_logic, True),
    "casts_between_ints_and_floats": (casts_between_ints_and_floats, True),
    "int_mixed_with_half": (int_mixed_with_half, True),
    "single_int32_mul_overflow": (lambda: single("mul", "Tensor", self=randint(-2**31, 2**31, 9, 17, dtype=torch.int32,
                                                                               seed=64),
                                                 other=randint(-2**31, 2**31, 9, 17, dtype=torch.int32, seed=65)),
                                  True),
    "single_uint8_sub_wraps": (lambda: single("sub", "Scalar", self=randint(0, 256, 70, dtype=torch.uint8, seed=66),
                                              other=100, alpha=1), True),
    "single_int8_neg": (lambda: single("neg", self=ints(list(range(-128, 128)), torch.int8)), True),
    "single_to_float32_int64": (lambda: single("to", "dtype", self=randn(5, 23, seed=67) * 1000, dtype=torch.int64),
                                True),
    "single_to_int64_float16": (lambda: single("to", "dtype", self=randint(-70000, 70000, 5, 23, seed=68),
                                               dtype=torch.float16), True),
    "single_to_bool_int32": (lambda: single("to", "dtype", self=randn(5, 23, seed=69) > 0, dtype=torch.int32), True),
    "single_eq_scalar_int32": (lambda: single("eq", "Scalar", self=randint(0, 4, 5, 23, dtype=torch.int32, seed=70),
                                              other=2), True),
    "single_add_inplace_int32": (lambda: single("add_", "Tensor", self=randint(-2**31, 2**31, 6, 19, dtype=torch.int32,
                                                                                seed=71),
                                                other=randint(-2**31, 2**31, 19, dtype=torch.int32, seed=72),
                                                alpha=2), True),
    "single_floor_divide_int64": (lambda: single("div", "Tensor_mode", self=randint(-99, 99, 50, seed=73),
                                                 other=randint(1, 7, 50, seed=74) - 8, rounding_mode="floor"), True),
    "single_where_int16_broadcast": (lambda: single("where", "self", condition=randn(3, 1, seed=75) > 0,
                                                    self=randint(-9, 9, 3, 30, dtype=torch.int16, seed=76),
                                                    other=randint(-9, 9, 30, dtype=torch.int16, seed=77)), True),
    "single_sigmoid_int64": (lambda: single("sigmoid", self=randint(-9, 9, 40, seed=78)), False),
    "bitwise_ops_bool_and_ints": (bitwise_ops_bool_and_ints, True),
    "pow_of_tensors": (pow_of_tensors, False),
    "single_pow_tensor_tensor_f16": (lambda: single("pow", "Tensor_Tensor",
                                                    self=randn(40, dtype=torch.float16, seed=89).abs() + 0.1,
                                                    exponent=randn(40, dtype=torch.float16, seed=90)), False),
    "single_and_bool": (lambda: single("__and__", "Tensor", self=randn(3, 50, seed=91) > 0,
                                       other=randn(3, 50, seed=92) > 0), True),
    "refused_hardtanh_int64": (lambda: single("hardtanh", self=torch.arange(12), min_val=-1, max_val=3), None),
    "refused_pow_int32": (lambda: single("pow", "Tensor_Scalar", self=torch.arange(12, dtype=torch.int32),
                                         exponent=3), None),
}


def emulate(name, case, exact, work, args):
    """Problems of one case (empty when every candidate matches eager or it is refused as expected)."""
    case_dir = os.path.join(work, name)
    os.makedirs(case_dir)
    card = capture_spelling(case.card())
    card_file = os.path.join(case_dir, "card.json")
    with open(card_file, "w") as f:
        json.dump(card, f)
    dumped = subprocess.run([args.dump, card_file, case_dir, str(args.variants)], capture_output=True, text=True)
    if exact is None:  # must be refused
        if dumped.returncode == 3:
            return [], 0
        return [f"{name}: expected a refusal, got exit {dumped.returncode}: {dumped.stdout.strip()}"], 0
    if dumped.returncode != 0:
        return [f"{name}: {dumped.stdout.strip() or dumped.stderr.strip()}"], 0
    in_place = "region" not in card and card["op"].endswith("_")
    runner = (InPlaceRunner if in_place else Runner)(case_dir, card, case.tensors(), {}, args.cuda_include)
    count = int(dumped.stdout.strip())
    return run_candidates(name, case_dir, count, runner, lambda got: compare(got, case.expected(), exact)), count


def main():
    args, skipped = parse_arguments(__doc__.split("\n\n")[0], CASES, 2)
    if skipped:
        return skipped
    work = tempfile.mkdtemp(prefix="kforge-pointwise-ops-")
    failures, checked, refused = [], 0, 0
    try:
        for name in args.only or CASES:
            build, exact = CASES[name]
            problems, count = emulate(name, build(), exact, work, args)
            refused += exact is None and not problems
            print(f"  {name}: " + ("refused as expected" if exact is None and not problems else
                                   f"{count} candidate(s) emulated") + f", {len(problems)} failure(s)", flush=True)
            failures += problems
            checked += count
    finally:
        clean_up(work, args.keep)
    print(f"{refused} refusal(s) as expected")
    return summary(checked, failures)


if __name__ == "__main__":
    sys.exit(main())
