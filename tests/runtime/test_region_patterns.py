#!/usr/bin/env python3
"""runtime/kforge_backend (Inductor with region kernels, kforge_region_patterns.py) on the CPU.

Real region cards: six small models are captured on the CPU with `kforge capture` (attention's
scale + mask -> softmax, GELU written out, a residual add feeding layer_norm with both values used,
a diffusion block's group_norm -> silu between convolutions, rotary with the cat of its halves,
GPT-NeoX's partial rotary with a cat inside a cat),
and their region cards are what CPU stand-ins of the runtime's `kforge::region_kernels` and
`kforge::region_call` list and serve (the runtime is CUDA-only; tests/gpu/export_runtime_gpu.py runs
the real ones). Checked: each chain is found in the graph Inductor compiles and replaced by one
`kforge_regions::run` call; the stand-in receives the kernel ids and the region's inputs in order,
a traced number as a 0-dim host tensor of the captured dtype and value; outputs equal eager's;
where no kernel serves, the chain's own ops run; a call with shapes no kernel has (another batch)
leaves the chain to Inductor; a region card whose chain cannot be expressed is skipped with a reason.

Usage: test_region_patterns.py KFORGE RUNTIME_DIR
Skipped (exit 77) where Inductor cannot compile for the CPU (no C++ compiler).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import torch

KFORGE = sys.argv.pop(1)
sys.path.insert(0, sys.argv.pop(1))
import kforge_region_patterns  # noqa: E402
from kforge_runtime import kforge_backend  # noqa: E402

LISTED = []  # what the stand-in kforge::region_kernels returns
CALLS = []   # (kernel ids, [(dtype, shape, value of a 0-dim input)]) per region_call
SERVE = [True]

LIBRARY = torch.library.Library("kforge", "DEF")
LIBRARY.define("region_kernels() -> str")
LIBRARY.define("region_call(str[] kernels, Tensor[] inputs) -> (bool, Tensor[])")
LIBRARY.impl("region_kernels", lambda: json.dumps(LISTED), "CompositeExplicitAutograd")


def region_call(kernels, inputs):
    CALLS.append((list(kernels), [(t.dtype, tuple(t.shape), t.item() if t.dim() == 0 else None) for t in inputs]))
    if not SERVE[0]:
        return False, []
    card = next(k["card"] for k in LISTED if k["id"] == kernels[0])
    return True, [o.clone() for o in kforge_region_patterns.chain_function(card)(*inputs)]


LIBRARY.impl("region_call", region_call, "CPU")


class AttentionSoftmax(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(64, 32) * 0.1)
        self.register_buffer("mask", torch.full((32, 32), -1e4).triu(1)[None, None])

    def forward(self, x):
        scores = torch.relu(x) @ self.weight
        return torch.softmax(scores * 0.125 + self.mask, dim=-1, dtype=torch.float32) @ self.weight.t()


class GeluWrittenOut(torch.nn.Module):
    def forward(self, x):
        y = x @ x.transpose(-1, -2)
        return 0.5 * y * (1.0 + torch.tanh(0.7978845608028654 * (y + 0.044715 * y * y * y)))


class ResidualLayerNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(64)
        with torch.no_grad():
            self.norm.weight.normal_()
            self.norm.bias.normal_()

    def forward(self, x, update):
        h = x + update @ x
        return h, self.norm(h) @ x.transpose(-1, -2)


class GroupNormSilu(torch.nn.Module):
    """A diffusion resnet block's convolution -> group_norm -> silu -> convolution."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.norm = torch.nn.GroupNorm(4, 16)
        self.conv2 = torch.nn.Conv2d(16, 8, 3, padding=1)
        with torch.no_grad():
            self.norm.weight.normal_()
            self.norm.bias.normal_()

    def forward(self, x):
        return self.conv2(torch.nn.functional.silu(self.norm(self.conv1(x))))


