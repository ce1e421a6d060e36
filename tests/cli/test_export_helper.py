"""tools/kforge_export.py turns an eager module into files that kforge capture accepts."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import torch
import torch.nn as nn

SOURCE = os.environ["KFORGE_SOURCE_DIR"]
sys.path.insert(0, os.path.join(SOURCE, "tools"))
from kforge_export import export_for_kforge  # noqa: E402


class Branchy(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # data-dependent: a trace freezes one branch
            return x * 2
        return x - 1


class Noisy(nn.Module):
    def forward(self, x):
        return x + torch.rand_like(x)  # differs on every run: TorchScript cannot reproduce eager


class ExportHelperTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="kforge_export_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_exported_files_capture(self):
        model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32))
        model_path = os.path.join(self.tmp, "m.pt")
        inputs_path = os.path.join(self.tmp, "in.pt")
        export_for_kforge(model, torch.randn(4, 16), model_path, inputs_path)
        project = os.path.join(self.tmp, "p")
        result = subprocess.run([os.environ["KFORGE_BIN"], "capture", model_path, "--inputs", inputs_path, "-o",
                                 project, "--device", "cpu"], capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        for op in ("aten::linear", "aten::gelu", "aten::layer_norm"):
            self.assertIn(op, result.stdout)

    def test_export_that_does_not_reproduce_eager_fails_loudly(self):
        with self.assertRaisesRegex(RuntimeError, "does not reproduce the eager outputs"):
            export_for_kforge(Noisy(), torch.ones(3), os.path.join(self.tmp, "n.pt"))

    def test_script_keeps_data_dependent_branches(self):
        model_path = os.path.join(self.tmp, "b.pt")
        export_for_kforge(Branchy(), torch.ones(3), model_path, script=True)
        scripted = torch.jit.load(model_path)
        self.assertTrue(torch.equal(scripted(-torch.ones(3)), -torch.ones(3) - 1))

    def test_non_tensor_inputs_are_refused(self):
        with self.assertRaises(TypeError):
            export_for_kforge(Branchy(), (torch.ones(3), 5), os.path.join(self.tmp, "x.pt"))


if __name__ == "__main__":
    unittest.main()
