#!/usr/bin/env python3
"""Issue 7: Kernel Forge on real models, against eager PyTorch and torch.compile, on a GPU.

For each model of bench/models (random weights, no downloads), four stages:
  capture   TorchScript + inputs (tools/kforge_export.py), `kforge capture --samples 1`
  optimize  `kforge optimize --proposer builtin --iterations N --time-limit S --seed 1 --resume`
            over every card kforge chooses (vendor-backed and uncovered cards are skipped by kforge)
  export    `kforge export PROJECT -o model.cast --json`
  measure   every searched card (bench/card_bench.py): eager, best kernel and torch.compile by
            triton.testing.do_bench next to the evaluator's numbers; end to end: the eager module,
            the same module with the .cast loaded through libkforge_runtime and torch.compile
            (all do_bench, and each also by GPU time with the host's launch overhead hidden:
            card_bench.model_device_time_ms), and `kforge run model.cast --json`.

Resumable: what a stage produced stays in OUT/MODEL/ (see bench/suite_results.py) and is not
redone; a failure is recorded and not retried without --retry. An invocation starts no work it
cannot finish within --budget seconds (default 540, so that a long suite proceeds in steps that can
be interrupted; bench/gpu_session.sh passes a week), stops at that deadline and exits 3: run the
same command again to continue (a kforge command cut off there is killed with every worker it
started, bench/processes.py, so none keeps the GPU busy during the next measurement). OUT must
survive between invocations (bench/gpu_session.sh uses build/suite); --publish DIR copies each
model's result.json to DIR/MODEL.json (one small file per model: what bench/results/ keeps of a
run). bench/report.py turns those into markdown.

With --baselines-from DIR, a baselines pass instead: capture, then eager and torch.compile alone,
per card for the cards of DIR/MODEL.json (an earlier run's published result; per call and GPU time)
and end to end unless that run has it, into OUT/MODEL/baselines/. bench/report.py given that run and this pass fills the run's missing
torch.compile numbers from it, each against the eager time of its own pass (bench/report_baselines.py):
torch.compile's first calls take minutes per model, so a run may leave them out (--no-compile) and
take them from such a pass.

Usage: suite.py --kforge build/cli/kforge --out build/suite [--models resnet50_fp32,...]
                [--stage all|capture|optimize|export|measure] [--iterations 50]
                [--time-limit-per-card 30] [--budget 540] [--no-compile | --no-card-compile]
                [--publish DIR] [--retry] [--baselines-from DIR ...]
Exit: 0 every requested stage done; 1 done, but a stage or measurement failed (recorded in the
results); 3 the budget ran out first (rerun to continue); 2 bad arguments or no GPU.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import models  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
from card_bench import (COMPILE_MODE, copy_bandwidth_gbps, do_bench_us, flatten, measure_card,  # noqa: E402
                        model_device_time_into, one_line, run)
from kforge_export import export_for_kforge  # noqa: E402
from processes import kill_tree  # noqa: E402
from suite_results import assemble, assemble_baselines, load_cards, read_json, searched_ids, write_json  # noqa: E402

STAGES = ("capture", "optimize", "export", "measure")
BASELINES = "baselines"  # OUT/MODEL/ folder of --baselines-from
CAST_PIECES = ("cast_runtime", "cast_backend", "kforge_run")  # end-to-end measurements that need the .cast
SEED = 1
CAST_ROUNDS = 9  # eager / .cast alternations of the in-process end-to-end measurement
DEVICE_METHOD = ("GPU time of one forward with the host's launch overhead hidden (bench/card_bench.py "
                 "model_device_time_ms: L2 flushed, the call enqueued behind a GPU sleep three times its "
                 "host time, median of 20); host_ms: the median time the host took to enqueue one forward "
                 "with the GPU idle (a forward whose host_ms reaches its GPU time is host-bound)")


class OutOfBudget(BaseException):
    """The invocation's budget is spent. A BaseException, like KeyboardInterrupt, so that no
    `except Exception` (here, in torch or in inductor's autotuner) swallows it."""


class Budget:
    """The invocation's deadline. `need` refuses to start work that would not fit; the alarm
    raises OutOfBudget at the deadline itself, inside whatever runs (a compile, a do_bench)."""

    def __init__(self, seconds):
        self.deadline = time.monotonic() + seconds

    def left(self):
        return self.deadline - time.monotonic()

    def need(self, seconds, what):
        if self.left() < seconds:
            raise OutOfBudget(f"{what} needs about {seconds:.0f} s, {max(0.0, self.left()):.0f} s left")

    def arm(self):
        def ring(signum, frame):
            raise OutOfBudget("the deadline passed during a measurement")
        signal.signal(signal.SIGALRM, ring)
        signal.setitimer(signal.ITIMER_REAL, max(1.0, self.left()))

    def disarm(self):
        signal.setitimer(signal.ITIMER_REAL, 0)


def shell_line(cmd):
    """The command as one copy-pastable line, paths under the repository relative to it."""
    words = []
    for word in cmd:
        word = str(word)
        if os.path.isabs(word) and word.startswith(ROOT + os.sep):
            word = os.path.relpath(word, ROOT)
        words.append(shlex.quote(word))
    return " ".join(words)


def say(text):
    print(f"suite: {text}", file=sys.stderr, flush=True)


def environment(kforge):
    env = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(0),
        "capability": "sm_%d%d" % torch.cuda.get_device_capability(0),
        "torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
        "triton": triton.__version__, "python": platform.python_version(), "cpus": os.cpu_count(),
    }
    for module in ("torchvision", "transformers"):
        try:
            env[module] = __import__(module).__version__
        except ImportError:
            env[module] = None

    def output(cmd):
        try:
            result = subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=ROOT)
            return result.stdout.strip() if result.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired):
            return None
    env["driver"] = output(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    env["kforge"] = output([kforge, "--version"])
    env["commit"] = output(["git", "log", "-1", "--format=%H %s"])
    status = output(["git", "status", "--porcelain", "--untracked-files=no"])
    env["uncommitted_changes"] = None if status is None else bool(status)
    return env


# `kforge optimize` prints one line per card:
#   "9996df1b  aten::softmax.int   nodes  50  iteration-limit  best n12 18.00 us, 1.650x eager (iteration 20)  3.1 s"
# and on stderr "kforge: skip ID8 OP: reason" for every card it does not search.
_CARD_LINE = re.compile(r"^([0-9a-f]{8})\s+(.+?)\s+nodes\s+(\d+)\s+(\S+)\s+best\s.*?\s([0-9.]+) s\b")
_SKIP_LINE = re.compile(r"^kforge: skip ([0-9a-f]{8}) (region: .+?|\S+): (.*)$")
_ERROR_LINE = re.compile(r"^kforge: error: ([0-9a-f]{8}) (\S+): (.*)$")
_NOTHING_TO_SEARCH = "no card the built-in proposer can search"


def parse_optimize(stdout, stderr):
    cards, skipped, errors = [], [], []
    for line in stdout.splitlines():
        m = _CARD_LINE.match(line)
        if m:
            cards.append({"id8": m[1], "op": m[2], "nodes": int(m[3]), "stop": m[4], "seconds": float(m[5])})
    for line in stderr.splitlines():
        if m := _SKIP_LINE.match(line):
            skipped.append({"id8": m[1], "op": m[2], "reason": m[3]})
        elif m := _ERROR_LINE.match(line):
            errors.append({"id8": m[1], "op": m[2], "error": m[3]})
    return cards, skipped, errors


class ModelRun:
    """One model's stages in OUT/MODEL/. The module itself is built only when a stage needs it."""

    def __init__(self, name, args, budget, env):
        self.name, self.args, self.budget, self.env = name, args, budget, env
        self.description = models.MODELS[name].description
        self.dir = os.path.join(args.out, name)
        self.project = self.path("project")
        self.model_pt, self.inputs_pt, self.cast = self.path("model.pt"), self.path("inputs.pt"), self.path("model.cast")
        self._built = None
        self.failed = False
        os.makedirs(self.dir, exist_ok=True)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def built(self):
        if self._built is None:
            self._built = models.build(self.name, "cuda")
        return self._built

    def release(self):
        self._built = None
        torch.cuda.empty_cache()

    def pending(self, record):
        """Whether a stage or piece with this stored record still has to run."""
        if record is None:
            return True
        if record.get("error"):
            self.failed = True
            return self.args.retry
        return False

    def run_kforge(self, cmd, what, reserve=10):
        self.budget.need(reserve + 5, what)
        return run(cmd, self.budget.left() - reserve, self.env)

    # --- capture ---------------------------------------------------------------------------
    def capture(self):
        record_path = self.path("capture.json")
        if not self.pending(read_json(record_path)):
            return
        self.budget.need(60, f"{self.name} capture")
        say(f"{self.name}: export to TorchScript and capture")
        record = {}
        try:
            if not (os.path.exists(self.model_pt) and os.path.exists(self.inputs_pt)):
                record["model_export"] = self.export_torchscript()
            for stale in os.listdir(self.dir):  # a capture killed at the deadline leaves its staging folder
                if ".kforge-staging-" in stale:
                    shutil.rmtree(self.path(stale), ignore_errors=True)
            cmd = [self.args.kforge, "capture", self.model_pt, "--inputs", self.inputs_pt, "-o", self.project,
                   "--samples", "1", "--sample-budget-mb", str(self.args.sample_budget_mb), "--json", "--quiet"]
            record["command"] = shell_line(cmd)
            if os.path.exists(os.path.join(self.project, "project.json")):
                # Captured, but the invocation ended before the record was written: keep the project.
                captured = {"cards": read_json(os.path.join(self.project, "cards.json"))["cards"],
                            "capture": read_json(os.path.join(self.project, "project.json")).get("capture")}
            else:
                started = time.monotonic()
                result = self.run_kforge(cmd, f"{self.name} capture")
                record["wall_s"] = time.monotonic() - started
                if result.returncode == 124:
                    raise OutOfBudget(f"{self.name}: kforge capture did not finish within the budget")
                if result.returncode != 0:
                    raise RuntimeError(f"kforge capture failed (exit {result.returncode}): {result.stderr.strip()}")
                captured = json.loads(result.stdout)
            cards = captured["cards"]
            record.update({"cards": len(cards), "vendor_backed": sum(1 for c in cards if c.get("vendor_backed")),
                           "capture": captured.get("capture"), "phase_ms": captured.get("phase_ms")})
        except OutOfBudget:
            raise
        except Exception as e:  # noqa: BLE001 - recorded, later stages of this model are skipped
            record["error"] = one_line(f"{type(e).__name__}: {e}")
            self.failed = True
            say(f"{self.name}: capture failed: {record['error']}")
        write_json(record_path, record)

    def export_torchscript(self):
        started = time.monotonic()
        module, inputs = self.built()
        tmp_model, tmp_inputs = self.model_pt + ".tmp", self.inputs_pt + ".tmp"
        export_for_kforge(module, inputs, tmp_model, tmp_inputs, atol=1e-2, rtol=1e-2)
        os.replace(tmp_inputs, self.inputs_pt)
        os.replace(tmp_model, self.model_pt)
        torch.cuda.empty_cache()
        return {"seconds": time.monotonic() - started, "parameter_bytes": models.parameter_bytes(module),
                "file_bytes": os.path.getsize(self.model_pt),
                "inputs": [{"dtype": str(t.dtype).replace("torch.", ""), "sizes": list(t.shape),
                            "strides": list(t.stride())} for t in inputs]}

    def captured(self):
        record = read_json(self.path("capture.json"))
        return record is not None and not record.get("error")

    # --- optimize --------------------------------------------------------------------------
    def optimize(self):
        state_path = self.path("optimize.json")
        state = read_json(state_path) or {"runs": [], "done": False}
        if state["done"] and not (state.get("error") and self.args.retry):
            self.failed |= bool(state.get("error"))
            return
        if not self.captured():
            say(f"{self.name}: optimize waits for a successful capture")
            return
        self.budget.need(45, f"{self.name} optimize")
        cmd = [self.args.kforge, "optimize", self.project, "--proposer", "builtin", "--iterations",
               str(self.args.iterations), "--time-limit", str(self.args.time_limit_per_card), "--seed", str(SEED),
               "--resume"]
        remaining = self.unfinished_cards(state["runs"])
        if remaining == []:
            state["done"] = True
            write_json(state_path, state)
            return
        if remaining:
            cmd += ["--cards"] + remaining
        say(f"{self.name}: {shell_line(cmd)}")
        started = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env)
        interrupted = False
        try:
            try:
                stdout, stderr = proc.communicate(timeout=max(1.0, self.budget.left() - 40))
            except subprocess.TimeoutExpired:
                # SIGINT: kforge stops after the candidate in flight and saves the tree; --resume
                # continues it next time.
                interrupted = True
                proc.send_signal(signal.SIGINT)
                try:
                    stdout, stderr = proc.communicate(timeout=30)
                except subprocess.TimeoutExpired:
                    kill_tree(proc)
                    stdout, stderr = proc.communicate()
        finally:
            if proc.poll() is None:
                kill_tree(proc)
        cards, skipped, errors = parse_optimize(stdout, stderr)
        record = {"command": shell_line(cmd), "wall_s": time.monotonic() - started, "exit": proc.returncode,
                  "interrupted": interrupted, "cards": cards, "skipped": skipped, "errors": errors}
        state["runs"].append(record)
        state["done"] = not interrupted
        lines = [line for line in stderr.splitlines() if not _SKIP_LINE.match(line)]
        if not interrupted and proc.returncode != 0 and lines and _NOTHING_TO_SEARCH in lines[-1]:
            # A result, not a failure: the export holds only fallbacks, end to end is still measured.
            state["note"] = lines[-1]
        elif not interrupted and proc.returncode != 0:
            state["error"] = (lines[-1] if lines else f"exit {proc.returncode}")
            self.failed = True
        else:
            state.pop("error", None)
        write_json(state_path, state)
        say(f"{self.name}: optimize {len(cards)} card(s) in {record['wall_s']:.0f} s" +
            (" (interrupted at the budget)" if interrupted else "") + (f"; {len(errors)} error(s)" if errors else ""))
        if interrupted:
            raise OutOfBudget(f"{self.name}: optimize interrupted at the budget (rerun to resume it)")

    def unfinished_cards(self, runs):
        """After an interrupted optimize: the cards kforge chose that no run finished, largest share
        first (None: let kforge choose). Naming them keeps a card that stopped at its time limit
        from getting a fresh time limit on every resume; --resume continues the one cut off."""
        first = next((prior for prior in runs if prior["skipped"] or prior["cards"]), None)
        if first is None:
            return None
        skipped = {s["id8"] for s in first["skipped"]}
        finished = {c["id8"] for prior in runs for c in prior["cards"] if c["stop"] != "requested"}
        cards = sorted(load_cards(self.project), key=lambda c: -(c.get("time_share") or 0))
        return [c["id"] for c in cards if c["id"][:8] not in skipped | finished]

    def optimized(self):
        state = read_json(self.path("optimize.json"))
        if not (state and state.get("done")):  # done with a recorded error still exports what was found
            say(f"{self.name}: waits for optimize to finish")
            return False
        return True

    # --- export ----------------------------------------------------------------------------
    def export(self):
        record_path = self.path("export.json")
        if not self.pending(read_json(record_path)) or not self.optimized():
            return
        cmd = [self.args.kforge, "export", self.project, "-o", self.cast, "--sanitize", self.args.sanitize,
               "--sanitize-jobs", str(self.args.sanitize_jobs), "--json"]
        say(f"{self.name}: {shell_line(cmd)}")
        started = time.monotonic()
        result = self.run_kforge(cmd, f"{self.name} export", reserve=15)
        if result.returncode == 124:
            raise OutOfBudget(f"{self.name}: kforge export did not finish within the budget (rerun with the whole "
                              "budget; --sanitize off skips the compute-sanitizer gate)")
        record = {"command": shell_line(cmd), "wall_s": time.monotonic() - started}
        try:
            record["report"] = json.loads(result.stdout)
        except json.JSONDecodeError:
            record["error"] = one_line(f"kforge export failed (exit {result.returncode}): {result.stderr}")
            self.failed = True
        write_json(record_path, record)

    def exported(self):
        record = read_json(self.path("export.json"))
        return bool(record and record.get("report") and os.path.exists(self.cast))

    # --- measure ---------------------------------------------------------------------------
    def measure(self):
        if not self.optimized():
            return
        # End to end first: the numbers a user compares, which a call cut short by its budget
        # should have before the per-card detail (each card about 7 s, a decoder's 30 about 4 min).
        pieces = [("eager", self.e2e_eager), ("cast_runtime", self.e2e_cast_runtime),
                  ("cast_backend", self.e2e_cast_backend), ("kforge_run", self.e2e_kforge_run)]
        if not self.args.no_compile:
            pieces.append(("compile", self.e2e_compile))
        self.measure_end_to_end(pieces, "measure")
        searched = searched_ids(self.project)
        self.measure_cards([c for c in load_cards(self.project) if c["id"] in searched], "measure",
                           with_candidate=True, with_compile=not (self.args.no_compile or self.args.no_card_compile))
        torch._dynamo.reset()
        self.release()

    def measure_baselines(self):
        """--baselines-from: eager and torch.compile alone, per card for the cards of an earlier
        run's result and end to end, into OUT/MODEL/baselines/ (a full run's measure/ is untouched)."""
        if not self.captured():
            say(f"{self.name}: baselines wait for a successful capture")
            return
        # End to end first: the number a user compares with, and the longest compile (skipped when
        # the earlier run has it: the pass then adds the cards' GPU times only).
        source = self.args.baseline_sources[self.name]
        if not source["has_end_to_end_compile"]:
            self.measure_end_to_end([("eager", self.e2e_eager), ("compile", self.e2e_compile)], BASELINES)
        wanted = set(source["cards"])
        self.measure_cards([c for c in load_cards(self.project) if c["id"] in wanted], BASELINES,
                           with_candidate=False, with_compile=True)
        torch._dynamo.reset()
        self.release()

    def copy_gbps(self):
        copy_path = self.path("measure", "copy.json")
        if read_json(copy_path) is None:
            write_json(copy_path, {"gb_per_s": copy_bandwidth_gbps(), "method": "do_bench of a 1 GiB device copy, "
                                   "(read + write bytes) / median time"})
        return read_json(copy_path)["gb_per_s"]

    def measure_cards(self, cards, folder, with_candidate, with_compile):
        """card_bench.measure_card of each card, largest share first, into OUT/MODEL/FOLDER/cards/:
        eager, the best node of its search tree (with_candidate, where it has one) and torch.compile."""
        cards = sorted(cards, key=lambda c: -(c.get("time_share") or 0))
        copy_gbps = self.copy_gbps()
        workdir = self.path(folder, "work")
        os.makedirs(workdir, exist_ok=True)
        searched = searched_ids(self.project)
        for i, card in enumerate(cards):
            piece = self.path(folder, "cards", card["id"] + ".json")
            if not self.pending(read_json(piece)):
                continue
            self.budget.need(30, f"{self.name} card {card['id'][:8]}")
            say(f"{self.name}: card {i + 1}/{len(cards)} {card['id'][:8]} {card['op']}")
            try:
                nodes = self.tree_nodes(card) if with_candidate and card["id"] in searched else []
                row = measure_card(card, self.project, nodes, self.args.kforge, self.env, workdir, copy_gbps,
                                   with_compile=with_compile)
            except OutOfBudget:
                raise
            except Exception as e:  # noqa: BLE001 - recorded; the card still appears in the report
                traceback.print_exc()
                row = {"id": card["id"], "error": one_line(f"{type(e).__name__}: {e}")}
                self.failed = True
            write_json(piece, row)

    def tree_nodes(self, card):
        cmd = [self.args.kforge, "tree", self.project, "--card", card["id"], "--json"]
        result = self.run_kforge(cmd, f"{self.name} tree {card['id'][:8]}")
        if result.returncode != 0:
            raise RuntimeError(f"kforge tree failed (exit {result.returncode}): {result.stderr.strip()}")
        return json.loads(result.stdout)["nodes"]

    def measure_end_to_end(self, pieces, folder):
        export_attempted = read_json(self.path("export.json")) is not None
        for name, fn in pieces:
            piece = self.path(folder, f"e2e_{name}.json")
            if not self.pending(read_json(piece)) or (name in CAST_PIECES and not export_attempted):
                continue
            self.budget.need(120 if name == "compile" else 30, f"{self.name} end-to-end {name}")
            say(f"{self.name}: end to end: {name}")
            self.record_piece(piece, fn)

    def record_piece(self, piece, fn):
        try:
            data = fn()
        except OutOfBudget:
            raise
        except Exception as e:  # noqa: BLE001 - recorded as this measurement's result
            traceback.print_exc()
            data = {"error": one_line(f"{type(e).__name__}: {e}")}
        self.failed |= bool(data.get("error"))
        write_json(piece, data)

    def reference(self):
        module, inputs = self.built()
        with torch.no_grad():
            return [t.clone() for t in flatten(module(*inputs))]

    @staticmethod
    def difference(got, expected):
        return {"max_abs_diff": max(((g.float() - e.float()).abs().max().item() for g, e in zip(got, expected)),
                                    default=0.0),
                "reference_max_abs": max((e.float().abs().max().item() for e in expected), default=0.0)}

    def e2e_eager(self):
        module, inputs = self.built()
        with torch.no_grad():
            us = do_bench_us(lambda: module(*inputs), warmup=100, rep=1000)
            record = {"ms": us / 1000, "method": "do_bench (L2 flushed, median) of the eager nn.Module, no_grad; "
                      "device_ms: " + DEVICE_METHOD}
            model_device_time_into(record, "device_ms", lambda: module(*inputs))
        return record

    def runtime_library(self):
        if self.args.runtime:
            return os.path.abspath(self.args.runtime)
        return os.path.join(os.path.dirname(os.path.dirname(self.args.kforge)), "runtime", "libkforge_runtime.so")

    def e2e_cast_runtime(self):
        return self.cast_rounds(backend=False)

    def e2e_cast_backend(self):
        return self.cast_rounds(backend=True)

    def cast_rounds(self, backend):
        """Eager and the loaded .cast alternating in this process. backend=False: the eager
        nn.Module (op kernels only: the dispatcher sends matching calls to them); True: the module
        through torch.compile with the runtime's backend (Inductor in COMPILE_MODE, as the
        torch.compile baseline, with the region kernels where their chains run)."""
        if not self.exported():
            return {"error": "no .cast (export failed or has not run)"}
        library = self.runtime_library()
        if not os.path.exists(library):
            return {"error": f"{library} does not exist (build the runtime, or pass --runtime)"}
        expected = self.reference()
        module, inputs = self.built()
        if not hasattr(torch.ops, "kforge") or not hasattr(torch.ops.kforge, "load_cast"):
            torch.ops.load_library(library)
        forward = {"eager": module, "cast": module}
        if backend:
            sys.path.insert(0, os.path.join(ROOT, "runtime"))
            from kforge_runtime import make_kforge_backend
            torch._dynamo.reset()
            forward["cast"] = torch.compile(module, backend=make_kforge_backend(mode=COMPILE_MODE), dynamic=False)

        def bench_module(rounds, side):
            with torch.no_grad():
                rounds[side + "_ms"].append(do_bench_us(lambda: forward[side](*inputs), warmup=50, rep=300) / 1000)
                timed = {}
                model_device_time_into(timed, "ms", lambda: forward[side](*inputs))
            rounds[side + "_device_ms"].append(timed.get("ms"))
            rounds[side + "_host_ms"].append(timed.get("host_ms"))
            if timed.get("ms_error"):
                rounds.setdefault("device_errors", []).append(f"{side}: {timed['ms_error']}")
        # Eager and the loaded package alternate within this process, CAST_ROUNDS times: a drift
        # (clocks, host load; eager gemma was seen to move from 5.9 to 2.3 ms within one process)
        # then touches both sides instead of being read as the package's effect. Each round also
        # takes both sides' GPU time (host launch overhead hidden), which host drift does not move.
        rounds = {"eager_ms": [], "cast_ms": [], "eager_device_ms": [], "cast_device_ms": [],
                  "eager_host_ms": [], "cast_host_ms": []}
        got, stats = None, None
        for _ in range(CAST_ROUNDS):
            bench_module(rounds, "eager")
            handle = torch.ops.kforge.load_cast(self.cast)
            try:
                if got is None:
                    with torch.no_grad():  # the backend traces (and compiles) on this first call
                        got = flatten(forward["cast"](*inputs))
                bench_module(rounds, "cast")
                stats = json.loads(torch.ops.kforge.cast_stats())
            finally:
                torch.ops.kforge.unload_cast(handle)
        record = {"ms": statistics.median(rounds["cast_ms"]), "eager_ms": statistics.median(rounds["eager_ms"]),
                  "speedup": statistics.median(e / c for e, c in zip(rounds["eager_ms"], rounds["cast_ms"])),
                  "rounds": rounds, "output": self.difference(got, expected), "stats": stats,
                  "method": f"{CAST_ROUNDS} rounds, each a do_bench (L2 flushed, median) of the eager nn.Module "
                            "and then of the same module with the .cast loaded (torch.ops.kforge.load_cast"
                            + (", run through torch.compile(backend=make_kforge_backend(mode="
                               f"{COMPILE_MODE!r}), dynamic=False): Inductor with the region kernels"
                               if backend else "")
                            + "), "
                            "no_grad; ms and eager_ms: medians over the rounds, speedup: median of the "
                            "per-round ratios; device_ms, eager_device_ms and device_speedup: the same of "
                            "each side's GPU time in the round, " + DEVICE_METHOD}
        device_pairs = [(e, c) for e, c in zip(rounds["eager_device_ms"], rounds["cast_device_ms"]) if e and c]
        if device_pairs:
            record["device_ms"] = statistics.median(c for _, c in device_pairs)
            record["eager_device_ms"] = statistics.median(e for e, _ in device_pairs)
            record["device_speedup"] = statistics.median(e / c for e, c in device_pairs)
        return record

    def e2e_kforge_run(self):
        if not self.exported():
            return {"error": "no .cast (export failed or has not run)"}
        cmd = [self.args.kforge, "run", self.cast, "--inputs", self.inputs_pt, "--runs", str(self.args.runs), "--json"]
        result = self.run_kforge(cmd, f"{self.name} kforge run")
        record = {"command": shell_line(cmd), "exit": result.returncode}
        try:  # exit 1 with a report: outputs beyond tolerance, which the report shows
            record["report"] = json.loads(result.stdout)
        except json.JSONDecodeError:
            record["error"] = one_line(f"kforge run failed (exit {result.returncode}): {result.stderr}")
        return record

    def e2e_compile(self):
        expected = self.reference()
        module, inputs = self.built()
        torch._dynamo.reset()
        compiled = torch.compile(module, mode=COMPILE_MODE)
        with torch.no_grad():
            started = time.monotonic()
            got = flatten(compiled(*inputs))
            torch.cuda.synchronize()
            compile_s = time.monotonic() - started
            us = do_bench_us(lambda: compiled(*inputs), warmup=100, rep=1000)
            record = {"ms": us / 1000, "compile_s": compile_s, "output": self.difference(got, expected),
                      "method": f"do_bench (L2 flushed, median) of torch.compile(mode={COMPILE_MODE!r}), no_grad; "
                                "device_ms: " + DEVICE_METHOD}
            model_device_time_into(record, "device_ms", lambda: compiled(*inputs))
        return record


