"""Running kforge from the benchmark scripts under a time limit, without leaving its workers behind.

kforge starts each kforge-worker (and compute-sanitizer with the worker under it) in a process group
of its own, so that a terminal's Ctrl-C reaches kforge, which shuts them down. Killing kforge at a
deadline therefore does not reach them: they would go on running on the GPU (a sanitized worker
for minutes) next to the next measurement. kill_tree kills kforge and every process below it.
Plain Python (Linux /proc), no torch.
"""
import os
import signal
import subprocess


def descendants(pid):
    """The pids of every living process below `pid`, read from /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ")".
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_tree(proc):
    """SIGKILL the Popen `proc` and every process below it (listed before any is killed, since the
    orphans of a killed parent move to init), then reap `proc`."""
    for pid in [proc.pid] + descendants(proc.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()


def run(cmd, timeout, env=None):
    """subprocess.run(cmd, capture_output=True, text=True) within `timeout` seconds; past it, the
    command and everything it started are killed and the result has returncode 124."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_tree(proc)
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pass  # a process that escaped the tree still holds the pipes: nothing more to read
        return subprocess.CompletedProcess(cmd, 124, "", f"timed out after {timeout:.0f} s")
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
