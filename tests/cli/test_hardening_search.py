"""kforge optimize and kforge tree without dead ends (docs/search.md, "A failed root", "kforge
optimize: outcome and exit status", "Bounded storage"): a failed root fails the run and is retried,
--restart keeps the old tree, Ctrl-C exits 130 with the trees saved, damaged tree numbers are one
clear line, and multi-megabyte LLM replies leave tree.json small. Compile-only: no GPU needed."""
import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from cli_support import KFORGE, MODELS, ErrorLineAssertions, fake_openai_server, kforge

KERNELS = os.path.join(os.environ["KFORGE_SOURCE_DIR"], "tests", "gpu", "kernels")


class OptimizeHardeningTest(ErrorLineAssertions, unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="kforge_hardening_search_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def capture(self, model, inputs, name):
        out = os.path.join(self.tmp, name)
        result = kforge("capture", os.path.join(MODELS, model), "--inputs", inputs, "-o", out, "--device", "cpu",
                        "--quiet", "--json")
        self.assertEqual(result.returncode, 0, result.stderr)
        return out, [card["id"] for card in json.loads(result.stdout)["cards"]]

    def softmax_project(self):
        project, cards = self.capture("softmax_only.pt", "64x1000:bfloat16", "softmax")
        return project, cards[0]

    def tree(self, project, card):
        result = kforge("tree", project, "--card", card, "--json")
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)

    def card_dir(self, project, card):
        return os.path.join(project, "search", card)

    def test_a_failed_root_fails_the_run_and_resume_retries_it(self):
        project, card = self.softmax_project()
        bad = kforge("optimize", project, "--worker", "/nonexistent/kforge-worker", "--iterations", "3")
        self.assertEqual(bad.returncode, 1, bad.stdout + bad.stderr)
        errors = [line for line in bad.stderr.splitlines() if line.startswith("kforge: error: ")]
        self.assertEqual(len(errors), 1, bad.stderr)
        self.assertIn(card[:8], errors[0])
        self.assertIn("/nonexistent/kforge-worker", errors[0])
        self.assertIn("root n0", errors[0])
        self.assertNotIn("candidates were generated and compiled", bad.stdout)
        failed = self.tree(project, card)
        self.assertEqual(len(failed["nodes"]), 1)
        self.assertNotIn(failed["nodes"][0]["status"], {"passed", "compiled-only"})

        # A plain run refuses the existing tree and says what to do instead.
        again = kforge("optimize", project, "--iterations", "3")
        self.assert_one_error_line(again, "tree.json", "exists already", "--resume", "--restart")

        # --resume with a good worker retries the root; the failed attempt stays on record.
        resumed = kforge("optimize", project, "--resume", "--iterations", "3")
        self.assertEqual(resumed.returncode, 0, resumed.stdout + resumed.stderr)
        self.assertIn("retrying the root", resumed.stderr)
        tree = self.tree(project, card)
        self.assertEqual(len(tree["nodes"]), 3)
        self.assertTrue({node["status"] for node in tree["nodes"]} <= {"compiled-only", "passed"})
        self.assertEqual(len(tree["root_attempts"]), 1)
        self.assertIn("/nonexistent/kforge-worker", tree["root_attempts"][0]["failure_reason"])
        table = kforge("tree", project, "--card", card)
        self.assertEqual(table.returncode, 0, table.stderr)
        self.assertIn("earlier root attempt", table.stdout)

    def test_restart_keeps_the_old_tree_aside(self):
        project, card = self.softmax_project()
        self.assertEqual(kforge("optimize", project, "--iterations", "2").returncode, 0)
        with open(os.path.join(self.card_dir(project, card), "tree.json"), "rb") as f:
            old = f.read()
        self.assert_one_error_line(kforge("optimize", project, "--resume", "--restart"), "--resume", "--restart",
                                   code=2)
        restarted = kforge("optimize", project, "--restart", "--iterations", "3")
        self.assertEqual(restarted.returncode, 0, restarted.stdout + restarted.stderr)
        self.assertIn("kept as", restarted.stderr)
        kept = glob.glob(os.path.join(self.card_dir(project, card), "tree-*.json"))
        self.assertEqual(len(kept), 1, kept)
        with open(kept[0], "rb") as f:
            self.assertEqual(f.read(), old)
        self.assertEqual(len(self.tree(project, card)["nodes"]), 3)

    def test_ctrl_c_with_cards_left_exits_130_after_saving(self):
        project, cards = self.capture("basic_block.pt", "2x8x8x8", "block")
        proc = subprocess.Popen([KFORGE, "optimize", project, "--iterations", "500"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.time() + 120
            while time.time() < deadline and not glob.glob(os.path.join(project, "search", "*", "tree.json")):
                time.sleep(0.05)
            self.assertIsNone(proc.poll(), "optimize ended before it could be interrupted")
            proc.send_signal(signal.SIGINT)
            stdout, stderr = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.assertEqual(proc.returncode, 130, stdout + stderr)
        self.assertIn("interrupted", stderr)
        self.assertIn("not searched", stderr)
        trees = glob.glob(os.path.join(project, "search", "*", "tree.json"))
        self.assertGreaterEqual(len(trees), 1)
        self.assertLess(len(trees), len(cards), "every card was searched: nothing was left to interrupt")
        card = os.path.basename(os.path.dirname(trees[0]))
        self.assertGreaterEqual(len(self.tree(project, card)["nodes"]), 1)

    def test_damaged_numbers_and_implausible_rng_draws_are_one_clear_line(self):
        project, card = self.softmax_project()
        self.assertEqual(kforge("optimize", project, "--iterations", "3").returncode, 0)
        path = os.path.join(self.card_dir(project, card), "tree.json")
        with open(path) as f:
            good = json.load(f)

        with open(path, "w") as f:
            f.write(json.dumps(good).replace('"value_sum": ', '"value_sum": 1e400, "x": ', 1))
        for args in (["tree", project, "--card", card], ["optimize", project, "--resume", "--iterations", "4"]):
            result = kforge(*args)
            self.assert_one_error_line(result, "tree.json", "number overflow")
            self.assertNotIn("json.exception", result.stderr)

        # A draw count no replay could reach, in a tree without the RNG state: refused at once.
        old = dict(good, rng_draws=100000000000, version=1)
        old.pop("rng_state", None)
        with open(path, "w") as f:
            json.dump(old, f)
        started = time.time()
        result = kforge("optimize", project, "--resume", "--iterations", "4")
        self.assertLess(time.time() - started, 60)
        self.assert_one_error_line(result, "tree.json", "rng_draws", "implausible")

        # With the state saved, the count is only a record: the run resumes at once.
        with open(path, "w") as f:
            json.dump(dict(good, rng_draws=100000000000), f)
        started = time.time()
        resumed = kforge("optimize", project, "--resume", "--iterations", "4")
        self.assertEqual(resumed.returncode, 0, resumed.stderr)
        self.assertLess(time.time() - started, 60)
        self.assertEqual(len(self.tree(project, card)["nodes"]), 4)

    def test_multi_megabyte_llm_replies_leave_tree_json_small(self):
        project, card = self.softmax_project()
        with open(os.path.join(KERNELS, "softmax_correct.cu")) as f:
            kernel = f.read()
        reply = "```cuda\n" + kernel + "```\n" + "p" * (4 * 1024 * 1024) + "\n"
        port, _ = fake_openai_server(self, reply, 1000, 500)
        env = dict(os.environ, KFORGE_TEST_KEY="sk-hardening-search")
        result = subprocess.run([KFORGE, "optimize", project, "--proposer", "openai", "--base-url",
                                 "http://127.0.0.1:%d/v1" % port, "--model", "fake", "--api-key-env", "KFORGE_TEST_KEY",
                                 "--iterations", "3"], capture_output=True, text=True, timeout=300, env=env)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        tree_file = os.path.join(self.card_dir(project, card), "tree.json")
        self.assertLess(os.path.getsize(tree_file), 64 * 1024)
        blobs = os.listdir(os.path.join(self.card_dir(project, card), "blobs"))
        tree = self.tree(project, card)
        responses = {node["provenance"]["details"]["calls"][0]["response_sha256"] for node in tree["nodes"]}
        systems = {node["provenance"]["details"]["system_prompt_sha256"] for node in tree["nodes"]}
        self.assertEqual(len(responses), 1)  # the same reply three times: stored once
        self.assertEqual(len(systems), 1)
        self.assertIn(responses.pop() + ".txt", blobs)
        self.assertIn(systems.pop() + ".txt", blobs)
        for name in blobs:
            self.assertLessEqual(os.path.getsize(os.path.join(self.card_dir(project, card), "blobs", name)),
                                 1024 * 1024 + 100)

        # kforge tree --node resolves the references.
        node = kforge("tree", project, "--card", card, "--node", "n1")
        self.assertEqual(node.returncode, 0, node.stderr)
        self.assertIn("--- system prompt (", node.stdout)
        self.assertIn("--- call 1 (initial) response (%d bytes; the stored copy keeps the first 1048576) ---"
                      % len(reply.encode()), node.stdout)
        self.assertIn("[kforge: truncated: %d bytes in all" % len(reply.encode()), node.stdout)
        self.assertIn("softmax_rows", node.stdout)
        self.assert_one_error_line(kforge("tree", project, "--card", card, "--node", "n9"), "--node n9", "no such node")


if __name__ == "__main__":
    unittest.main()
