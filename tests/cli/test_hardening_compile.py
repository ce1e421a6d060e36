"""NVRTC runs in kforge-nvrtc under the command's timeout, and Ctrl-C stays kforge's.

`kforge bench` on a kernel NVRTC needs about a minute for: Ctrl-C ends it within seconds with
kforge's own message and exit status 130 (not NVRTC's exit code 4 with no output), --timeout ends
the compile as a compile error, and a missing compiler executable is one clear error line. No
compiler process is left behind in any case.
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
import uuid

from cli_support import KFORGE, MODELS, ErrorLineAssertions, kforge

KERNELS = os.path.join(os.environ["KFORGE_SOURCE_DIR"], "tests", "gpu", "kernels")


def slow_kernel(path, lines=400):
    """softmax_correct.cu (plan included) after a block of constant evaluations that NVRTC takes
    0.1-0.2 s per line on."""
    block = ["constexpr unsigned long long spin(unsigned long long n) {",
             "    unsigned long long s = 1;",
             "    for (unsigned long long i = 0; i < n; ++i) s = s * 6364136223846793005ull + i;",
             "    return s;",
             "}"]
    block += [f"constexpr unsigned long long v{i} = spin({400000 + i});" for i in range(lines)]
    block.append("__device__ unsigned long long kforge_slow_sink = " + " ^ ".join(f"v{i}" for i in range(lines)) + ";")
    with open(os.path.join(KERNELS, "softmax_correct.cu")) as f:
        source = f.read()
    with open(path, "w") as f:
        f.write(source + "\n" + "\n".join(block) + "\n")


def processes_with_marker(marker):
    """Pids of live processes whose environment holds KFORGE_TEST_MARKER=marker."""
    found = []
    needle = f"KFORGE_TEST_MARKER={marker}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:
            continue
    return found


def compiler_running(marker):
    for pid in processes_with_marker(marker):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == "kforge-nvrtc":
                    return True
        except OSError:
            continue
    return False


class CompileProcessTest(ErrorLineAssertions, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="kforge_compileproc_")
        cls.project = os.path.join(cls.tmp, "softmax")
        result = kforge("capture", os.path.join(MODELS, "softmax_only.pt"), "--inputs", "64x1000:bfloat16", "-o",
                        cls.project, "--device", "cpu", "--quiet", "--json")
        assert result.returncode == 0, result.stderr
        cls.card = json.loads(result.stdout)["cards"][0]["id"]
        cls.slow = os.path.join(cls.tmp, "slow.cu")
        slow_kernel(cls.slow)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def environment(self, **extra):
        self.marker = uuid.uuid4().hex
        env = dict(os.environ, KFORGE_TEST_MARKER=self.marker)
        env.pop("KFORGE_NVRTC", None)
        env.update(extra)
        return env

    def bench_args(self, *more):
        # --no-cache: an earlier run must not make this one a cache hit.
        return [KFORGE, "bench", self.project, "--card", self.card, "--kernel", self.slow, "--no-cache", *more]

    def assert_no_compiler_left(self):
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and processes_with_marker(self.marker):
            time.sleep(0.05)
        self.assertEqual(processes_with_marker(self.marker), [], "a kforge process is still running")

    def test_ctrl_c_during_a_long_compile_is_kforges_stop(self):
        env = self.environment()
        process = subprocess.Popen(self.bench_args(), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        try:
            # Ctrl-C while NVRTC works: once its process runs (else after 10 s, well inside the compile).
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not compiler_running(self.marker):
                time.sleep(0.05)
            time.sleep(0.5)
            process.send_signal(signal.SIGINT)
            sent = time.monotonic()
            stdout, stderr = process.communicate(timeout=30)
            took = time.monotonic() - sent
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
        self.assertNotEqual(process.returncode, 4, "NVRTC's SIGINT handler ended kforge")
        self.assertEqual(process.returncode, 130, stderr)
        self.assertEqual(stdout, "")
        lines = stderr.splitlines()
        self.assertEqual(len(lines), 1, stderr)
        self.assertTrue(lines[0].startswith("kforge: error: bench: interrupted: stopped during the compile"), lines[0])
        self.assertLess(took, 5)
        self.assert_no_compiler_left()

    def test_timeout_ends_the_compile_as_a_compile_error(self):
        env = self.environment()
        start = time.monotonic()
        result = subprocess.run(self.bench_args("--timeout", "1.5"), env=env, capture_output=True, text=True,
                                timeout=120)
        took = time.monotonic() - start
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertEqual(result.stderr.splitlines(),
                         ["kforge: error: candidate compile-error: NVRTC did not finish within 1.5 s "
                          "(the compile was stopped)"])
        report = json.loads(result.stdout)
        self.assertEqual(report["status"], "compile-error")
        self.assertFalse(report["compile"]["ok"])
        self.assertIn("NVRTC did not finish within 1.5 s", report["compile"]["log"])
        self.assertLess(took, 20)
        self.assert_no_compiler_left()

    def test_missing_compiler_is_one_clear_error(self):
        env = self.environment(KFORGE_NVRTC=os.path.join(self.tmp, "no-such-kforge-nvrtc"))
        result = subprocess.run([KFORGE, "bench", self.project, "--card", self.card, "--kernel",
                                 os.path.join(KERNELS, "softmax_correct.cu"), "--no-cache"],
                                env=env, capture_output=True, text=True, timeout=120)
        self.assert_one_error_line(result, "no-such-kforge-nvrtc: cannot start the NVRTC compiler: no such file",
                                   "KFORGE_NVRTC")


if __name__ == "__main__":
    unittest.main()
