"""kforge export as a user meets it: a project captured on the CPU, searched compile-only, with a
hand-built tree (nodes marked passed with a speedup, real built-in sources), exported and checked
with kforge verify; and every bad input ends in one error line with nothing written."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
import zipfile

from cli_support import KFORGE, MODELS, ErrorLineAssertions, kforge


def mark_passed(node, median_us, eager_us, paired=None):
    """What the evaluator stores for a candidate that passed on a GPU, on a compile-only node."""
    node["status"] = "passed"
    node["failure_reason"] = ""
    node["latency"] = {"median_us": median_us, "q1_us": median_us * 0.98, "q3_us": median_us * 1.02}
    node["eager_us"] = eager_us
    node["speedup"] = eager_us / median_us
    details = node["evaluation_details"]
    details["status"] = "passed"
    details.pop("reason", None)
    timing = {"method": "cupti kernel activity, L2 flushed",
              "candidate": {"median_us": median_us, "q1_us": median_us * 0.98, "q3_us": median_us * 1.02}}
    if paired is not None:
        timing["speedup"] = paired
    details["evaluation"] = {"status": "passed", "validated_input_sets": 4, "timing": timing,
                             "checks": [{"name": "sample call-0: output 0", "passed": True, "detail": "max error 0"}]}


def wait_until_catching(pid, signum, timeout=60.0):
    """Whether process pid installs a handler for signum within timeout seconds (Linux: the SigCgt
    mask of /proc/PID/status)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/status") as f:
                caught = next((int(line.split()[1], 16) for line in f if line.startswith("SigCgt:")), 0)
        except OSError:
            return False
        if caught & (1 << (signum - 1)):
            return True
        time.sleep(0.01)
    return False

