"""bench/card_bench.py helpers that need no GPU: sample replay keeps the card's strides; run_each."""
import os
import sys
import unittest

import torch

SOURCE = os.environ.get("KFORGE_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(SOURCE, "bench"))
import card_bench  # noqa: E402


class ToDeviceKeepsStrides(unittest.TestCase):
    def test_a_slice_of_a_transposed_tensor_keeps_its_strides_and_values(self):
        # rotate_half's x[..., d/2:] of q.transpose(1, 2): not dense, so Tensor.to() would re-lay it out
        # (the meta device shows the same re-layout as .cuda() without a GPU).
        sliced = torch.randn(2, 8, 4, 16).transpose(1, 2)[..., 8:]
        self.assertNotEqual(sliced.to("meta").stride(), sliced.stride())
        moved = card_bench.to_cuda([sliced, (sliced, 3)], device="meta")
        self.assertEqual(moved[0].stride(), sliced.stride())
        self.assertEqual(moved[1][0].stride(), sliced.stride())
        self.assertEqual(moved[1][1], 3)
        on_cpu = card_bench.to_cuda(sliced, device="cpu")
        self.assertEqual(on_cpu.stride(), sliced.stride())
        self.assertTrue(torch.equal(on_cpu, sliced))

    def test_an_expanded_tensor_keeps_its_zero_strides(self):
        # repeat_kv's k[:, :, None].expand(...) before its reshape: elements share memory
        expanded = torch.randn(2, 1, 3, 5).expand(2, 4, 3, 5)
        moved = card_bench.to_cuda(expanded, device="cpu")
        self.assertEqual(moved.stride(), expanded.stride())
        self.assertTrue(torch.equal(moved, expanded))



class RunEach(unittest.TestCase):
    def test_a_failure_is_one_line_and_the_others_still_run(self):
        ran, seen_errors = [], []
        errors = {}

        def bench_one(name):
            ran.append(name)
            if name == "b":
                raise ValueError("no kernel\n  for b")

        def after_each(name, done):
            seen_errors.append((name, list(done), dict(errors)))

        card_bench.run_each(["a", "b", "c"], "test", bench_one, errors, after_each)
        self.assertEqual(ran, ["a", "b", "c"])
        self.assertEqual(errors, {"b": "ValueError: no kernel for b"})
        # after each name, with the names done so far and the errors recorded by then
        self.assertEqual(seen_errors[0], ("a", ["a"], {}))
        self.assertEqual(seen_errors[1], ("b", ["a", "b"], {"b": "ValueError: no kernel for b"}))
        self.assertEqual(seen_errors[2][1], ["a", "b", "c"])


if __name__ == "__main__":
    unittest.main()
