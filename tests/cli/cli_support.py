"""Shared by the CLI tests: run the kforge binary, and the "one clear error line" assertion."""
import os
import subprocess

KFORGE = os.environ["KFORGE_BIN"]
MODELS = os.environ["KFORGE_TEST_MODELS_DIR"]


def kforge(*args, env=None):
    return subprocess.run([KFORGE, *args], capture_output=True, text=True, timeout=300, env=env)


class ErrorLineAssertions:
    """Mixin for unittest.TestCase."""

    def assert_one_error_line(self, result, *needles, code=1):
        self.assertEqual(result.returncode, code, result.stderr)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, f"expected one line, got: {result.stderr!r}")
        self.assertTrue(lines[0].startswith("kforge: error: "), lines[0])
        for needle in needles:
            self.assertIn(needle, lines[0])
        self.assertNotIn("Traceback", result.stderr)
        self.assertEqual(result.stdout, "")
