"""The kforge command line as a user meets it: outputs, exit codes and one-line errors."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from cli_support import KFORGE, MODELS, ErrorLineAssertions, fake_openai_server, kforge

KERNELS = os.path.join(os.environ["KFORGE_SOURCE_DIR"], "tests", "gpu", "kernels")


class CliTest(ErrorLineAssertions, unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="kforge_cli_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def model(self, name):
        return os.path.join(MODELS, name)

    def test_capture_prints_cards_table_and_cards_reads_it_back(self):
        out = os.path.join(self.tmp, "p")
        result = kforge("capture", self.model("conv_gn_block.pt"), "--inputs", "2x3x16x16", "-o", out, "--device", "cpu")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("aten::group_norm", result.stdout)
        self.assertIn("5 cards", result.stdout)  # 4 op cards and the region group_norm -> relu
        self.assertIn("region: group_norm -> relu", result.stdout)
        self.assertIn("captured on CPU", result.stderr)
        cards = kforge("cards", out)
        self.assertEqual(cards.returncode, 0, cards.stderr)
        self.assertEqual(cards.stdout, result.stdout)

    def test_ctrl_c_cancels_a_capture_with_status_130_and_writes_nothing(self):
        out = os.path.join(self.tmp, "cancelled")
        proc = subprocess.Popen([KFORGE, "capture", self.model("conv_gn_block.pt"), "--inputs", "64x3x256x256",
                                 "-o", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # The staging folder exists while the capture runs: interrupt it then, not before or after.
        staging = os.path.join(self.tmp, ".cancelled.kforge-staging-%d" % proc.pid)
        deadline = time.time() + 60
        while not os.path.isdir(staging) and proc.poll() is None and time.time() < deadline:
            time.sleep(0.01)
        self.assertTrue(os.path.isdir(staging), "the capture ended before it could be interrupted")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 130, err)
        self.assertIn("cancelled", err)
        self.assertNotIn("Traceback", err)
        self.assertFalse(os.path.exists(out))
        self.assertFalse(os.path.exists(staging))

    def test_cards_json_is_sorted_by_share(self):
        out = os.path.join(self.tmp, "p")
        self.assertEqual(kforge("capture", self.model("basic_block.pt"), "--inputs", "2x8x8x8", "-o", out,
                                "--quiet").returncode, 0)
        result = kforge("cards", out, "--json")
        self.assertEqual(result.returncode, 0, result.stderr)
        data = json.loads(result.stdout)
        shares = [c["time_share"] for c in data["cards"]]
        self.assertEqual(shares, sorted(shares, reverse=True))
        self.assertEqual(sorted(c["op"] for c in data["cards"] if c["region"] is None),
                         ["aten::_convolution", "aten::add", "aten::batch_norm", "aten::relu"])
        self.assertEqual(data["capture"]["total_calls"], 7)

    def test_cards_lists_fused_region_cards_with_a_sample_and_eager_time(self):
        out = os.path.join(self.tmp, "p")
        self.assertEqual(kforge("capture", self.model("bn_relu_add_stack.pt"), "--inputs", "2x8x8x8", "-o", out,
                                "--device", "cpu", "--quiet").returncode, 0)
        self.assertTrue(os.path.isfile(os.path.join(out, "graph.json")))
        result = kforge("cards", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        region_lines = [line for line in lines if "region: " in line]
        self.assertEqual(len(region_lines), 1, result.stdout)
        self.assertRegex(region_lines[0], r"^[0-9a-f]{8}  region: batch_norm -> relu_ -\.\.\.  float32")
        self.assertIn("1 fused-region card (", result.stdout)
        self.assertIn("device cpu (CPU: latencies are CPU wall-clock times, indicative only", result.stdout)
        # The chain is cut in the op column, so it follows whole on the next line.
        self.assertEqual(lines[lines.index(region_lines[0]) + 1], "          chain: batch_norm -> relu_ -> add")
        data = json.loads(kforge("cards", out, "--json").stdout)
        regions = [c for c in data["cards"] if c["region"] is not None]
        self.assertEqual(len(regions), 1)
        region = regions[0]
        self.assertEqual(region["op"], "kforge::region")
        self.assertEqual(region["region"]["chain"], "batch_norm -> relu_ -> add")
        self.assertEqual(len(region["region"]["occurrences"]), 2)
        self.assertEqual(region["call_count"], 2)
        self.assertEqual(len(region["samples"]), 1)
        self.assertTrue(os.path.isfile(os.path.join(out, region["samples"][0]["file"])))
        self.assertGreater(region["eager"]["median_us"], 0)
        card_ids = {c["id"] for c in data["cards"]}
        self.assertTrue(all(m["card_id"] in card_ids for m in region["region"]["members"]))
        # Without graph.json the region cards stay (they are cards); a project with neither says so.
        os.remove(os.path.join(out, "graph.json"))
        result = kforge("cards", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("1 fused-region card (", result.stdout)

    def test_capture_json_has_phase_times(self):
        out = os.path.join(self.tmp, "p")
        result = kforge("capture", self.model("conv_gn_block.pt"), "--inputs", "2x3x16x16", "-o", out, "--json",
                        "--quiet")
        self.assertEqual(result.returncode, 0, result.stderr)
        data = json.loads(result.stdout)
        self.assertGreater(data["phase_ms"]["record_pass"], 0)
        self.assertEqual(len(data["cards"]), 5)
        self.assertEqual(sum(1 for c in data["cards"] if c["region"] is not None), 1)
        self.assertGreaterEqual(data["phase_ms"]["regions"], 0)

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
        loaded, list_values = 0, 0
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
                        list_values += isinstance(value, list)
                loaded += 1
        # The block's computing ops that are not vendor-backed (layer_norm, mul, softmax, add,
        # gelu...); its views (transpose, unflatten, chunk) keep no sample. layer_norm's
        # normalized_shape is a list argument, which load_sample unpickles through its allow-list.
        self.assertGreaterEqual(loaded, 8)
        self.assertGreater(list_values, 0)

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
        self.assert_one_error_line(kforge("tree", project, "--card", card),
                                   "no search tree for card " + card + " yet (kforge optimize PROJECT_DIR --cards ")
        # A vendor-backed card gets no tree from a default search: the line says so.
        out = os.path.join(self.tmp, "block")
        self.assertEqual(kforge("capture", self.model("transformer_block.pt"), "--inputs", "2x8x32", "-o", out,
                                "--device", "cpu", "--quiet").returncode, 0)
        vendor = next(c for c in json.loads(kforge("cards", out, "--json").stdout)["cards"] if c["vendor_backed"])
        self.assert_one_error_line(kforge("tree", out, "--card", vendor["id"]),
                                   "vendor-backed (cuBLAS/cuDNN), which a search leaves out unless it names the card")
        self.assert_one_error_line(kforge("tree", project), "--card", code=2)

    def test_optimize_builds_a_resumable_tree(self):
        project, card = self.softmax_project()
        first = kforge("optimize", project, "--iterations", "4", "--seed", "3")
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertIn(card[:8], first.stdout)
        # The closing summary: one card, compiled only without a GPU (nothing timed, so no speedup).
        self.assertRegex(first.stdout, r"\nsummary: 1 card searched in [0-9.]+ s: 0 faster than eager, 0 not faster, "
                                       r"1 without a measured node, 0 failed\n")
        self.assertIn("1 compiled only: no GPU was visible to the worker", first.stdout)
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

    def test_tree_saves_a_node_kernel_that_bench_runs(self):
        project, card = self.softmax_project()
        self.assertEqual(kforge("optimize", project, "--iterations", "2", "--seed", "1").returncode, 0)
        kernel = os.path.join(self.tmp, "my_kernel.cu")
        saved = kforge("tree", project, "--card", card, "--node", "n1", "--save-kernel", kernel)
        self.assertEqual(saved.returncode, 0, saved.stderr)
        self.assertIn("wrote " + kernel, saved.stdout)
        tree = json.loads(kforge("tree", project, "--card", card, "--json").stdout)
        node = next(n for n in tree["nodes"] if n["id"] == "n1")
        with open(kernel) as f:
            text = f.read()
        # The plan ahead of the node's own source, as kforge bench reads it.
        self.assertTrue(text.startswith("/*kforge-plan\n"), text[:80])
        plan = json.loads(text[len("/*kforge-plan"):text.index("*/")])
        self.assertEqual(plan, node["candidate"]["launch_plan"])
        self.assertTrue(text.endswith(node["candidate"]["source"]))
        bench = kforge("bench", project, "--card", card, "--kernel", kernel)
        self.assertEqual(bench.returncode, 0, bench.stderr)
        self.assertEqual(json.loads(bench.stdout)["status"], "compiled-only")
        # An existing file is never overwritten; --save-kernel needs a node.
        self.assert_one_error_line(kforge("tree", project, "--card", card, "--node", "n0", "--save-kernel", kernel),
                                   "exists", "not overwritten")
        with open(kernel) as f:
            self.assertEqual(f.read(), text)
        self.assert_one_error_line(kforge("tree", project, "--card", card, "--save-kernel", kernel), "--node",
                                   code=2)

    def test_optimize_stops_when_the_search_space_is_exhausted(self):
        # softmax over rows of 7 float32s: the built-in transformations reach about 70 parameter
        # sets; the search makes each once, then stops, instead of filling the rest of the 200
        # iterations with "no untried transformation" failures.
        out = os.path.join(self.tmp, "small")
        capture = kforge("capture", self.model("softmax_only.pt"), "--inputs", "64x7", "-o", out, "--device", "cpu",
                         "--quiet", "--json")
        self.assertEqual(capture.returncode, 0, capture.stderr)
        card = json.loads(capture.stdout)["cards"][0]["id"]
        result = kforge("optimize", out, "--iterations", "200", "--seed", "3")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stdout, card[:8] + r".*nodes +\d+ +nothing-to-revise")
        self.assertIn("stopped: the search space is exhausted", result.stdout)
        tree = json.loads(kforge("tree", out, "--card", card, "--json").stdout)
        nodes = tree["nodes"]
        self.assertLess(len(nodes), 200)
        self.assertGreater(len(nodes), 10)
        self.assertEqual({node["status"] for node in nodes}, {"compiled-only"})
        params = [json.dumps(node["provenance"]["details"]["params"], sort_keys=True) for node in nodes]
        self.assertEqual(len(set(params)), len(params))

    def test_optimize_with_two_workers_runs_candidates_in_parallel(self):
        # Two visible "GPUs" (names only: the workers find no device here and compile only); the
        # search keeps one candidate in flight per worker and reports each worker's share.
        project, card = self.softmax_project()
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="0,1")
        result = kforge("optimize", project, "--iterations", "7", "--gpus", "0,1", env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stdout, r"workers: GPU 0 \d+ GPU 1 \d+ candidates; 7 in [0-9.]+ s")
        tree = json.loads(kforge("tree", project, "--card", card, "--json").stdout)
        self.assertEqual(len(tree["nodes"]), 7)
        sources = [node["candidate"]["source"] for node in tree["nodes"]]
        self.assertEqual(len(set(sources)), 7, "a candidate was proposed twice")
        self.assertTrue({node["status"] for node in tree["nodes"]} <= {"compiled-only", "passed"})

    def test_optimize_bad_gpus(self):
        project, _ = self.softmax_project()
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="0")
        self.assert_one_error_line(kforge("optimize", project, "--gpus", "zero", env=env), "--gpus", "zero", code=2)
        self.assert_one_error_line(kforge("optimize", project, "--gpus", "0,3", env=env), "GPU 3 is not visible",
                                   code=2)

    def test_optimize_bad_inputs(self):
        project, _ = self.softmax_project()
        self.assert_one_error_line(kforge("optimize", project, "--proposer", "magic"), "magic", code=2)
        self.assert_one_error_line(kforge("optimize", project, "--iterations", "0"), "--iterations", code=2)
        self.assert_one_error_line(kforge("optimize", project, "--cards", "zzzz"), "zzzz", code=2)
        self.assert_one_error_line(kforge("optimize", os.path.join(self.tmp, "none")), "none")

    def test_optimize_with_an_openai_compatible_server(self):
        project, card = self.softmax_project()
        with open(os.path.join(KERNELS, "softmax_correct.cu")) as f:
            kernel = f.read()
        port, requests = fake_openai_server(self, "One block per row.\n```cuda\n" + kernel + "```\n", 1200, 800)
        key = "sk-cli-test-secret-77c1"
        env = dict(os.environ, KFORGE_TEST_KEY=key)
        result = subprocess.run([KFORGE, "optimize", project, "--proposer", "openai", "--base-url",
                                 "http://127.0.0.1:%d/v1" % port, "--model", "fake", "--api-key-env", "KFORGE_TEST_KEY",
                                 "--iterations", "2"], capture_output=True, text=True, timeout=300, env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(card[:8], result.stdout)
        self.assertIn("llm 2 calls, 2400 in + 1600 out tokens", result.stdout)
        self.assertEqual(len(requests), 2)
        self.assertTrue(all(r["path"] == "/v1/chat/completions" for r in requests))
        self.assertEqual(requests[0]["auth"], "Bearer " + key)
        self.assertEqual(requests[0]["body"]["model"], "fake")
        self.assertIn("bfloat16 sizes [64, 1000]", requests[0]["body"]["messages"][1]["content"])
        # The revision prompt shows the root's source as the parent.
        self.assertIn("softmax_rows", requests[1]["body"]["messages"][1]["content"])
        tree = json.loads(kforge("tree", project, "--card", card, "--json").stdout)
        self.assertEqual(len(tree["nodes"]), 2)
        for node in tree["nodes"]:
            self.assertIn(node["status"], {"compiled-only", "passed"}, node.get("failure_reason"))
            self.assertEqual(node["provenance"]["kind"], "llm")
            self.assertEqual(node["provenance"]["provider"], "openai")
            self.assertEqual(node["provenance"]["model"], "fake")
            self.assertEqual(node["provenance"]["details"]["turns"], 1)
        for root, _, files in os.walk(project):
            for name in files:
                with open(os.path.join(root, name), "rb") as f:
                    self.assertNotIn(key.encode(), f.read(), name)

    def test_optimize_llm_bad_inputs(self):
        project, _ = self.softmax_project()
        self.assert_one_error_line(kforge("optimize", project, "--model", "m"), "--model", "--proposer openai", code=2)
        self.assert_one_error_line(kforge("optimize", project, "--proposer", "openai"), "--model", code=2)
        config = os.path.join(self.tmp, "llm.json")
        with open(config, "w") as f:
            json.dump({"provider": "anthropic", "model": "claude"}, f)
        self.assert_one_error_line(kforge("optimize", project, "--proposer", "openai", "--llm-config", config),
                                   "llm.json", "anthropic", code=2)
        self.assert_one_error_line(kforge("optimize", project, "--proposer", "openai", "--model", "m",
                                          "--api-key-env", "sk-abc123-def"), "api_key_env", code=2)

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
