"""bench/report.py with a baselines pass among its inputs (bench/suite.py --baselines-from): the
pass fills the missing torch.compile numbers of the committed run-3 and run-5 results, each speedup
taken against the eager time of its own pass, marked, with the pass named; a measured number is
never replaced. Also suite_results.assemble_baselines on a hand-made pass folder. Plain Python (the
assemble test imports torch through card_bench, on the CPU)."""
import csv
import json
import os
import sys
import tempfile
import unittest

from test_report import run_report

SOURCE = os.environ.get("KFORGE_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RESULTS = os.path.join(SOURCE, "bench", "results")
RUN3 = os.path.join(RESULTS, "2026-12-01-suite-h200-run3")
RUN5 = os.path.join(RESULTS, "2026-12-01-suite-h200-run5")

GEMMA_SOFTMAX = "9dcdd0966961bd15"  # gemma_layers_bf16_s512's softmax card in run 3: eager 52.99 us, KF 16.64 us


def read(path):
    with open(path) as f:
        return json.load(f)


def baselines_of(model, cards, eager_ms, compile_ms, missing=()):
    """A baselines result as suite.py --baselines-from publishes it. cards: {id: (eager us, compile us)}
    per call; their GPU times (device_time_us) are set to 80% of those. End to end, eager's GPU time
    is 80% of its wall time and torch.compile's 40%."""
    return {
        "format": "kforge-suite-result", "version": 1, "kind": "baselines", "model": model, "description": "",
        "environment": {"date": "2026-12-02T10:00:00+00:00", "commit": "abcdef1234567890 baselines",
                        "uncommitted_changes": False, "gpu": "NVIDIA H200"},
        "invocations": [{"command": f"python3 bench/suite.py --baselines-from X --models {model}"}],
        "card_ids": list(cards),
        "cards": [{"id": card_id, "do_bench": {"eager_us": eager, "eager_device_us": 0.8 * eager,
                                               "compile": {"us": compiled, "device_us": 0.8 * compiled,
                                                           "compile_s": 3.0}},
                   "bandwidth": {"compile": {"gb_per_s": 1000.0, "fraction_of_copy": 0.25}}}
                  for card_id, (eager, compiled) in cards.items()],
        "end_to_end": {"eager": {"ms": eager_ms, "device_ms": 0.8 * eager_ms},
                       "compile": {"ms": compile_ms, "device_ms": 0.4 * compile_ms, "compile_s": 60.0,
                                   "output": {"max_abs_diff": 0.01}}},
        "missing": list(missing), "order": 0,
    }


class ReportWithBaselinesTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kforge-report-baselines-")
        tmp = cls.tmp.name
        base = os.path.join(tmp, "baselines")
        os.makedirs(base)
        qwen = read(os.path.join(RUN5, "qwen_layers_bf16_s2048.json"))
        cls.qwen_softmax = next(c for c in qwen["cards"] if c["op"] == "aten::softmax.int")
        passes = [
            # gemma s512 (run 3 ran without torch.compile): softmax 50 us eager, 25 us compiled there.
            baselines_of("gemma_layers_bf16_s512", {GEMMA_SOFTMAX: (50.0, 25.0)}, 2.5, 1.25, ["measure card 0123abcd"]),
            # qwen s2048 (run 5 measured torch.compile): different numbers that must not replace run 5's.
            baselines_of("qwen_layers_bf16_s2048", {cls.qwen_softmax["id"]: (1000.0, 10.0)}, 12.0, 1.0),
            # sd_block_fp16 is not among the report's inputs.
            baselines_of("sd_block_fp16", {}, 1.0, 0.5),
        ]
        for result in passes:
            with open(os.path.join(base, result["model"] + ".json"), "w") as f:
                json.dump(result, f)
        cls.report, stem, cls.markdown = run_report([os.path.join(RUN3, "gemma_layers_bf16_s512.json"), RUN5, base],
                                                    tmp, "baselines")
        with open(stem + "-cards.csv") as f:
            cls.cards = {(row["model"], row["card"]): row for row in csv.DictReader(f)}
        with open(stem + "-models.csv") as f:
            cls.models = {row["model"]: row for row in csv.DictReader(f)}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def row(self, model):
        return next(line for line in self.markdown.splitlines() if line.startswith(f"| {model} |"))

    def test_runs_and_ignores_a_pass_without_a_result(self):
        self.assertEqual(self.report.returncode, 0, self.report.stderr)
        self.assertIn("baselines of sd_block_fp16 ignored: no suite result", self.report.stderr)
        self.assertNotIn("## sd_block_fp16", self.markdown)

    def test_end_to_end_compile_is_filled_against_its_own_eager(self):
        # 2.5 / 1.25 ms in the pass: 2.00x, not run 3's eager 2.80 ms over 1.25 ms.
        self.assertIn("| 1.25 (2.00x) † |", self.row("gemma_layers_bf16_s512"))
        self.assertEqual(self.models["gemma_layers_bf16_s512"]["compile_source"], "baselines")

    def test_end_to_end_gpu_time_of_compile_against_its_own_eager(self):
        # GPU time in the pass: eager 2.0 ms, compile 0.5 ms: 4.00x; run 3 has no GPU times of its own.
        self.assertIn("| - / - / 0.50 (4.00x) † |", self.row("gemma_layers_bf16_s512"))
        self.assertAlmostEqual(float(self.models["gemma_layers_bf16_s512"]["compile_device_speedup"]), 4.0)

    def test_card_speedup_over_compile_is_the_ratio_of_speedups(self):
        card = self.cards[("gemma_layers_bf16_s512", GEMMA_SOFTMAX)]
        self.assertAlmostEqual(float(card["compile_vs_eager"]), 2.0)
        self.assertAlmostEqual(float(card["kf_vs_compile"]), float(card["kf_vs_eager"]) / 2.0)
        self.assertEqual(card["compile_source"], "baselines")
        self.assertIn("| 25.0 † |", self.markdown)

    def test_gpu_time_of_compile_against_its_own_eager(self):
        # gemma softmax: eager 40 us, compile 20 us of GPU time in the pass: 2.00x; Kernel Forge by its
        # evaluator speedup (3.66x in run 3) over that.
        card = self.cards[("gemma_layers_bf16_s512", GEMMA_SOFTMAX)]
        self.assertAlmostEqual(float(card["compile_vs_eager_device"]), 2.0)
        self.assertAlmostEqual(float(card["kf_vs_compile_device"]), float(card["evaluator_speedup"]) / 2.0)
        self.assertEqual(card["compile_device_source"], "baselines")

    def test_a_run_with_per_call_compile_gets_only_the_gpu_time(self):
        # qwen softmax in run 5: per-call compile measured there (kept); GPU time from the pass,
        # 1000 / 10 us = 100x over eager, so KF (3.68x by the evaluator) is far behind it.
        card = self.cards[("qwen_layers_bf16_s2048", self.qwen_softmax["id"])]
        self.assertAlmostEqual(float(card["compile_us"]), self.qwen_softmax["do_bench"]["compile"]["us"])
        self.assertAlmostEqual(float(card["compile_vs_eager_device"]), 100.0)
        self.assertAlmostEqual(float(card["kf_vs_compile_device"]), float(card["evaluator_speedup"]) / 100.0)
        self.assertEqual(card["compile_device_source"], "baselines")
        self.assertEqual(card["compile_source"], "")

    def test_a_run_with_end_to_end_compile_gets_only_its_gpu_time(self):
        # qwen s2048: run 5's per-call 6.32 ms stays (unmarked); the GPU time is the pass's, eager
        # 9.6 ms and compile 0.4 ms there: 24x, marked.
        row = self.row("qwen_layers_bf16_s2048")
        self.assertIn("| 6.32 (1.89x) |", row)
        self.assertIn("| - / - / 0.40 (24.00x) † |", row)
        self.assertEqual(self.models["qwen_layers_bf16_s2048"]["compile_device_source"], "baselines")

    def test_measured_numbers_are_never_replaced(self):
        card = self.cards[("qwen_layers_bf16_s2048", self.qwen_softmax["id"])]
        self.assertEqual(card["compile_source"], "")
        self.assertAlmostEqual(float(card["compile_us"]), self.qwen_softmax["do_bench"]["compile"]["us"])
        self.assertIn("| 6.32 (1.89x) |", self.row("qwen_layers_bf16_s2048"))
        self.assertEqual(self.models["qwen_layers_bf16_s2048"]["compile_source"], "")

    def test_the_pass_is_named_with_what_it_lacks(self):
        self.assertIn("come from a separate baselines pass (bench/suite.py --baselines-from) of "
                      "2026-12-02T10:00:00+00:00, commit abcdef123456", self.markdown)
        self.assertIn("that pass lacks measure card 0123abcd", self.markdown)
        self.assertIn("`python3 bench/suite.py --baselines-from X --models gemma_layers_bf16_s512`", self.markdown)

    def test_runs_with_different_settings_name_each(self):
        # Run 3 ran without torch.compile, run 5 with it: one settings line would misstate one of them.
        self.assertIn("- Settings of gemma_layers_bf16_s512: ", self.markdown)
        self.assertIn("torch_compile False", self.markdown)
        self.assertIn("- Settings of resnet50_fp16_cl, qwen_layers_bf16_s2048: ", self.markdown)

    def test_a_pass_without_end_to_end_compile_fills_nothing_there(self):
        # ResNet-50 fp32: run 3 has no torch.compile (null), and neither has a pass whose compile did
        # not finish: the row keeps "-" and the report still runs.
        with tempfile.TemporaryDirectory(prefix="kforge-report-nocompile-") as tmp:
            resnet = os.path.join(RUN3, "resnet50_fp32.json")
            self.assertIsNone(read(resnet)["end_to_end"].get("compile"))
            unfinished = baselines_of("resnet50_fp32", {}, 6.0, 3.0, ["end to end compile"])
            unfinished["end_to_end"]["compile"] = None
            with open(os.path.join(tmp, "pass.json"), "w") as f:
                json.dump(unfinished, f)
            run, _, markdown = run_report([resnet, os.path.join(tmp, "pass.json")], tmp, "n")
            self.assertEqual(run.returncode, 0, run.stderr)
        row = next(line for line in markdown.splitlines() if line.startswith("| resnet50_fp32 |"))
        self.assertIn("| - (-) |", row)

    def test_a_filled_end_to_end_compile_leaves_the_missing_list(self):
        with tempfile.TemporaryDirectory(prefix="kforge-report-missing-") as tmp:
            resnet = os.path.join(RUN5, "resnet50_fp16_cl.json")
            self.assertIn("end to end compile", read(resnet)["missing"])
            with open(os.path.join(tmp, "pass.json"), "w") as f:
                json.dump(baselines_of("resnet50_fp16_cl", {}, 7.8, 3.9), f)
            run, _, markdown = run_report([resnet, os.path.join(tmp, "pass.json")], tmp, "m")
            self.assertEqual(run.returncode, 0, run.stderr)
        self.assertNotIn("**Incomplete**", markdown)
        self.assertIn("| 3.90 (2.00x) † |", markdown)


RUN4 = os.path.join(RESULTS, "2026-12-01-suite-h200-run4")


def without_compile(result):
    """`result` as a suite.py --no-compile rerun publishes it: no torch.compile number anywhere, later."""
    rerun = json.loads(json.dumps(result))
    rerun["settings"]["torch_compile"] = rerun["settings"]["card_torch_compile"] = False
    rerun["environment"]["date"] = "2026-12-01T20:00:00+00:00"
    rerun["end_to_end"].pop("compile", None)
    rerun["summary"]["end_to_end"] = {k: v for k, v in rerun["summary"]["end_to_end"].items()
                                      if not k.startswith("compile")}
    for card in rerun["cards"]:
        (card.get("do_bench") or {}).pop("compile", None)
        card["speedups"] = {k: v for k, v in (card.get("speedups") or {}).items() if "compile" not in k}
    return rerun


class ReportKeepsAnEarlierRunsCompileTest(unittest.TestCase):
    """A --no-compile rerun of a model replacing a run that measured torch.compile (run 4's SD block:
    0.72 ms end to end, 1.76x over its eager 1.26 ms) keeps that run's numbers, marked and named."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kforge-report-earlier-")
        earlier = os.path.join(RUN4, "sd_block_fp16.json")
        cls.earlier = read(earlier)
        rerun = without_compile(cls.earlier)
        rerun["summary"]["end_to_end"]["eager_ms"] = rerun["end_to_end"]["eager"]["ms"] = 2.0  # another lease
        later = os.path.join(cls.tmp.name, "rerun", "sd_block_fp16.json")
        os.makedirs(os.path.dirname(later))
        with open(later, "w") as f:
            json.dump(rerun, f)
        cls.report, stem, cls.markdown = run_report([earlier, later], cls.tmp.name, "earlier")
        with open(stem + "-models.csv") as f:
            cls.model = next(csv.DictReader(f))
        with open(stem + "-cards.csv") as f:
            cls.cards = {row["card"]: row for row in csv.DictReader(f)}
        cls.rerun_alone, _, cls.markdown_alone = run_report([later], cls.tmp.name, "alone")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_end_to_end_compile_is_kept_against_its_own_eager(self):
        self.assertEqual(self.report.returncode, 0, self.report.stderr)
        row = next(line for line in self.markdown.splitlines() if line.startswith("| sd_block_fp16 |"))
        self.assertIn("| 0.72 (1.76x) † |", row)  # 1.26 / 0.72 from run 4, not the rerun's eager 2.0 ms
        self.assertEqual(self.model["compile_source"], "earlier run")

    def test_cards_keep_their_compile_numbers_marked(self):
        measured = [c for c in self.earlier["cards"] if (c.get("do_bench") or {}).get("compile")]
        self.assertTrue(measured)
        for card in measured:
            row = self.cards[card["id"]]
            self.assertEqual(row["compile_source"], "earlier run")
            self.assertAlmostEqual(float(row["compile_us"]), card["do_bench"]["compile"]["us"])

    def test_the_source_is_named(self):
        self.assertIn("come from an earlier run of this model (bench/suite.py with torch.compile; a later run "
                      "without it replaced it here) of 2026-12-01", self.markdown)

    def test_a_rerun_alone_has_no_compile_numbers(self):
        self.assertEqual(self.rerun_alone.returncode, 0, self.rerun_alone.stderr)
        row = next(line for line in self.markdown_alone.splitlines() if line.startswith("| sd_block_fp16 |"))
        self.assertIn("| - (-) |", row)
        self.assertNotIn("†", row)


class AssembleBaselinesTest(unittest.TestCase):
    """suite_results.assemble_baselines: measured cards, cards this capture lacks, unmeasured pieces."""

    def test_lists_what_is_missing(self):
        sys.path.insert(0, os.path.join(SOURCE, "bench"))
        from suite_results import assemble_baselines, write_json
        with tempfile.TemporaryDirectory(prefix="kforge-assemble-baselines-") as model_dir:
            write_json(os.path.join(model_dir, "capture.json"), {"cards": 2})
            write_json(os.path.join(model_dir, "project", "cards.json"),
                       {"cards": [{"id": "aaaa000000000000"}, {"id": "bbbb000000000000"}]})
            write_json(os.path.join(model_dir, "baselines", "cards", "aaaa000000000000.json"),
                       {"id": "aaaa000000000000", "do_bench": {"eager_us": 5.0, "compile": {"us": 4.0}}})
            write_json(os.path.join(model_dir, "baselines", "e2e_eager.json"), {"ms": 2.0})
            result = assemble_baselines(model_dir, "m", "d", {"date": "x"}, [],
                                        ["aaaa000000000000", "bbbb000000000000", "cccc000000000000"])
        self.assertEqual(result["kind"], "baselines")
        self.assertEqual([c["id"] for c in result["cards"]], ["aaaa000000000000"])
        self.assertEqual(result["missing"], ["measure card bbbb0000", "card cccc0000 (not in this capture)",
                                             "end to end compile"])
        self.assertEqual(result["end_to_end"]["eager"], {"ms": 2.0})
        # The earlier run measured torch.compile end to end: the pass does not, and lacks nothing there.
        with tempfile.TemporaryDirectory(prefix="kforge-assemble-baselines-") as model_dir:
            write_json(os.path.join(model_dir, "capture.json"), {"cards": 0})
            skipped = assemble_baselines(model_dir, "m", "d", {}, [], [], end_to_end_skipped=True)
        self.assertEqual(skipped["missing"], [])


if __name__ == "__main__":
    unittest.main()
