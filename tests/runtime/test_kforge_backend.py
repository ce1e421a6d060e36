#!/usr/bin/env python3
"""runtime/kforge_runtime.py's TorchScript backend (kforge_script_backend) on the CPU. A stand-in for
the runtime's kforge::region_module hands the saved module back unchanged ("forward", one place replaced), so
what is checked is the backend's own part: dynamo's graph traced, saved, loaded again and run;
outputs equal to eager; a call with other shapes runs the graph as dynamo handed it; a graph with
nothing replaced is left alone.

Usage: test_kforge_backend.py RUNTIME_DIR
"""
import io
import json
import sys
import unittest

import torch

sys.path.insert(0, sys.argv.pop(1))
from kforge_runtime import kforge_script_backend  # noqa: E402

CALLS = []
REPLACED = [1]

LIBRARY = torch.library.Library("kforge", "DEF")
LIBRARY.define("region_module(Tensor model) -> (Tensor, str)")


def region_module(model):
    torch.jit.load(io.BytesIO(model.numpy().tobytes()))  # what the runtime gets is a saved module
    CALLS.append(model.numel())
    return model.clone(), json.dumps({"method": "forward", "replaced": REPLACED[0], "notes": []})


LIBRARY.impl("region_module", region_module, "CPU")


class GeluWrittenOut(torch.nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


class BackendTest(unittest.TestCase):
    def setUp(self):
        CALLS.clear()
        REPLACED[0] = 1
        torch._dynamo.reset()

    def test_compiled_model_equals_eager(self):
        model = GeluWrittenOut()
        compiled = torch.compile(model, backend=kforge_script_backend, dynamic=False)
        x = torch.randn(16, 32)
        self.assertTrue(torch.equal(compiled(x), model(x)))
        self.assertEqual(len(CALLS), 1)
        self.assertGreater(CALLS[0], 0)
        # New shapes: dynamo compiles again, and the backend traces again.
        y = torch.randn(8, 32)
        self.assertTrue(torch.equal(compiled(y), model(y)))
        self.assertEqual(len(CALLS), 2)

    def test_other_shapes_run_the_graph_as_handed(self):
        gm = torch.fx.symbolic_trace(GeluWrittenOut())
        handed = []
        original = gm.forward
        gm.forward = lambda *args: handed.append(args) or original(*args)
        run = kforge_script_backend(gm, [torch.randn(4, 8)])
        handed.clear()  # the trace ran it once
        x = torch.randn(4, 8)
        self.assertTrue(torch.equal(run(x), GeluWrittenOut()(x)))
        self.assertEqual(handed, [])  # the traced method ran
        z = torch.randn(2, 8)
        self.assertTrue(torch.equal(run(z), GeluWrittenOut()(z)))
        self.assertEqual(len(handed), 1)
        t = torch.randn(8, 4).t()  # the traced shape, other strides
        self.assertTrue(torch.equal(run(t), GeluWrittenOut()(t)))
        self.assertEqual(len(handed), 2)

    def test_a_graph_without_regions_is_left_alone(self):
        REPLACED[0] = 0
        gm = torch.fx.symbolic_trace(GeluWrittenOut())
        self.assertEqual(kforge_script_backend(gm, [torch.randn(4, 8)]), gm.forward)


if __name__ == "__main__":
    unittest.main(verbosity=2)
