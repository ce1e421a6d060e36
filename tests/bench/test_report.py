"""bench/report.py on the committed raw results of the second and third H200 suite runs
(bench/results/2026-12-01-suite-h200-run2/ and -run3/): the numbers in its tables come from those
files, a package without custom kernels shows no speedup, the in-process .cast time stands next to
the eager time it alternated with, and noisy rounds are marked. Plain Python: no torch, no GPU."""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.environ.get("KFORGE_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RESULTS = os.path.join(SOURCE, "bench", "results", "2026-12-01-suite-h200-run2")
RESULTS_RUN3 = os.path.join(SOURCE, "bench", "results", "2026-12-01-suite-h200-run3")
RESULTS_RUN4 = os.path.join(SOURCE, "bench", "results", "2026-12-01-suite-h200-run4")


def run_report(inputs, out_dir, suffix):
    """bench/report.py on `inputs` (result files or folders) into out_dir: the finished process, the
    path stem of what it wrote, and its markdown ("" when it failed)."""
    run = subprocess.run([sys.executable, os.path.join(SOURCE, "bench", "report.py"), *inputs, "--out-dir", out_dir,
                          "--suffix", suffix], capture_output=True, text=True)
    stem = os.path.join(out_dir, "2026-12-01-suite-h200-" + suffix)
    markdown = ""
    if run.returncode == 0:
        with open(stem + ".md") as f:
            markdown = f.read()
    return run, stem, markdown


def run_report_of(result, out_dir, suffix):
    """bench/report.py on one result (a dict, written to out_dir/in/MODEL.json): the finished
    process and its markdown."""
    import json
    os.makedirs(os.path.join(out_dir, "in"))
    with open(os.path.join(out_dir, "in", result["model"] + ".json"), "w") as f:
        json.dump(result, f)
    run, _, markdown = run_report([os.path.join(out_dir, "in")], out_dir, suffix)
    return run, markdown


class ReportOf:
    """Runs bench/report.py on `results` once for the class; markdown and cards CSV in attributes."""
    results = RESULTS

    @classmethod
    def setUpClass(cls):
        cls.out = tempfile.mkdtemp(prefix="kforge-report-")
        cls.result, base, cls.markdown = run_report([cls.results], cls.out, "test")
        with open(base + "-cards.csv") as f:
            cls.cards = list(csv.DictReader(f))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.out, ignore_errors=True)


class ReportTest(ReportOf, unittest.TestCase):

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


