"""bench/report.py on the committed raw results of the second H200 suite run
(bench/results/2026-12-01-suite-h200-run2/): the numbers in its tables come from those files, and a
package without custom kernels shows no speedup. Plain Python: no torch, no GPU."""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.environ.get("KFORGE_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RESULTS = os.path.join(SOURCE, "bench", "results", "2026-12-01-suite-h200-run2")


class ReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.out = tempfile.mkdtemp(prefix="kforge-report-")
        cls.result = subprocess.run([sys.executable, os.path.join(SOURCE, "bench", "report.py"), RESULTS,
                                  "--out-dir", cls.out, "--suffix", "test"], capture_output=True, text=True)
        base = os.path.join(cls.out, "2026-12-01-suite-h200-test")
        cls.markdown = open(base + ".md").read() if cls.result.returncode == 0 else ""
        with open(base + "-cards.csv") as f:
            cls.cards = list(csv.DictReader(f))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.out, ignore_errors=True)

    def test_runs_and_names_its_files(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        self.assertIn("2026-12-01-suite-h200-test.md", self.result.stdout)

    def test_per_model_rows(self):
        # ResNet-50: 17 searched of 55 cards, 14 / 13 faster, 13 exported, kforge run 5.30 -> 4.74 ms.
        self.assertIn("| resnet50_fp32 | 17 / 24 / 55 | 14 / 13 | 13 | 36% / 26% |", self.markdown)
        self.assertIn("| 5.30 -> 4.74 |", self.markdown)
        self.assertIn("| **all** | | **39 / 35** | **13** |", self.markdown)

    def test_a_package_without_custom_kernels_shows_no_speedup(self):
        gemma = next(line for line in self.markdown.splitlines() if line.startswith("| gemma_layers_bf16_s512 |"))
        self.assertIn("2.32 (no custom kernel)", gemma)
        self.assertNotIn("2.61x", gemma)

    def test_paper_table_and_every_searched_card(self):
        self.assertIn("| group_norm | Stable Diffusion 3.5 Medium | 1.70x | sd_block_fp16 | group_norm f16[2,512,64,64] "
                      "| 5.99x | 4.56x |", self.markdown)
        self.assertEqual(len(self.cards), 43)  # every searched card, with or without a gain
        self.assertEqual(sorted({c["model"] for c in self.cards}),
                         ["gemma_layers_bf16_s512", "qwen_layers_bf16_s512", "resnet50_fp32", "sd_block_fp16"])


if __name__ == "__main__":
    unittest.main()
