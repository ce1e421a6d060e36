"""bench/processes.py: a command killed at its deadline takes with it what it started, even a child in
a process group of its own (as kforge's workers are). Plain Python, Linux."""
import os
import sys
import tempfile
import time
import unittest

SOURCE = os.environ.get("KFORGE_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(SOURCE, "bench"))
import processes  # noqa: E402

# Starts a grandchild in a session (and process group) of its own, writes its pid, then waits.
PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
open(sys.argv[1], "w").write(str(child.pid))
print("started", flush=True)
time.sleep(120)
"""


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


class RunTest(unittest.TestCase):
    def test_finishes_within_the_limit(self):
        result = processes.run([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr)"], 30)
        self.assertEqual((result.returncode, result.stdout, result.stderr), (0, "out\n", "err\n"))

    def test_deadline_kills_the_command_and_its_own_group_children(self):
        with tempfile.TemporaryDirectory() as tmp:
            pid_file = os.path.join(tmp, "grandchild.pid")
            started = time.monotonic()
            result = processes.run([sys.executable, "-c", PARENT, pid_file], 3)
            self.assertLess(time.monotonic() - started, 30)
            self.assertEqual(result.returncode, 124)
            self.assertIn("timed out after 3 s", result.stderr)
            grandchild = int(open(pid_file).read())
            # Reparented to init once its parent died, it is reaped there; give it a moment.
            for _ in range(50):
                if not alive(grandchild):
                    break
                time.sleep(0.1)
            self.assertFalse(alive(grandchild), f"grandchild {grandchild} outlived the deadline")


if __name__ == "__main__":
    unittest.main()
