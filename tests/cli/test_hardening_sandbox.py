"""A kernel never reads the host: `kforge bench` and `kforge optimize` with sources that try to
include host files, and an LLM reply that echoes the API key (docs/kernel-contract.md, "What a
kernel may do"; docs/llm-proposer.md, "The API key in replies")."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from cli_support import KFORGE, MODELS, fake_openai_server, kforge

KERNELS = os.path.join(os.environ["KFORGE_SOURCE_DIR"], "tests", "gpu", "kernels")
SECRET = "kforge-sandbox-cli-secret-5d2e"


class SandboxTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="kforge_sandbox_")
        # The compile cache lives under XDG_CACHE_HOME: keep it inside the test to search it.
        self.env = dict(os.environ, XDG_CACHE_HOME=os.path.join(self.tmp, "cache"), KFORGE_SANDBOX_SECRET=SECRET)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_kforge(self, *args):
        return subprocess.run([KFORGE, *args], capture_output=True, text=True, timeout=300, env=self.env)

    def softmax_project(self):
        out = os.path.join(self.tmp, "softmax")
        result = kforge("capture", os.path.join(MODELS, "softmax_only.pt"), "--inputs", "64x1000:bfloat16", "-o", out,
                        "--device", "cpu", "--quiet", "--json")
        self.assertEqual(result.returncode, 0, result.stderr)
        return out, json.loads(result.stdout)["cards"][0]["id"]

    def kernel_with(self, line):
        """softmax_correct.cu with `line` inserted after its first #include; returns (path, line number)."""
        with open(os.path.join(KERNELS, "softmax_correct.cu")) as f:
            lines = f.read().splitlines()
        index = next(i for i, text in enumerate(lines) if text.startswith("#include")) + 1
        lines.insert(index, line)
        path = os.path.join(self.tmp, "k.cu")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path, index + 1, "\n".join(lines) + "\n"

    def assert_nothing_stored_holds(self, needle, *folders):
        for folder in folders:
            for root, _, files in os.walk(folder):
                for name in files:
                    with open(os.path.join(root, name), "rb") as f:
                        self.assertNotIn(needle.encode(), f.read(), os.path.join(root, name))

    def test_bench_refuses_an_include_of_the_environment_in_one_line(self):
        project, card = self.softmax_project()
        for include in ('#include "/proc/self/environ"', "#include <../../../../../../../../proc/self/environ>",
                        '%:include "/proc/self/environ"', '#inc\\\nlude "/proc/self/environ"'):
            with self.subTest(include=include):
                path, line, _ = self.kernel_with(include)
                result = self.run_kforge("bench", project, "--card", card, "--kernel", path)
                self.assertEqual(result.returncode, 1, result.stderr)
                self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
                self.assertIn("candidate compile-error: k.cu:%d:1: refused before compiling: " % line, result.stderr)
                self.assertIn("is not an allowed header", result.stderr)
                report = json.loads(result.stdout)
                self.assertEqual(report["status"], "compile-error")
                self.assertEqual(report["compile"]["diagnostics"][0]["line"], line)
                self.assertNotIn(SECRET, result.stdout + result.stderr)
        self.assert_nothing_stored_holds(SECRET, project, os.path.join(self.tmp, "cache"))

    def test_bench_log_quotes_no_cuda_header_line(self):
        project, card = self.softmax_project()
        path, _, _ = self.kernel_with("#include <cub/cub.cuh>")  # host-only CCCL code: errors inside the headers
        result = self.run_kforge("bench", project, "--card", card, "--kernel", path)
        self.assertEqual(result.returncode, 1, result.stderr)
        report = json.loads(result.stdout)
        self.assertEqual(report["status"], "compile-error")
        self.assertIn("[line not from the candidate source]", report["compile"]["log"])
        self.assertNotIn("THRUST_RUNTIME_FUNCTION", report["compile"]["log"])

    def test_an_llm_reply_that_includes_the_environment_and_echoes_the_key(self):
        project, card = self.softmax_project()
        key = "sk-sandbox-cli-key-91b7e0"
        _, line, source = self.kernel_with('#include "/proc/self/environ"')
        port, requests = fake_openai_server(self, "Your key is " + key + ".\n```cuda\n" + source + "```\n")
        self.env["KFORGE_TEST_KEY"] = key
        result = self.run_kforge("optimize", project, "--proposer", "openai", "--base-url",
                                 "http://127.0.0.1:%d/v1" % port, "--model", "fake", "--api-key-env",
                                 "KFORGE_TEST_KEY", "--iterations", "1")
        self.assertEqual(len(requests), 1, result.stderr)
        tree = json.loads(kforge("tree", project, "--card", card, "--json").stdout)
        root = tree["nodes"][0]
        self.assertEqual(root["status"], "failed-compile", root)
        self.assertIn("refused before compiling: #include \"/proc/self/environ\" is not an allowed header",
                      root["failure_reason"])
        self.assertIn(":%d:" % line, root["failure_reason"])
        # The reply is stored (wherever the project keeps responses) with the key redacted.
        stored = []
        for folder, _, files in os.walk(project):
            for name in files:
                with open(os.path.join(folder, name), "rb") as f:
                    stored.append(f.read())
        self.assertTrue(any(b"Your key is [redacted]." in data for data in stored))
        self.assert_nothing_stored_holds(SECRET, project, os.path.join(self.tmp, "cache"))
        self.assert_nothing_stored_holds(key, project, os.path.join(self.tmp, "cache"))


if __name__ == "__main__":
    unittest.main()