class ReportOfRoundsTest(ReportOf, unittest.TestCase):
    results = RESULTS_RUN3

    def test_cast_time_stands_after_the_eager_time_of_its_rounds(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        # sd_block_fp16: eager rounds 1.2466-1.2495 ms, steady; the .cast median 0.993 ms.
        self.assertIn("| 1.25 | 1.25 -> 0.99 (1.26x) | - | 1.28 -> 1.01 |", self.markdown)

    def test_rounds_whose_eager_times_spread_are_marked_noisy(self):
        # resnet50_fp16_cl: eager alone 3.95 ms, its rounds 3.68 to 5.40 ms.
        self.assertIn("| 3.95 | 5.15 -> 4.24 (1.21x), noisy: eager rounds 3.68-5.40 |", self.markdown)
        self.assertIn("2.31 -> 2.92 (0.94x), noisy: eager rounds 2.30-3.23", self.markdown)
        self.assertNotIn("0.99 (1.26x), noisy", self.markdown)

    def test_models_of_different_commits_name_each_commit(self):
        self.assertIn("- Commit of resnet50_fp32: 0c6a34e", self.markdown)
        self.assertIn("- Commit of resnet50_fp16_cl, sd_block_fp16,", self.markdown)


class EndToEndGpuTimeTest(unittest.TestCase):
    """A run with end-to-end GPU times (suite.py's model_device_time_ms): suite_results.summarize
    takes them into the summary and the report shows them next to the wall times."""

    @staticmethod
    def run4_sd_with_gpu_times(cast_host_ms):
        """Run 4's SD block result with end-to-end GPU and host times filled in, summarized."""
        import json
        sys.path.insert(0, os.path.join(SOURCE, "bench"))
        from suite_results import summarize
        with open(os.path.join(RESULTS_RUN4, "sd_block_fp16.json")) as f:
            result = json.load(f)
        e2e = result["end_to_end"]
        e2e["eager"]["device_ms"] = 1.0
        e2e["compile"]["device_ms"] = 0.5
        e2e["cast_runtime"]["rounds"]["eager_device_ms"] = [1.0, 1.1, 1.0]
        e2e["cast_runtime"]["rounds"]["cast_device_ms"] = [0.8, None, 0.8]
        e2e["cast_runtime"]["rounds"]["device_errors"] = ["cast: RuntimeError: the host took 9000 us"]
        e2e["cast_runtime"]["rounds"]["eager_host_ms"] = [0.7, 0.7, 0.75]
        e2e["cast_runtime"]["rounds"]["cast_host_ms"] = cast_host_ms
        e2e["eager"]["host_ms"] = 0.7
        e2e["cast_runtime"].update(device_ms=0.8, eager_device_ms=1.0, device_speedup=1.25)
        e2e["kforge_run"]["report"].update(eager_gpu_ms=1.2, cast_gpu_ms=0.9, gpu_speedup=1.2 / 0.9)
        result["summary"]["end_to_end"] = summarize(result["cards"], e2e, result.get("optimize"),
                                                    result["cards"])["end_to_end"]
        return result

    def test_gpu_time_column_and_rounds(self):
        result = self.run4_sd_with_gpu_times([0.9, None, 0.95])
        summary = result["summary"]["end_to_end"]
        self.assertEqual(summary["cast_runtime_device_speedup_vs_eager"], 1.25)  # the rounds' own ratio
        self.assertEqual(summary["compile_device_speedup_vs_eager"], 2.0)  # against eager alone
        with tempfile.TemporaryDirectory(prefix="kforge-report-device-") as tmp:
            run, markdown = run_report_of(result, tmp, "device")
            self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("| 1.00 / 0.80 (1.25x) / 0.50 (2.00x) |", markdown)
        self.assertIn("GPU time, eager / .cast ms: 1.00 / 0.80, 1.10 / -, 1.00 / 0.80; speedup 1.250x", markdown)
        self.assertIn("GPU time not isolated (cast: RuntimeError: the host took 9000 us)", markdown)
        self.assertIn("GPU time eager / .cast ms: 1.20 / 0.90 (1.33x)", markdown)  # kforge run's own
        self.assertIn("| 1.31 -> 1.07 (GPU time 1.20 -> 0.90) |", markdown)  # and in the model table
        self.assertIn("host enqueue of one forward, eager / .cast ms: 0.70 / 0.90, 0.70 / -, 0.75 / 0.95", markdown)
        self.assertIn("GPU time 1.00 ms, host enqueue of one forward 0.70 ms", markdown)  # eager alone
        self.assertIn(", host-bound: enqueue 0.93 ms for 0.80 ms of GPU time |", markdown)

    def test_a_package_the_host_keeps_up_with_is_not_host_bound(self):
        result = self.run4_sd_with_gpu_times([0.5, 0.6, 0.5])
        with tempfile.TemporaryDirectory(prefix="kforge-report-gpubound-") as tmp:
            run, markdown = run_report_of(result, tmp, "gpubound")
            self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("host enqueue of one forward, eager / .cast ms: 0.70 / 0.50", markdown)
        self.assertNotIn("host-bound:", markdown)

    def test_the_backend_route_has_its_own_column(self):
        import json
        sys.path.insert(0, os.path.join(SOURCE, "bench"))
        from suite_results import summarize
        result = self.run4_sd_with_gpu_times([0.5, 0.6, 0.5])
        e2e = result["end_to_end"]
        e2e["cast_backend"] = {"ms": 0.7, "eager_ms": 1.05, "speedup": 1.5, "device_ms": 0.6, "eager_device_ms": 1.0,
                               "device_speedup": 1.0 / 0.6, "output": {"max_abs_diff": 0.0, "reference_max_abs": 2.0},
                               "stats": {"kernels": [{"id": "k0", "hits": 4}]}}
        result["summary"]["end_to_end"] = summarize(result["cards"], e2e, result.get("optimize"),
                                                    result["cards"])["end_to_end"]
        with tempfile.TemporaryDirectory(prefix="kforge-report-backend-") as tmp:
            run, markdown = run_report_of(json.loads(json.dumps(result)), tmp, "backend")
            self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("| 1.05 -> 0.70 (1.50x), GPU time 0.60 (1.67x) |", markdown)
        self.assertIn("- .cast via torch.compile(backend=kforge_backend): max abs diff vs eager 0", markdown)

    def test_runs_without_gpu_times_show_a_dash(self):
        with tempfile.TemporaryDirectory(prefix="kforge-report-nodevice-") as tmp:
            _, _, markdown = run_report([RESULTS_RUN4], tmp, "nodevice")
        sd = next(line for line in markdown.splitlines() if line.startswith("| sd_block_fp16 |"))
        self.assertIn("(1.76x) | - |", sd)


class ExportPhasesTest(unittest.TestCase):
    """Results of a kforge export that reports its phases: the report says where the time went."""

    def test_export_phases_line(self):
        import json
        with tempfile.TemporaryDirectory(prefix="kforge-report-phases-") as tmp:
            with open(os.path.join(RESULTS_RUN4, "sd_block_fp16.json")) as f:
                result = json.load(f)
            result["export"]["seconds"] = {"sanitizer": 21.4, "in_model_check": 9.6, "total": 34.3}
            result["cards"][0]["export"]["sanitizer_seconds"] = {
                "memcheck": {"start": 4.0, "evaluate": 2.0, "exit": 1.0},
                "initcheck": {"start": 5.0, "evaluate": 3.0, "exit": 9.0}}
            result["cards"][1]["export"]["sanitizer_reused"] = True
            run, markdown = run_report_of(result, tmp, "phases")
            self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("Export took 34 s: sanitizer gate 21 s, in-model check 10 s. Sanitizer gate: 1 kernel(s) run, "
                      "1 reused; slowest tool run initcheck on group_norm f16[2,512,64,64]: 17 s (start 5 s, "
                      "evaluate 3 s, exit 9 s).", markdown)

    def test_sanitizer_timing_of_a_decision(self):
        sys.path.insert(0, os.path.join(SOURCE, "bench"))
        from suite_results import sanitizer_timing
        steps = {"start": 1.0, "evaluate": 2.0, "exit": 3.0}
        record = {"checked": True, "passed": True, "tools": {"memcheck": {"errors": 0, "seconds": steps},
                                                             "racecheck": {"errors": 0}}}
        self.assertEqual(sanitizer_timing(record), {"sanitizer_seconds": {"memcheck": steps}})
        self.assertEqual(sanitizer_timing({"checked": True, "reused": {"checked_utc": "x"}}), {"sanitizer_reused": True})
        self.assertEqual(sanitizer_timing({"checked": False, "reason": "off"}), {})
        self.assertEqual(sanitizer_timing(None), {})


class CoveredShareTest(unittest.TestCase):
    """suite_results.covered_share: a region card's calls are its members' and count once."""

    def test_regions_and_their_members_count_each_call_once(self):
        sys.path.insert(0, os.path.join(SOURCE, "bench"))
        from suite_results import covered_share
        cards = [{"id": "a", "time_share": 0.4, "call_positions": [0, 2]},
                 {"id": "b", "time_share": 0.6, "call_positions": [1, 3]},
                 {"id": "r", "time_share": 1.0, "call_positions": [0, 2],
                  "region": {"occurrences": [[0, 1], [2, 3]]}},
                 {"id": "first", "time_share": 0.5, "call_positions": [0],
                  "region": {"occurrences": [[0, 1]]}}]
        rows = lambda *ids: [{"id": i, "time_share": next(c["time_share"] for c in cards if c["id"] == i)} for i in ids]
        self.assertAlmostEqual(covered_share(rows("a", "b", "r"), cards), 1.0)  # not 2.0
        self.assertAlmostEqual(covered_share(rows("r"), cards), 1.0)
        self.assertAlmostEqual(covered_share(rows("a"), cards), 0.4)
        self.assertAlmostEqual(covered_share(rows("first"), cards), 0.5)  # one call of each: 0.2 + 0.3
        self.assertAlmostEqual(covered_share(rows("a", "first"), cards), 0.7)
        # Results without call positions (older runs): the rows' shares summed, as before.
        self.assertAlmostEqual(covered_share([{"id": "x", "time_share": 0.25}, {"id": "y", "time_share": 0.5}],
                                             [{"id": "x"}, {"id": "y"}]), 0.75)


if __name__ == "__main__":
    unittest.main()