def print_summary(name, result):
    summary, e2e = result["summary"], result["summary"]["end_to_end"]
    faster = summary["faster_than_eager"]
    ms = {k: "-" if e2e.get(k + "_ms") is None else f"{e2e[k + '_ms']:.2f}" for k in ("eager", "cast_runtime", "compile")}
    if e2e.get("cast_runtime_eager_ms"):  # the eager time the package alternated with, and their speedup
        ms["cast_runtime"] = (f"{ms['cast_runtime']} (against eager {e2e['cast_runtime_eager_ms']:.2f} in the same rounds, "
                              f"{e2e['cast_runtime_speedup_vs_eager']:.2f}x)")
    print(f"{name}: cards {summary['cards_total']} (searched {summary['cards_searched']}), faster than eager "
          f"{faster['evaluator']} by the evaluator / {faster['do_bench']} by do_bench, exported {faster['exported']}; "
          f"end to end ms: eager {ms['eager']}, .cast {ms['cast_runtime']}, torch.compile {ms['compile']}; "
          f"missing: {', '.join(result['missing']) or 'nothing'}")


def print_baselines_summary(name, result):
    e2e, cards = result["end_to_end"], result["cards"]
    ms = {k: "-" if not (e2e.get(k) or {}).get("ms") else f"{e2e[k]['ms']:.2f}" for k in ("eager", "compile")}
    compiled = sum(1 for c in cards if ((c.get("do_bench") or {}).get("compile") or {}).get("us"))
    print(f"{name} (baselines): cards with torch.compile {compiled} of {len(result['card_ids'])}; end to end ms: "
          f"eager {ms['eager']}, torch.compile {ms['compile']}; missing: {', '.join(result['missing']) or 'nothing'}")