class ExportCliTest(ErrorLineAssertions, unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="kforge_export_cli_")
        # A copy of the model, so that a test can remove it without touching the shared one.
        self.model = os.path.join(self.tmp, "basic_block.pt")
        shutil.copy(os.path.join(MODELS, "basic_block.pt"), self.model)
        self.project = os.path.join(self.tmp, "p")
        result = kforge("capture", self.model, "--inputs", "2x8x8x8", "-o", self.project, "--device", "cpu",
                        "--quiet", "--json")
        self.assertEqual(result.returncode, 0, result.stderr)
        cards = json.loads(result.stdout)["cards"]
        self.cards = {c["op"]: c for c in cards if c["region"] is None}
        self.regions = [c for c in cards if c["region"] is not None]
        self.relu = self.cards["aten::relu"]["id"]
        self.batch_norm = self.cards["aten::batch_norm"]["id"]
        # Compile-only search (no GPU): real built-in sources and plans, nothing measured.
        result = kforge("optimize", self.project, "--cards", self.relu, self.batch_norm, "--iterations", "3")
        self.assertEqual(result.returncode, 0, result.stderr)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def edit_tree(self, card, edit):
        path = os.path.join(self.project, "search", card, "tree.json")
        with open(path) as f:
            tree = json.load(f)
        edit(tree["nodes"])
        with open(path, "w") as f:
            json.dump(tree, f, indent=1)
        return tree

    def hand_built_trees(self):
        """relu: n1 1.6x (paired), n2 0.9x; batch_norm: n0 2x (a composite operator, hooked as itself)."""
        def relu(nodes):
            mark_passed(nodes[1], 10.0, 16.4, paired=1.6)
            mark_passed(nodes[2], 10.0, 9.0)
        def batch_norm(nodes):
            mark_passed(nodes[0], 5.0, 10.0)
        self.relu_tree = self.edit_tree(self.relu, relu)
        self.edit_tree(self.batch_norm, batch_norm)

    def test_export_then_verify(self):
        self.hand_built_trees()
        out = os.path.join(self.tmp, "model.cast")
        result = kforge("export", self.project, "-o", out, "--sanitize", "off")
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertTrue(lines[0].startswith("card"), result.stdout)
        rows = {line.split()[0]: line for line in lines[1:5]}
        self.assertEqual(set(rows), {c["id"] for c in self.cards.values()})
        self.assertIn("custom    1.600x (n1), not sanitizer-checked", rows[self.relu])
        self.assertIn("custom    2.000x (n0), not sanitizer-checked", rows[self.batch_norm])
        self.assertIn("fallback  vendor-backed (cuBLAS/cuDNN): not searched", rows[self.cards["aten::_convolution"]["id"]])
        self.assertIn("fallback  no search tree", rows[self.cards["aten::add"]["id"]])
        self.assertEqual(len(self.regions), 2)  # batch_norm -> relu, batch_norm -> add -> relu
        # Region cards get manifest entries like op cards: these two were never optimized.
        for region in self.regions:
            self.assertRegex(result.stdout, region["id"] + r"\s+region: batch_norm.*fallback  no search tree")
        self.assertIn("wrote " + out + ": 6 cards, 2 custom, 4 fallback; architectures sm_90; model included", result.stdout)
        self.assertIn("not sanitizer-checked: k", result.stdout)
        self.assertNotIn("fused-region kernels", result.stdout)
        self.assertIn("(--sanitize off)", result.stdout)
        self.assertRegex(result.stdout, r"\ntook \d+\.\d s \(sanitizer gate 0\.0 s, in-model check \d+\.\d s\)\n")
        # CI builds have no CUDA runtime; a CUDA build on a machine without a GPU cannot run the model.
        not_run = ("in-model check: not run (this build has no CUDA runtime (kforge-cast-run not found))",
                   "in-model check: not run (cannot run the model on the captured inputs: ",
                   "in-model check: not run (", )
        self.assertTrue(any(text in result.stdout for text in not_run), result.stdout)

        verify = kforge("verify", out, "--arch", "sm_90")
        self.assertEqual(verify.returncode, 0, verify.stderr)
        self.assertIn("6 kernels (2 custom, 4 fallback)", verify.stdout)
        self.assertIn("model included", verify.stdout)
        self.assertTrue(any(text in verify.stdout for text in not_run), verify.stdout)
        report = json.loads(kforge("verify", out, "--json").stdout)
        self.assertEqual(len(report["audit"]), 6)
        self.assertEqual(report["header"]["min_torch_version"].count("."), 1)

        with zipfile.ZipFile(out) as z:
            manifest = json.loads(z.read("manifest.json"))
            relu = next(k for k in manifest["kernels"] if k["kind"] == "custom" and k["card"]["op"] == "aten::relu")
            self.assertEqual(relu["card"]["id"], self.relu)
            self.assertEqual(relu["card"]["op"], "aten::relu")
            with open(os.path.join(self.project, "cards.json")) as f:
                card = next(c for c in json.load(f)["cards"] if c["id"] == self.relu)
            self.assertEqual(relu["card"]["args"], card["args"])
            self.assertNotIn("region", relu["card"])
            # A region card's manifest entry carries its chain, as cards.json does.
            region = next(k for k in manifest["kernels"] if k["card"]["id"] == self.regions[0]["id"])
            self.assertEqual(region["card"]["op"], "kforge::region")
            self.assertEqual(region["card"]["region"], self.regions[0]["region"])
            self.assertEqual([t["arg"] for t in region["guard"]["tensors"]],
                             [a["name"] for a in self.regions[0]["args"]])
            self.assertEqual(z.read(relu["source"]).decode(), self.relu_tree["nodes"][1]["candidate"]["source"])
            self.assertTrue(z.read(relu["cubins"]["sm_90"]).startswith(b"\x7fELF"))
            self.assertIn(".entry", z.read(relu["ptx"]["path"]).decode())
            self.assertEqual(relu["ptx"]["arch"], "compute_90")
            self.assertEqual(relu["speedup"], 1.6)
            self.assertAlmostEqual(relu["timing"]["median_us"], 10.0)
            self.assertAlmostEqual(relu["timing"]["spread_percent"], 4.0)
            guard = relu["guard"]
            self.assertEqual(guard["compute_capability"], [9, 0])
            self.assertEqual([t["arg"] for t in guard["tensors"]], ["self"])
            self.assertEqual(guard["tensors"][0]["sizes"], card["args"][0]["tensors"][0]["sizes"])
            self.assertEqual(guard["tensors"][0]["alignment_bytes"], 16)
            self.assertEqual(relu["validation"]["checks"][0]["name"], "sample call-0: output 0")
            self.assertEqual(relu["validation"]["sanitizer"], {"checked": False, "reason": "--sanitize off"})
            self.assertEqual(relu["launch_plan"], self.relu_tree["nodes"][1]["evaluation_details"]["plan"])
            with open(self.model, "rb") as f:
                self.assertEqual(z.read("model.pt"), f.read())

    def test_no_model_check_is_recorded(self):
        self.hand_built_trees()
        out = os.path.join(self.tmp, "skip.cast")
        result = kforge("export", self.project, "-o", out, "--json", "--sanitize", "off", "--no-model-check")
        self.assertEqual(result.returncode, 0, result.stderr)
        report = json.loads(result.stdout)
        self.assertEqual(report["in_model_check"],
                         {"run": False, "passed": False, "reason": "skipped (--no-model-check)", "dropped": []})
        self.assertIn("in-model check: not run (skipped (--no-model-check))", report["notes"])

    def test_json_report_min_speedup_and_cards(self):
        self.hand_built_trees()
        out = os.path.join(self.tmp, "k.cast")
        result = kforge("export", self.project, "-o", out, "--json", "--no-model", "--min-speedup", "2",
                        "--cards", self.relu[:6], "--sanitize", "off")
        self.assertEqual(result.returncode, 0, result.stderr)
        report = json.loads(result.stdout)
        decisions = {c["card"]: c for c in report["cards"]}
        self.assertEqual(len(decisions), 6)  # 4 op cards, 2 region cards
        self.assertEqual(decisions[self.relu]["decision"], "fallback")
        self.assertEqual(decisions[self.relu]["reason"], "best 1.600x below --min-speedup 2 (n1)")
        self.assertEqual(decisions[self.batch_norm]["reason"], "not selected (--cards)")
        self.assertFalse(report["header"]["model_included"])
        self.assertEqual(report["header"]["counts"]["custom"], 0)
        self.assertEqual(report["in_model_check"],
                         {"run": False, "passed": False, "reason": "kernels-only package: no model to run", "dropped": []})
        seconds = report["seconds"]
        self.assertEqual(set(seconds), {"sanitizer", "in_model_check", "total"})
        self.assertEqual(seconds["sanitizer"], 0)  # --sanitize off: the gate never ran
        self.assertGreaterEqual(seconds["in_model_check"], 0)
        self.assertGreaterEqual(seconds["total"], seconds["in_model_check"])
        self.assertGreater(seconds["total"], 0)
        verify = kforge("verify", out)
        self.assertEqual(verify.returncode, 0, verify.stderr)
        self.assertIn("model not included", verify.stdout)

    def test_dry_run_previews_the_decisions_and_writes_nothing(self):
        self.hand_built_trees()
        result = kforge("export", self.project, "--dry-run", "--sanitize", "off")
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = {line.split()[0]: line for line in result.stdout.splitlines()[1:] if line.split()
                and line.split()[0] in {c["id"] for c in self.cards.values()}}
        self.assertIn("custom    best 1.600x (n1)", rows[self.relu])
        self.assertIn("dry run: 2 of 6 cards would ship", result.stdout)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["basic_block.pt", "p"])  # nothing written
        # The same rule as the export: --min-speedup and --cards, as JSON.
        result = kforge("export", self.project, "--dry-run", "--json", "--min-speedup", "2", "--cards",
                        self.relu[:6])
        self.assertEqual(result.returncode, 0, result.stderr)
        report = json.loads(result.stdout)
        self.assertTrue(report["dry_run"])
        self.assertEqual(report["would_ship"], 0)
        decisions = {c["card"]: c for c in report["cards"]}
        self.assertEqual(decisions[self.relu]["reason"], "best 1.600x below --min-speedup 2 (n1)")
        self.assertEqual(decisions[self.relu]["speedup"], 1.6)
        self.assertEqual(decisions[self.batch_norm]["reason"], "not selected (--cards)")
        out = os.path.join(self.tmp, "k.cast")
        exported = json.loads(kforge("export", self.project, "-o", out, "--json", "--no-model", "--min-speedup", "2",
                                     "--cards", self.relu[:6], "--sanitize", "off").stdout)
        for card in exported["cards"]:
            self.assertEqual(card["reason"], decisions[card["card"]]["reason"])

    def test_sanitizer_auto_and_on_without_a_usable_sanitizer(self):
        self.hand_built_trees()
        out = os.path.join(self.tmp, "s.cast")
        missing = os.path.join(self.tmp, "no-such-worker")
        # auto: no worker (or no compute-sanitizer): exported, visibly not sanitizer-checked.
        result = kforge("export", self.project, "-o", out, "--worker", missing)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("1.600x (n1), not sanitizer-checked", result.stdout)
        with zipfile.ZipFile(out) as z:
            relu = next(k for k in json.loads(z.read("manifest.json"))["kernels"] if k["kind"] == "custom")
        self.assertFalse(relu["validation"]["sanitizer"]["checked"])
        self.assertIn("not sanitizer-checked", relu["validation"]["sanitizer"]["reason"])
        # --rerun-sanitizer and --sanitize-jobs are accepted; with no usable sanitizer there is nothing to run.
        result = kforge("export", self.project, "-o", out, "--worker", missing, "--rerun-sanitizer",
                        "--sanitize-jobs", "3")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("1.600x (n1), not sanitizer-checked", result.stdout)
        # on: the same export fails and leaves the earlier package as it was.
        with open(out, "rb") as f:
            before = f.read()
        self.assert_one_error_line(kforge("export", self.project, "-o", out, "--worker", missing, "--sanitize", "on"),
                                   "--sanitize on", "cannot run the sanitizer gate")
        with open(out, "rb") as f:
            self.assertEqual(f.read(), before)

    def test_a_project_without_passed_nodes_exports_fallbacks_only(self):
        out = os.path.join(self.tmp, "none.cast")
        result = kforge("export", self.project, "-o", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("no passed node with a measured speedup (3 nodes: 3 compiled-only)", result.stdout)
        self.assertIn("0 custom, 6 fallback; no cubins", result.stdout)
        self.assertIn("kforge: warning: the package has no custom kernel", result.stderr)
        self.assertEqual(kforge("verify", out).returncode, 0)

    def test_bad_inputs(self):
        self.hand_built_trees()
        out = os.path.join(self.tmp, "x.cast")
        cases = [
            (("export", self.project), ("-o FILE.cast",), 2),
            (("export", "-o", out), ("PROJECT_DIR",), 2),
            (("export", os.path.join(self.tmp, "none"), "-o", out), ("none",), 1),
            (("export", self.project, "-o", out, "--cards", "zzzz"), ("--cards zzzz",), 2),
            (("export", self.project, "-o", out, "--min-speedup", "fast"), ("--min-speedup", "fast"), 2),
            (("export", self.project, "-o", out, "--min-speedup", "0"), ("--min-speedup",), 2),
            (("export", self.project, "-o", out, "--sanitize", "maybe"), ("--sanitize", "maybe"), 2),
            (("export", self.project, "-o", out, "--sanitize-jobs", "0"), ("--sanitize-jobs", "'0'"), 2),
            (("export", self.project, "-o", out, "--sanitize-jobs", "two"), ("--sanitize-jobs", "two"), 2),
            (("export", self.project, "-o", out, "--arch", "90"), ("--arch", "90"), 2),
            (("export", self.project, "-o", out, "--bogus"), ("--bogus",), 2),
            (("export", self.project, "-o", os.path.join(self.tmp, "nodir", "x.cast")), ("nodir",), 1),
            (("export", self.project, "-o", self.tmp), ("is a directory",), 1),
        ]
        for args, needles, code in cases:
            with self.subTest(args=args):
                self.assert_one_error_line(kforge(*args), *needles, code=code)
                self.assertFalse(os.path.exists(out))
                self.assertFalse(os.path.exists(os.path.join(self.tmp, "nodir")))

        # An existing file that is not a .cast package is never overwritten.
        precious = os.path.join(self.tmp, "notes.txt")
        with open(precious, "w") as f:
            f.write("keep me")
        self.assert_one_error_line(kforge("export", self.project, "-o", precious), "notes.txt",
                                   "not a .cast package")
        with open(precious) as f:
            self.assertEqual(f.read(), "keep me")

        # A project without cards.
        empty = os.path.join(self.tmp, "empty")
        shutil.copytree(self.project, empty)
        with open(os.path.join(empty, "cards.json"), "w") as f:
            json.dump({"cards": []}, f)
        # graph.json names the calls of the cards removed above; a project of no cards has none.
        if os.path.exists(os.path.join(empty, "graph.json")):
            os.remove(os.path.join(empty, "graph.json"))
        self.assert_one_error_line(kforge("export", empty, "-o", out), "no cards")
        self.assertFalse(os.path.exists(out))

        # The model is gone: an error unless --no-model.
        os.remove(self.model)
        self.assert_one_error_line(kforge("export", self.project, "-o", out), "basic_block.pt", "--no-model")
        self.assertFalse(os.path.exists(out))
        self.assertEqual(kforge("export", self.project, "-o", out, "--no-model", "--sanitize", "off").returncode, 0)

        # A changed model is not the one the kernels were proven on.
        with open(self.model, "wb") as f:
            f.write(b"PK not the captured model")
        self.assert_one_error_line(kforge("export", self.project, "-o", os.path.join(self.tmp, "y.cast")),
                                   "changed since it was captured")
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "y.cast")))

    def test_ctrl_c_stops_after_the_card_in_work_and_writes_nothing(self):
        self.hand_built_trees()
        out = os.path.join(self.tmp, "c.cast")
        # A compute-sanitizer on PATH (never run) and a worker that takes two seconds to fail its
        # start: the sanitizer gate of the first custom kernel waits for it, and Ctrl-C arrives meanwhile.
        tools = os.path.join(self.tmp, "tools")
        os.makedirs(tools)
        for name, script in (("compute-sanitizer", "exit 1"), ("slow-worker", "sleep 2\nexit 1")):
            with open(os.path.join(tools, name), "w") as f:
                f.write("#!/bin/sh\n" + script + "\n")
            os.chmod(os.path.join(tools, name), 0o755)
        env = dict(os.environ, PATH=tools + os.pathsep + os.environ.get("PATH", ""))
        proc = subprocess.Popen([KFORGE, "export", self.project, "-o", out, "--worker", os.path.join(tools, "slow-worker")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        # Ctrl-C once export catches it (a fixed delay lost the race on a loaded machine: the
        # default action killed kforge before it had loaded), early in the two seconds' wait.
        self.assertTrue(wait_until_catching(proc.pid, signal.SIGINT), "kforge export never caught SIGINT")
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, stderr)
        lines = stderr.strip().splitlines()
        self.assertEqual(lines[0], "kforge: export: stopping after the card in work ...")
        self.assertRegex(lines[-1], r"^kforge: error: (card \d of \d|before the in-model check): "
                                    r"export cancelled: nothing written$")
        self.assertFalse(os.path.exists(out))
        self.assertEqual(stdout, "")

    def test_help_lists_every_export_option(self):
        result = kforge("export", "--help")
        self.assertEqual(result.returncode, 0)
        for option in ("--output", "--min-speedup", "--cards", "--arch", "--sanitize", "--rerun-sanitizer",
                       "--no-model", "--worker", "--json", "--dry-run"):
            self.assertIn(option, result.stdout)
        self.assertIn("export PROJECT_DIR -o FILE.cast", kforge("--help").stdout)


if __name__ == "__main__":
    unittest.main()


class RunCliTest(ErrorLineAssertions, unittest.TestCase):
    """kforge run's bad input; the GPU path is covered by tests/gpu/export_runtime_gpu.py."""

    def test_usage_errors(self):
        self.assert_one_error_line(kforge("run"), "expected exactly one FILE.cast", code=2)
        self.assert_one_error_line(kforge("run", "x.cast"), "--inputs is required", code=2)
        self.assert_one_error_line(kforge("run", "x.cast", "--inputs", "2x3", "--runs", "0"), "--runs", code=2)

    def test_missing_package_or_no_runtime(self):
        with tempfile.TemporaryDirectory() as tmp:
            missing = os.path.join(tmp, "missing.cast")
            result = kforge("run", missing, "--inputs", "2x3")
            # A CI build has no runtime; a CUDA build names the missing file.
            self.assert_one_error_line(result)
            self.assertTrue("this build has no CUDA runtime" in result.stderr or "missing.cast" in result.stderr,
                            result.stderr)

    def test_help(self):
        result = kforge("run", "--help")
        self.assertEqual(result.returncode, 0)
        self.assertIn("usage: kforge run FILE.cast --inputs SPEC...", result.stdout)
