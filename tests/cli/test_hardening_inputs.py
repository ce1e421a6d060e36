"""Option and input values that used to slip through (issue 24's input validation leftovers):
each is one clear error line and a non-zero exit, and nothing already on disk is replaced."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from cli_support import KFORGE, MODELS, ErrorLineAssertions, fake_openai_server, kforge

KERNELS = os.path.join(os.environ["KFORGE_SOURCE_DIR"], "tests", "gpu", "kernels")
SOFTMAX_KERNEL = os.path.join(KERNELS, "softmax_correct.cu")


class HardeningInputsTest(ErrorLineAssertions, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.shared = tempfile.mkdtemp(prefix="kforge_inputs_")
        cls.project = os.path.join(cls.shared, "softmax")
        result = kforge("capture", os.path.join(MODELS, "softmax_only.pt"), "--inputs", "64x1000:bfloat16", "-o",
                        cls.project, "--device", "cpu", "--quiet", "--json")
        assert result.returncode == 0, result.stderr
        cls.card = json.loads(result.stdout)["cards"][0]["id"]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.shared, ignore_errors=True)

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="kforge_inputs_case_")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_sample_budget_that_overflows_bytes_is_refused(self):
        # 2^44 MB is 2^64 bytes: it used to wrap to a budget of 0 bytes without a word.
        out = os.path.join(self.tmp, "p")
        result = kforge("capture", os.path.join(MODELS, "softmax_only.pt"), "--inputs", "4x8", "-o", out,
                        "--device", "cpu", "--sample-budget-mb", "17592186044416")
        self.assert_one_error_line(result, "--sample-budget-mb", "17592186044416", code=2)
        self.assertFalse(os.path.exists(out))

    def test_sample_budget_takes_auto_and_refuses_other_words(self):
        out = os.path.join(self.tmp, "p")
        result = kforge("capture", os.path.join(MODELS, "softmax_only.pt"), "--inputs", "4x8", "-o", out,
                        "--device", "cpu", "--sample-budget-mb", "lots")
        self.assert_one_error_line(result, "--sample-budget-mb", "expected auto or a whole number", code=2)
        self.assertFalse(os.path.exists(out))
        result = kforge("capture", os.path.join(MODELS, "softmax_only.pt"), "--inputs", "4x8", "-o", out,
                        "--device", "cpu", "--sample-budget-mb", "auto")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stderr, r"kforge: note: samples: \d+ MB of an automatic budget of [0-9.]+ [MG]B "
                                        r"\(half the (free disk space of .*|available memory), [0-9.]+ [MG]B")

    def test_seconds_options_refuse_nan_inf_and_absurd_values(self):
        for flag in ("--time-limit", "--timeout"):
            for value in ("nan", "NaN", "inf", "-inf", "1e300", "0", "-1"):
                with self.subTest(flag=flag, value=value):
                    result = kforge("optimize", self.project, flag, value, "--iterations", "1")
                    self.assert_one_error_line(result, flag, value, code=2)
        for value in ("nan", "inf", "1e300"):
            with self.subTest(flag="bench --timeout", value=value):
                result = kforge("bench", self.project, "--card", self.card, "--kernel", SOFTMAX_KERNEL,
                                "--timeout", value)
                self.assert_one_error_line(result, "--timeout", value, code=2)

    def test_emit_cubin_never_replaces_an_existing_file(self):
        target = os.path.join(self.tmp, "precious.bin")
        with open(target, "wb") as f:
            f.write(b"keep me")
        result = kforge("bench", self.project, "--card", self.card, "--kernel", SOFTMAX_KERNEL,
                        "--emit-cubin", target)
        self.assert_one_error_line(result, "--emit-cubin", "precious.bin", "exists", code=2)
        with open(target, "rb") as f:
            self.assertEqual(f.read(), b"keep me")

    def test_emit_cubin_writes_a_new_file(self):
        target = os.path.join(self.tmp, "new.cubin")
        result = kforge("bench", self.project, "--card", self.card, "--kernel", SOFTMAX_KERNEL,
                        "--emit-cubin", target)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(target, "rb") as f:
            self.assertEqual(f.read(4), b"\x7fELF")

    def test_a_directory_as_inputs_says_it_is_a_directory(self):
        result = kforge("capture", os.path.join(MODELS, "softmax_only.pt"), "--inputs", self.tmp, "-o",
                        os.path.join(self.tmp, "p"), "--device", "cpu")
        self.assert_one_error_line(result, self.tmp, "is a directory")
        self.assertNotIn("no such", result.stderr)

    def test_shared_bytes_beyond_32_bits_names_the_range(self):
        plan = os.path.join(self.tmp, "plan.json")
        with open(plan, "w") as f:
            json.dump({"launches": [{"kernel": "softmax_rows", "grid": [64], "block": [256],
                                     "shared_bytes": 99999999999,
                                     "args": ["ptr:self", "ptr:out0", "i32:1000"]}]}, f)
        result = kforge("bench", self.project, "--card", self.card, "--kernel", SOFTMAX_KERNEL, "--plan", plan)
        self.assertEqual(result.returncode, 1, result.stderr)
        report = json.loads(result.stdout)
        self.assertEqual(report["status"], "invalid-plan")
        self.assertIn("shared_bytes", report["reason"])
        self.assertIn("from 0 to 4294967295", report["reason"])

    def test_a_kernel_file_that_is_not_utf8_is_named(self):
        kernel = os.path.join(self.tmp, "latin1.cu")
        with open(SOFTMAX_KERNEL, "rb") as f:
            source = f.read()
        with open(kernel, "wb") as f:
            f.write(b"// caf\xe9\n" + source)
        result = kforge("bench", self.project, "--card", self.card, "--kernel", kernel)
        self.assert_one_error_line(result, "latin1.cu", "not UTF-8", "offset 6")
        self.assertNotIn("json.exception", result.stderr)

    def test_a_config_without_model_takes_the_model_flag(self):
        project = os.path.join(self.tmp, "softmax")
        shutil.copytree(self.project, project)
        with open(SOFTMAX_KERNEL) as f:
            port, requests = fake_openai_server(self, "```cuda\n" + f.read() + "```\n")
        config = os.path.join(self.tmp, "llm.json")
        with open(config, "w") as f:
            json.dump({"provider": "openai", "base_url": "http://127.0.0.1:%d/v1" % port,
                       "api_key_env": "KFORGE_TEST_KEY"}, f)
        env = dict(os.environ, KFORGE_TEST_KEY="sk-test-inputs")
        result = subprocess.run([KFORGE, "optimize", project, "--proposer", "openai", "--llm-config", config,
                                 "--model", "from-the-flag", "--iterations", "1"],
                                capture_output=True, text=True, timeout=300, env=env)
        self.assertNotIn("model is empty", result.stderr)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([r["body"]["model"] for r in requests], ["from-the-flag"])


if __name__ == "__main__":
    unittest.main()
