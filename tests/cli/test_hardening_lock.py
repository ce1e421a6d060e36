"""One writer per project, nothing left behind: the writer lock of kforge optimize, and the stale
staging folders and temporaries that a killed capture or optimize leaves (docs/project-format.md)."""
import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from cli_support import KFORGE, MODELS, ErrorLineAssertions, kforge

LOCK_FILE = ".kforge-writer.lock"


def dead_pid():
    """The pid of a process that has exited and was reaped."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def wait_for(predicate, timeout=60, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


class WriterLockTest(ErrorLineAssertions, unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="kforge_lock_")
        self.children = []

    def tearDown(self):
        for child in self.children:
            if child.poll() is None:
                child.kill()
                child.wait()
            for stream in (child.stdout, child.stderr):
                if stream:
                    stream.close()
        if os.path.isdir(self.tmp):
            for root, dirs, _ in os.walk(self.tmp):
                for d in dirs:
                    os.chmod(os.path.join(root, d), 0o755)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def project(self, name="softmax"):
        out = os.path.join(self.tmp, name)
        result = kforge("capture", os.path.join(MODELS, "softmax_only.pt"), "--inputs", "64x1000:bfloat16", "-o", out,
                        "--device", "cpu", "--quiet", "--json")
        self.assertEqual(result.returncode, 0, result.stderr)
        return out, json.loads(result.stdout)["cards"][0]["id"]

    def lock_record(self, project):
        try:
            with open(os.path.join(project, LOCK_FILE)) as f:
                return json.loads(f.read() or "null")
        except (OSError, ValueError):
            return None

    def start_long_optimize(self, project):
        """An optimize that runs until stopped, once it holds the lock and has saved a tree."""
        child = subprocess.Popen([KFORGE, "optimize", project, "--iterations", "100000", "--resume"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.children.append(child)
        wait_for(lambda: glob.glob(os.path.join(project, "search", "*", "tree.json")) or child.poll() is not None,
                 what="a saved tree")
        self.assertIsNone(child.poll(), child.stderr.read() if child.poll() is not None else "")
        return child

    def tree(self, project, card):
        result = kforge("tree", project, "--card", card, "--json")
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)

    def test_second_optimize_is_refused_naming_the_first_and_its_tree_stays_intact(self):
        project, card = self.project()
        first = self.start_long_optimize(project)
        second = kforge("optimize", project, "--iterations", "3", "--resume")
        self.assert_one_error_line(second, project + ": is being changed by another kforge (pid " + str(first.pid),
                                   "kforge optimize, since ", "wait for it or stop it")
        # Readers never fail because a writer runs.
        self.assertEqual(kforge("cards", project).returncode, 0)
        self.assertEqual(kforge("tree", project, "--card", card).returncode, 0)
        # The first one finishes as if alone: every node it reported is in its tree.
        first.send_signal(signal.SIGINT)
        out, err = first.communicate(timeout=120)
        nodes = len(self.tree(project, card)["nodes"])
        self.assertRegex(out, card[:8] + r".* nodes +%d " % nodes)
        self.assertEqual(self.lock_record(project), None)  # released: the record is cleared

    def test_optimize_after_kill_9_takes_the_lock_over_and_runs(self):
        project, card = self.project()
        first = self.start_long_optimize(project)
        self.assertEqual((self.lock_record(project) or {}).get("pid"), first.pid, "the lock names the optimize")
        first.kill()
        first.wait()
        self.assertEqual(self.lock_record(project)["pid"], first.pid)  # the dead holder's record
        nodes = len(self.tree(project, card)["nodes"])
        result = kforge("optimize", project, "--iterations", str(nodes + 2), "--resume")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(len(self.tree(project, card)["nodes"]), nodes + 2)

    def test_stale_temporaries_of_a_killed_writer_are_removed_by_the_next_writer(self):
        project, card = self.project()
        self.assertEqual(kforge("optimize", project, "--iterations", "2").returncode, 0)
        pid = str(dead_pid())
        stale = [os.path.join(project, "search", card, "tree.json.tmp-" + pid),
                 os.path.join(project, "cards.json.tmp-" + pid)]
        for path in stale:
            with open(path, "w") as f:
                f.write('{"half": ')
        # Readers leave them alone.
        self.assertEqual(kforge("tree", project, "--card", card).returncode, 0)
        self.assertTrue(all(os.path.exists(path) for path in stale))
        result = kforge("optimize", project, "--iterations", "3", "--resume")
        self.assertEqual(result.returncode, 0, result.stderr)
        for path in stale:
            self.assertFalse(os.path.exists(path), path)
        self.assertEqual(len(self.tree(project, card)["nodes"]), 3)

    def test_read_only_project_is_readable_and_refuses_writers(self):
        if os.geteuid() == 0:
            self.skipTest("root writes into read-only folders")
        project, card = self.project()
        os.chmod(project, 0o555)
        self.assertEqual(kforge("cards", project).returncode, 0)
        self.assert_one_error_line(kforge("optimize", project, "--iterations", "2"),
                                   project + ": cannot be changed: the folder is not writable")

    def test_staging_of_a_killed_capture_is_removed_by_the_next_capture(self):
        # A capture whose samples take a moment to write, killed while its staging folder exists.
        model = os.path.join(MODELS, "conv_gn_block.pt")
        killed = None
        for _ in range(5):
            child = subprocess.Popen([KFORGE, "capture", model, "--inputs", "16x3x96x96", "-o",
                                      os.path.join(self.tmp, "first"), "--device", "cpu", "--quiet"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.children.append(child)
            staging = os.path.join(self.tmp, ".first.kforge-staging-%d" % child.pid)
            while child.poll() is None and not os.path.exists(staging):
                time.sleep(0.002)
            if child.poll() is None:
                child.kill()
                child.wait()
                killed = staging
                break
            shutil.rmtree(os.path.join(self.tmp, "first"), ignore_errors=True)
        self.assertIsNotNone(killed, "the capture always finished before it could be killed")
        self.assertTrue(os.path.isdir(killed))

        result = kforge("capture", os.path.join(MODELS, "softmax_only.pt"), "--inputs", "8x16", "-o",
                        os.path.join(self.tmp, "second"), "--device", "cpu", "--quiet")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse(os.path.exists(killed))
        self.assertIn("kforge: note: removed " + killed + ", left by a capture that was stopped", result.stderr)
        self.assertEqual(sorted(n for n in os.listdir(self.tmp) if "kforge-staging" in n), [])
        self.assertTrue(os.path.isfile(os.path.join(self.tmp, "second", "project.json")))


if __name__ == "__main__":
    unittest.main()
