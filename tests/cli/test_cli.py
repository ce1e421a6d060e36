"""The kforge command line as a user meets it: outputs, exit codes and one-line errors."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

KFORGE = os.environ["KFORGE_BIN"]
MODELS = os.environ["KFORGE_TEST_MODELS_DIR"]
KERNELS = os.path.join(os.environ["KFORGE_SOURCE_DIR"], "tests", "gpu", "kernels")


def kforge(*args):
    return subprocess.run([KFORGE, *args], capture_output=True, text=True, timeout=300)


class CliTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="kforge_cli_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def model(self, name):
        return os.path.join(MODELS, name)

    def assert_one_error_line(self, result, *needles, code=1):
        self.assertEqual(result.returncode, code, result.stderr)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, f"expected one line, got: {result.stderr!r}")
        self.assertTrue(lines[0].startswith("kforge: error: "), lines[0])
        for needle in needles:
            self.assertIn(needle, lines[0])
        self.assertNotIn("Traceback", result.stderr)
        self.assertEqual(result.stdout, "")

    def test_capture_prints_cards_table_and_cards_reads_it_back(self):
        out = os.path.join(self.tmp, "p")
        result = kforge("capture", self.model("conv_gn_block.pt"), "--inputs", "2x3x16x16", "-o", out, "--device", "cpu")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("aten::group_norm", result.stdout)
        self.assertIn("4 cards", result.stdout)
        self.assertIn("captured on CPU", result.stderr)
        cards = kforge("cards", out)
        self.assertEqual(cards.returncode, 0, cards.stderr)
        self.assertEqual(cards.stdout, result.stdout)

    def test_cards_json_is_sorted_by_share(self):
        out = os.path.join(self.tmp, "p")
        self.assertEqual(kforge("capture", self.model("basic_block.pt"), "--inputs", "2x8x8x8", "-o", out,
                                "--quiet").returncode, 0)
        result = kforge("cards", out, "--json")
        self.assertEqual(result.returncode, 0, result.stderr)
        data = json.loads(result.stdout)
        shares = [c["time_share"] for c in data["cards"]]
        self.assertEqual(shares, sorted(shares, reverse=True))
        self.assertEqual(sorted(c["op"] for c in data["cards"]),
                         ["aten::_convolution", "aten::add", "aten::batch_norm", "aten::relu"])
        self.assertEqual(data["capture"]["total_calls"], 7)

    def test_capture_json_has_phase_times(self):
        out = os.path.join(self.tmp, "p")
        result = kforge("capture", self.model("conv_gn_block.pt"), "--inputs", "2x3x16x16", "-o", out, "--json",
                        "--quiet")
        self.assertEqual(result.returncode, 0, result.stderr)
        data = json.loads(result.stdout)
        self.assertGreater(data["phase_ms"]["record_pass"], 0)
        self.assertEqual(len(data["cards"]), 4)

    def test_samples_are_readable_with_torch_load(self):
        import torch
        out = os.path.join(self.tmp, "p")
        self.assertEqual(kforge("capture", self.model("basic_block.pt"), "--inputs", "2x8x8x8", "-o", out,
                                "--quiet").returncode, 0)
        data = json.loads(kforge("cards", out, "--json").stdout)
        relu = next(c for c in data["cards"] if c["op"] == "aten::relu")
        inputs, outputs = torch.load(os.path.join(out, relu["samples"][0]["file"]))  # weights_only=True
        self.assertTrue(torch.equal(outputs[0], torch.relu(inputs[0])))
        add = next(c for c in data["cards"] if c["op"] == "aten::add")
        inputs, outputs = torch.load(os.path.join(out, add["samples"][0]["file"]))
        self.assertEqual(inputs[2], 1)  # alpha, a plain number
        self.assertTrue(torch.equal(outputs[0], inputs[0] + inputs[1]))

    def test_every_sample_loads_with_the_python_helper(self):
        sys.path.insert(0, os.path.join(os.environ["KFORGE_SOURCE_DIR"], "tools"))
        from kforge_samples import load_sample
        out = os.path.join(self.tmp, "p")
        self.assertEqual(kforge("capture", self.model("transformer_block.pt"), "--inputs", "2x8x32", "-o", out,
                                "--quiet").returncode, 0)
        data = json.loads(kforge("cards", out, "--json").stdout)
        loaded = 0
        for card in data["cards"]:
            for ref in card["samples"]:
                inputs, outputs = load_sample(os.path.join(out, ref["file"]))
                self.assertEqual(len(inputs), len(card["args"]))
                for arg, value in zip(card["args"], inputs):
                    if arg["kind"] == "tensor":
                        self.assertEqual(list(value.shape), arg["tensors"][0]["sizes"])
                        self.assertEqual(list(value.stride()), arg["tensors"][0]["strides"])
                    elif arg["kind"] == "value":
                        self.assertEqual(value, arg["value"])
                loaded += 1
        self.assertGreater(loaded, 10)

    def softmax_project(self):
        out = os.path.join(self.tmp, "softmax")
        result = kforge("capture", self.model("softmax_only.pt"), "--inputs", "64x1000:bfloat16", "-o", out,
                        "--device", "cpu", "--quiet", "--json")
        self.assertEqual(result.returncode, 0, result.stderr)
        return out, json.loads(result.stdout)["cards"][0]["id"]

    def test_bench_without_a_gpu_compiles_and_says_so(self):
        import torch
        if torch.cuda.is_available():
            self.skipTest("this machine has a GPU: the gpu tests evaluate candidates")
        project, card = self.softmax_project()
        result = kforge("bench", project, "--card", card[:6], "--kernel", os.path.join(KERNELS, "softmax_correct.cu"))
        self.assertEqual(result.returncode, 0, result.stderr)
        report = json.loads(result.stdout)
        self.assertEqual(report["status"], "compiled-only")
        self.assertTrue(report["compile"]["ok"])
        self.assertEqual(report["compile"]["architecture"], "sm_90")
        self.assertIn("not evaluated", report["reason"])
        self.assertEqual(report["plan"]["launches"][0]["kernel"], "softmax_rows")

    def test_bench_reports_compile_errors_on_their_line(self):
        project, card = self.softmax_project()
        broken = os.path.join(self.tmp, "broken.cu")
        with open(os.path.join(KERNELS, "softmax_correct.cu")) as f:
            lines = f.read().splitlines()
        index = next(i for i, line in enumerate(lines) if "const float inv" in line)
        lines[index] = "    const float inv = 1.0f / summ;"
        with open(broken, "w") as f:
            f.write("\n".join(lines) + "\n")
        result = kforge("bench", project, "--card", card, "--kernel", broken)
        self.assertEqual(result.returncode, 1)
        self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
        self.assertIn("candidate compile-error", result.stderr)
        report = json.loads(result.stdout)
        self.assertEqual(report["status"], "compile-error")
        errors = [d for d in report["compile"]["diagnostics"] if d["severity"] == "error"]
        self.assertEqual(errors[0]["line"], index + 1)
        self.assertIn("summ", errors[0]["message"])
        self.assertEqual(errors[0]["column"], lines[index].index("summ") + 1)

    def test_bench_refuses_a_plan_that_binds_a_missing_argument(self):
        project, card = self.softmax_project()
        plan = os.path.join(self.tmp, "plan.json")
        with open(plan, "w") as f:
            json.dump({"launches": [{"kernel": "softmax_rows", "grid": [64], "block": [256],
                                     "args": ["ptr:input", "ptr:out0", "i32:1000"]}]}, f)
        result = kforge("bench", project, "--card", card, "--kernel", os.path.join(KERNELS, "softmax_correct.cu"),
                        "--plan", plan)
        self.assertEqual(result.returncode, 1)
        report = json.loads(result.stdout)
        self.assertEqual(report["status"], "invalid-plan")
        self.assertIn("no argument 'input'", report["reason"])

    def test_bench_refuses_a_plan_that_names_a_missing_kernel(self):
        project, card = self.softmax_project()
        plan = os.path.join(self.tmp, "plan.json")
        with open(plan, "w") as f:
            json.dump({"launches": [{"kernel": "softmax_cols", "grid": [64], "block": [256],
                                     "args": ["ptr:self", "ptr:out0", "i32:1000"]}]}, f)
        result = kforge("bench", project, "--card", card, "--kernel", os.path.join(KERNELS, "softmax_correct.cu"),
                        "--plan", plan)
        self.assertEqual(result.returncode, 1)
        report = json.loads(result.stdout)
        self.assertEqual(report["status"], "invalid-plan")
        self.assertIn("no kernel named 'softmax_cols'", report["reason"])
        self.assertIn("kernels: softmax_rows", report["reason"])

    def test_tree_without_a_search_says_so(self):
        project, card = self.softmax_project()
        self.assert_one_error_line(kforge("tree", project, "--card", card), "no search tree for card " + card)
        self.assert_one_error_line(kforge("tree", project), "--card", code=2)

    def test_optimize_builds_a_resumable_tree(self):
        project, card = self.softmax_project()
        first = kforge("optimize", project, "--iterations", "4", "--seed", "3")
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertIn(card[:8], first.stdout)
        tree = json.loads(kforge("tree", project, "--card", card, "--json").stdout)
        self.assertEqual(len(tree["nodes"]), 4)
        statuses = {node["status"] for node in tree["nodes"]}
        self.assertTrue(statuses <= {"compiled-only", "passed"}, statuses)
        table = kforge("tree", project, "--card", card)
        self.assertEqual(table.returncode, 0, table.stderr)
        self.assertIn("root", table.stdout)
        again = kforge("optimize", project, "--iterations", "6")
        self.assert_one_error_line(again, "tree.json", "exists already")
        resumed = kforge("optimize", project, "--iterations", "6", "--resume")
        self.assertEqual(resumed.returncode, 0, resumed.stderr)
        tree = json.loads(kforge("tree", project, "--card", card, "--json").stdout)
        self.assertEqual(len(tree["nodes"]), 6)

    def test_optimize_bad_inputs(self):
        project, _ = self.softmax_project()
        self.assert_one_error_line(kforge("optimize", project, "--proposer", "magic"), "magic", code=2)
        self.assert_one_error_line(kforge("optimize", project, "--iterations", "0"), "--iterations", code=2)
        self.assert_one_error_line(kforge("optimize", project, "--cards", "zzzz"), "zzzz", code=2)
        self.assert_one_error_line(kforge("optimize", os.path.join(self.tmp, "none")), "none")

    def test_bench_bad_inputs(self):
        project, card = self.softmax_project()
        self.assert_one_error_line(kforge("bench", project, "--card", "zzzz", "--kernel", "x.cu"), "no card")
        self.assert_one_error_line(kforge("bench", project, "--card", card, "--kernel",
                                          os.path.join(self.tmp, "none.cu")), "none.cu")
        self.assert_one_error_line(kforge("bench", project, "--card", card), "--kernel", code=2)

    def test_missing_model(self):
        self.assert_one_error_line(kforge("capture", os.path.join(self.tmp, "none.pt"), "--inputs", "2x3", "-o",
                                          os.path.join(self.tmp, "p")), "none.pt", "no such model file")

    def test_not_torchscript(self):
        for name, reason in [("garbage.pt", "not a TorchScript file"), ("truncated.pt", "truncated or corrupt"),
                             ("state_dict_not_torchscript.pt", "not a TorchScript model")]:
            with self.subTest(name=name):
                self.assert_one_error_line(kforge("capture", self.model(name), "--inputs", "2x3x16x16", "-o",
                                                  os.path.join(self.tmp, "p")), name, reason)
                self.assertFalse(os.path.exists(os.path.join(self.tmp, "p")))

    def test_inputs_the_model_rejects(self):
        for inputs in (["2x5x16x16"], ["2x3x16x16", "2x3x16x16"], ["2x3x16x16:int64"]):
            with self.subTest(inputs=inputs):
                self.assert_one_error_line(kforge("capture", self.model("conv_gn_block.pt"), "--inputs", *inputs,
                                                  "-o", os.path.join(self.tmp, "p")),
                                           "conv_gn_block.pt", "the model rejected the inputs")
                self.assertEqual(os.listdir(self.tmp), [])

    def test_existing_project_is_never_overwritten(self):
        out = os.path.join(self.tmp, "p")
        self.assertEqual(kforge("capture", self.model("conv_gn_block.pt"), "--inputs", "2x3x16x16", "-o", out,
                                "--quiet").returncode, 0)
        with open(os.path.join(out, "cards.json")) as f:
            before = f.read()
        self.assert_one_error_line(kforge("capture", self.model("basic_block.pt"), "--inputs", "2x8x8x8", "-o", out),
                                   "already holds a Kernel Forge project")
        with open(os.path.join(out, "cards.json")) as f:
            self.assertEqual(f.read(), before)

    def test_unwritable_output(self):
        blocker = os.path.join(self.tmp, "file")
        open(blocker, "w").close()
        self.assert_one_error_line(kforge("capture", self.model("conv_gn_block.pt"), "--inputs", "2x3x16x16", "-o",
                                          os.path.join(blocker, "p")), "file")

    def test_usage_errors_exit_2(self):
        self.assert_one_error_line(kforge("capture", self.model("conv_gn_block.pt"), "-o", "x"), "--inputs", code=2)
        self.assert_one_error_line(kforge("capture", "--bogus"), "--bogus", code=2)
        self.assert_one_error_line(kforge("frobnicate"), "frobnicate", code=2)
        self.assert_one_error_line(kforge("capture", self.model("conv_gn_block.pt"), "--inputs", "2x3", "-o", "x",
                                          "--samples", "many"), "--samples", code=2)

    def test_cards_on_a_non_project(self):
        self.assert_one_error_line(kforge("cards", self.tmp), "not a Kernel Forge project")

    def test_help_lists_every_capture_option(self):
        result = kforge("capture", "--help")
        self.assertEqual(result.returncode, 0)
        for option in ("--inputs", "--output", "--device", "--samples", "--sample-budget-mb", "--sample-vendor",
                       "--seed", "--json", "--quiet"):
            self.assertIn(option, result.stdout)


if __name__ == "__main__":
    unittest.main()