def baseline_sources(folders, names):
    """{model: {"cards": card ids, "has_end_to_end_compile"}} from the last of `folders` holding
    MODEL.json (a published suite result): the cards a baselines pass times, and whether that run
    already measured torch.compile end to end, GPU time included (then the pass does not compile the
    model again; runs from before the end-to-end GPU time get it from the pass)."""
    sources = {}
    for folder in folders:
        if not os.path.isdir(folder):
            raise ValueError(f"--baselines-from {folder}: no such folder")
        for name in names:
            result = read_json(os.path.join(folder, name + ".json"))
            if result is not None:
                sources[name] = {"cards": [card["id"] for card in result.get("cards", [])]}
                compiled = (result.get("end_to_end") or {}).get("compile") or {}
                sources[name]["has_end_to_end_compile"] = bool(compiled.get("ms") and compiled.get("device_ms"))
    absent = [name for name in names if name not in sources]
    if absent:
        raise ValueError(f"no result for {', '.join(absent)} in {', '.join(folders)} (--baselines-from)")
    return sources


def settings_of(args):
    return {"iterations": args.iterations, "time_limit_per_card_s": args.time_limit_per_card, "seed": SEED,
            "proposer": "builtin", "samples": 1, "sample_budget_mb": args.sample_budget_mb,
            "sanitize": args.sanitize, "sanitize_jobs": args.sanitize_jobs, "kforge_run_runs": args.runs,
            "torch_compile": not args.no_compile,
            "card_torch_compile": not (args.no_compile or args.no_card_compile)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kforge", required=True, help="the kforge executable (build/cli/kforge)")
    parser.add_argument("--out", required=True, help="results folder; must survive between invocations")
    parser.add_argument("--models", default=",".join(models.MODELS), help="comma-separated: " + ", ".join(models.MODELS))
    parser.add_argument("--stage", default="all", choices=("all",) + STAGES)
    parser.add_argument("--iterations", type=int, default=50, help="nodes per card (kforge optimize --iterations)")
    parser.add_argument("--time-limit-per-card", type=float, default=30, help="kforge optimize --time-limit (s)")
    parser.add_argument("--budget", type=float, default=540, help="seconds this invocation may run (default 540)")
    # 8 GiB: the s2048 decoders' first layer alone takes more than 4 GiB of inputs ([4,16,2048,2048]
    # scores in bfloat16 and float32); with 4 GiB their MLP and cast cards had no sample to validate.
    parser.add_argument("--sample-budget-mb", type=int, default=8192,
                        help="kforge capture --sample-budget-mb (default 8192)")
    parser.add_argument("--sanitize", default="auto", choices=("auto", "on", "off"), help="kforge export --sanitize")
    parser.add_argument("--sanitize-jobs", type=int, default=2,
                        help="kforge export --sanitize-jobs (default 2: eight compute-sanitizer runs at once)")
    parser.add_argument("--runs", type=int, default=30, help="kforge run --runs")
    parser.add_argument("--no-compile", action="store_true",
                        help="skip every torch.compile measurement (report.py keeps an earlier run's, marked)")
    parser.add_argument("--no-card-compile", action="store_true",
                        help="skip torch.compile of each card (keep the end-to-end one)")
    parser.add_argument("--runtime", help="libkforge_runtime.so (default: build/runtime/ beside the kforge build)")
    parser.add_argument("--worker", help="kforge-worker to use (sets KFORGE_WORKER)")
    parser.add_argument("--publish", help="copy each model's result.json to DIR/MODEL.json")
    parser.add_argument("--retry", action="store_true", help="run again the stages and measurements that failed")
    parser.add_argument("--baselines-from", action="append", metavar="DIR",
                        help="instead of the suite: capture, then eager and torch.compile alone (per card for the "
                             "cards of DIR/MODEL.json, an earlier run's published result, and end to end), for "
                             "bench/report.py to fill in that run's missing torch.compile numbers; repeatable, the "
                             "last DIR holding a model's result names its cards")
    args = parser.parse_args()
    started = time.monotonic()
    budget = Budget(args.budget)

    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in models.MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)} (known: {', '.join(models.MODELS)})")
    if args.baselines_from:
        if args.stage != "all" or args.no_compile:
            parser.error("--baselines-from measures torch.compile: it takes neither --stage nor --no-compile")
        try:
            args.baseline_sources = baseline_sources(args.baselines_from, names)
        except ValueError as e:
            print(f"suite: error: {e}", file=sys.stderr)
            return 2
    args.kforge = os.path.abspath(args.kforge)
    if not os.access(args.kforge, os.X_OK):
        print(f"suite: error: {args.kforge} is not an executable kforge (build it first)", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("suite: error: no CUDA device (the suite times kernels on a GPU)", file=sys.stderr)
        return 2
    args.out = os.path.abspath(args.out)
    os.makedirs(args.out, exist_ok=True)
    # Inductor's caches under OUT: a compile cut off at the deadline is mostly cached for the rerun.
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(args.out, "inductor-cache"))
    env = dict(os.environ)
    if args.worker:
        env["KFORGE_WORKER"] = os.path.abspath(args.worker)

    environment_now = environment(args.kforge)
    invocation = {"command": shell_line([sys.executable.rsplit("/", 1)[-1], os.path.abspath(__file__)] + sys.argv[1:]),
                  "date": environment_now["date"]}
    stages = ("capture", "measure_baselines") if args.baselines_from else STAGES if args.stage == "all" else (args.stage,)
    runs, complete, reason = [], True, None
    budget.arm()
    try:
        for name in names:
            runs.append(ModelRun(name, args, budget, env))
            log_path = runs[-1].path("invocations.json")
            write_json(log_path, (read_json(log_path) or []) + [invocation])
            for stage in stages:
                getattr(runs[-1], stage)()
            runs[-1].release()
    except OutOfBudget as e:
        complete, reason = False, str(e)
    finally:
        budget.disarm()

    published = []
    for model_run in runs:
        invocations = read_json(model_run.path("invocations.json")) or []
        if args.baselines_from:
            result = assemble_baselines(model_run.dir, model_run.name, model_run.description, environment_now,
                                        invocations, args.baseline_sources[model_run.name]["cards"],
                                        args.baseline_sources[model_run.name]["has_end_to_end_compile"])
        else:
            result = assemble(model_run.dir, model_run.name, model_run.description, environment_now,
                              settings_of(args), invocations)
        result["order"] = list(models.MODELS).index(model_run.name)  # the report lists models in the suite's order
        write_json(model_run.path("result.json"), result)
        if args.publish:
            os.makedirs(args.publish, exist_ok=True)
            shutil.copyfile(model_run.path("result.json"), os.path.join(args.publish, model_run.name + ".json"))
            published.append(model_run.name + ".json")
        (print_baselines_summary if args.baselines_from else print_summary)(model_run.name, result)
    if published:
        say(f"published {', '.join(published)} to {args.publish}")
    say(f"{time.monotonic() - started:.0f} s" + ("" if complete else f"; stopped: {reason}; rerun the same command "
                                                   "to continue"))
    if not complete:
        return 3
    return 1 if any(model_run.failed for model_run in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