class Rotary(torch.nn.Module):
    """transformers' rotary embedding between a projection and attention's matmul: q * cos +
    cat(-q2, q1) * sin, the halves slices of the transposed projection."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(32, 64, bias=False)

    def forward(self, x, cos, sin):
        q = self.proj(x).view(x.shape[0], x.shape[1], 4, 16).transpose(1, 2)
        rotated = torch.cat((-q[..., 8:], q[..., :8]), dim=-1)
        q = q * cos + rotated * sin
        return q @ q.transpose(-1, -2)


class PartialRotary(Rotary):
    """GPT-NeoX's partial rotary: cat(q_rot * cos + cat(-q_rot2, q_rot1) * sin, q_pass), a cat inside
    a cat's branch."""

    def forward(self, x, cos, sin):
        q = self.proj(x).view(x.shape[0], x.shape[1], 4, 16).transpose(1, 2)
        q_rot, q_pass = q[..., :8], q[..., 8:]
        rotated = torch.cat((-q_rot[..., 4:], q_rot[..., :4]), dim=-1)
        q = torch.cat((q_rot * cos + rotated * sin, q_pass), dim=-1)
        return q @ q.transpose(-1, -2)


def capture(work, name, model, inputs):
    """Region cards of `model` captured on the CPU, as the runtime would list their kernels."""
    folder = os.path.join(work, name)
    os.makedirs(folder)
    torch.jit.save(torch.jit.trace(model, inputs), os.path.join(folder, "model.pt"))
    torch.save(list(inputs), os.path.join(folder, "inputs.pt"))
    subprocess.run([KFORGE, "capture", os.path.join(folder, "model.pt"), "--inputs", os.path.join(folder, "inputs.pt"),
                    "-o", os.path.join(folder, "project"), "--quiet"], check=True, capture_output=True, timeout=600)
    with open(os.path.join(folder, "project", "cards.json")) as f:
        cards = json.load(f)["cards"]
    return [c for c in cards if c["op"] == "kforge::region"]


class RegionPatternTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="kforge-region-patterns-")
        torch.manual_seed(0)
        cls.cases = {
            "attention": (AttentionSoftmax().eval(), (torch.randn(2, 4, 32, 64),)),
            "gelu": (GeluWrittenOut().eval(), (torch.randn(4, 16, 24),)),
            "residual_norm": (ResidualLayerNorm().eval(), (torch.randn(8, 64), torch.randn(8, 8))),
            "group_norm": (GroupNormSilu().eval(), (torch.randn(2, 8, 6, 6),)),
            "rotary": (Rotary().eval(), (torch.randn(2, 6, 32), torch.randn(2, 1, 6, 16), torch.randn(2, 1, 6, 16))),
            "partial_rotary": (PartialRotary().eval(),
                               (torch.randn(2, 6, 32), torch.randn(2, 1, 6, 8), torch.randn(2, 1, 6, 8))),
        }
        cls.regions = {name: capture(cls.work, name, model, inputs) for name, (model, inputs) in cls.cases.items()}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def setUp(self):
        CALLS.clear()
        SERVE[0] = True
        torch._dynamo.reset()

    def list_kernels(self, name):
        LISTED[:] = [{"id": f"k{i}", "card": card} for i, card in enumerate(self.regions[name])]
        self.assertTrue(LISTED, f"{name}: the capture made no region card")

    def compile_and_run(self, name, inputs=None):
        model, captured = self.cases[name]
        inputs = inputs or captured
        with torch.no_grad():
            expected = model(*inputs)
            got = torch.compile(model, backend=kforge_backend, dynamic=False)(*inputs)
        expected = expected if isinstance(expected, tuple) else (expected,)
        got = got if isinstance(got, tuple) else (got,)
        for e, g in zip(expected, got):
            torch.testing.assert_close(g, e, rtol=1e-4, atol=1e-5)

    def test_attention_softmax_is_served_with_its_scale_as_a_host_tensor(self):
        self.list_kernels("attention")
        chains = [c["region"]["chain"] for c in self.regions["attention"]]
        self.assertIn("mul -> add -> softmax", chains)
        self.compile_and_run("attention")
        softmax = [call for call in CALLS if len(call[1]) == 3]
        self.assertEqual(len(softmax), 1, CALLS)
        ids, inputs = softmax[0]
        self.assertEqual(inputs[0], (torch.float32, (2, 4, 32, 32), None))
        self.assertEqual(inputs[1], (torch.float64, (), 0.125))  # the traced number, as captured
        self.assertEqual(inputs[2], (torch.float32, (1, 1, 32, 32), None))
        self.assertEqual(len(ids), 1)

    def test_gelu_written_out_is_one_call(self):
        self.list_kernels("gelu")
        self.compile_and_run("gelu")
        self.assertEqual(len(CALLS), 1, CALLS)
        scalars = sorted(value for _, shape, value in CALLS[0][1] if shape == ())
        self.assertEqual(scalars, sorted([0.5, 1.0, 0.7978845608028654, 0.044715]))
        stats = kforge_region_patterns.region_stats()
        self.assertTrue(any(s["served"] > 0 for s in stats.values()), stats)

    def test_residual_add_and_layer_norm_give_both_outputs(self):
        self.list_kernels("residual_norm")
        chains = [c["region"]["chain"] for c in self.regions["residual_norm"]]
        self.assertIn("add -> layer_norm", chains)
        self.compile_and_run("residual_norm")
        self.assertEqual(len(CALLS), 1, CALLS)

    def test_group_norm_silu_is_one_call(self):
        # group_norm's pattern is traced on the captured device: on the meta device Inductor
        # decomposes it into another graph than the one it compiles, and it never matched.
        self.list_kernels("group_norm")
        chains = [c["region"]["chain"] for c in self.regions["group_norm"]]
        self.assertIn("group_norm -> silu", chains)
        self.compile_and_run("group_norm")
        self.assertEqual(len(CALLS), 1, CALLS)
        self.assertEqual(CALLS[0][1][0], (torch.float32, (2, 16, 6, 6), None))

    def test_rotary_with_the_cat_of_its_halves_is_one_call(self):
        self.list_kernels("rotary")
        chains = [c["region"]["chain"] for c in self.regions["rotary"]]
        self.assertIn("neg -> cat -> mul -> mul -> add", chains)
        self.compile_and_run("rotary")
        self.assertEqual(len(CALLS), 1, CALLS)
        self.assertEqual(sorted(shape for _, shape, _ in CALLS[0][1]),
                         sorted([(2, 4, 6, 8), (2, 4, 6, 8), (2, 4, 6, 16), (2, 1, 6, 16), (2, 1, 6, 16)]))

    def test_partial_rotary_with_a_cat_inside_a_cat_is_one_call(self):
        self.list_kernels("partial_rotary")
        chains = [c["region"]["chain"] for c in self.regions["partial_rotary"]]
        self.assertIn("neg -> cat -> mul -> mul -> add -> cat", chains)
        self.compile_and_run("partial_rotary")
        self.assertEqual(len(CALLS), 1, CALLS)
        self.assertEqual(len(CALLS[0][1]), 6, CALLS)  # both halves, q_rot, cos, sin, q_pass

    def test_where_no_kernel_serves_the_chain_runs(self):
        self.list_kernels("attention")
        SERVE[0] = False
        before = kforge_region_patterns.region_stats()
        self.compile_and_run("attention")
        self.assertEqual(len(CALLS), 1)
        after = kforge_region_patterns.region_stats()
        self.assertGreater(sum(s["ran_chain"] for s in after.values()),
                           sum(s["ran_chain"] for s in before.values()))

    def test_shapes_no_kernel_has_stay_inductors(self):
        self.list_kernels("attention")
        self.compile_and_run("attention", (torch.randn(3, 4, 32, 64),))  # batch 3: captured with 2
        self.assertEqual(CALLS, [])

    def test_a_chain_that_cannot_be_expressed_is_skipped_with_the_reason(self):
        card = json.loads(json.dumps(self.regions["gelu"][0]))
        card["region"]["members"][0]["op"] = "aten::no_such_op"
        pattern_pass = kforge_region_patterns.RegionPatternPass([{"id": "k9", "card": card}])
        self.assertEqual(pattern_pass.keys, [])
        self.assertEqual(len(pattern_pass.skipped), 1)
        self.assertIn("no functional ATen op for aten::no_such_op", pattern_pass.skipped[0][1])


def compiler_missing():
    from torch._inductor.cpp_builder import get_cpp_compiler
    try:
        get_cpp_compiler()
        return False
    except Exception:
        return True


if __name__ == "__main__":
    if compiler_missing():
        print("SKIPPED: Inductor finds no C++ compiler for the CPU")
        sys.exit(77)
    sys.exit(0 if unittest.main(verbosity=2, exit=False).result.wasSuccessful() else 1)
