#!/usr/bin/env python3
"""CPU test: the built-in proposer's kernels, run by a host emulation of CUDA, against eager PyTorch.

No GPU is needed, so the numbers of every template family are checked in CI, not only on the GPU
machine: the model of tests/gpu/builtin_families_gpu.py (every op a family covers, NCHW and
channels-last) is built in float32 on the CPU for a few row lengths and captured with
`kforge capture --device cpu --samples 1`. For every card of a covered op, kforge_kernel_dump writes
the proposer's root candidate and a few of its neighbours (float32 at row lengths 7 and 197, bfloat16
and float16 at 197); each is compiled with the host C++
compiler against cuda_host_shim.h (threads of a block are OS threads, __syncthreads a barrier,
__shfl_xor_sync an exchange within a warp), run on the card's captured sample with its launch plan
(outputs and scratch poisoned with NaN / 0xA5 as the evaluator does), and compared with the outputs
eager PyTorch gave in the capture.

Fails on a covered card the proposer refuses, a candidate that does not compile or crashes, or an
output element out of tolerance (float32 atol 1e-4 + rtol 1e-4: the host math is exact where the GPU
uses fast intrinsics, and reductions add in another order; 16-bit outputs the in-model check's
reduction tolerances; a wrong index is off by O(1)). Timing and the GPU's own numerics stay with the
`gpu` tests.

Usage: emulate_builtin_families.py --kforge build/cli/kforge --dump build/.../kforge_kernel_dump
                                   [--cuda-include /usr/local/cuda/include] [--matrix float32:7 bfloat16:197]
                                   [--variants 3] [--jobs N] [--ops aten::cumsum ...] [--keep]
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import torch  # noqa: E402

import builtin_families_gpu as families  # noqa: E402
from cubin_launch import card_bindings  # noqa: E402  (torch only without cuda-python)
from kforge_samples import load_sample  # noqa: E402

CTYPES = {"i32": "int", "u32": "unsigned", "i64": "long long", "u64": "unsigned long long", "f32": "float",
          "f64": "double"}
# Per output dtype: float32 allows the host's exact math against eager's and another order of
# additions; 16-bit outputs one rounding more (the in-model check's reduction tolerances).
TOLERANCE = {torch.float32: (1e-4, 1e-4), torch.bfloat16: (8e-3, 1.6e-2), torch.float16: (1e-3, 4e-3)}
# (dtype, row lengths) of the default run: float32 at two lengths, the 16-bit dtypes at one.
SAMPLE_LOCK = threading.Lock()
DEFAULT_MATRIX = (("float32", 7), ("float32", 197), ("bfloat16", 197), ("float16", 197))


def span(sizes, strides):
    """Elements from a tensor's first element to its last, in storage (what a kernel may touch)."""
    return 1 + sum((s - 1) * st for s, st in zip(sizes, strides))


def storage_bytes(t):
    """The bytes of the storage span tensor `t` views (contiguous copy of that span)."""
    t = t.detach()
    span_elements = span(t.shape, t.stride()) if t.numel() else 0
    flat = torch.as_strided(t, (span_elements,), (1,)) if t.dim() else t.reshape(1)
    return flat.contiguous().view(torch.uint8).numpy().tobytes()  # numpy has no bfloat16


def on_gpu(card):
    """The card as a GPU capture records it: the same, with the CPU capture's device names on cuda:0
    (the proposer serves CUDA cards; a CPU tensor operand means a wrapped Python scalar to it)."""
    card = json.loads(json.dumps(card))
    for spec in [t for arg in card["args"] for t in arg.get("tensors", []) or []] + card["outputs"]:
        if spec.get("device") == "cpu":
            spec["device"] = "cuda:0"
    return card


class Runner:
    """One candidate: writes its buffers, a main() that launches its plan, compiles and runs it."""

    def __init__(self, workdir, card, tensors, values, cuda_include):
        self.workdir, self.card, self.tensors, self.values = workdir, card, tensors, values
        self.cuda_include = cuda_include  # cuda_fp16.h / cuda_bf16.h for 16-bit kernels

    def buffers(self, plan):
        """name -> (bytes, poison): inputs, outputs (NaN) and scratch (zero or 0xA5)."""
        out = {}
        for name, t in self.tensors.items():
            out["in:" + name] = storage_bytes(t)
        for i, spec in enumerate(self.card["outputs"]):
            itemsize = torch.empty(0, dtype=getattr(torch, spec["dtype"])).element_size()
            out[f"out:{i}"] = b"\xff" * (span(spec["sizes"], spec["strides"]) * itemsize)  # NaN for floats
        for s in plan.get("scratch", []):
            out["scratch:" + s["name"]] = (b"\x00" if s.get("zero") else b"\xa5") * int(s["bytes"])
        return out

    def argument(self, token, names):
        kind, _, rest = token.partition(":")
        if kind == "ptr":
            if rest.startswith("out"):
                key = "out:" + rest[3:]
            elif rest.startswith("scratch."):
                key = "scratch:" + rest[len("scratch."):]
            else:
                key = "in:" + rest
            return "void*", f"buf[{names.index(key)}].data()"
        ctype = CTYPES[kind]
        value = self.values[rest] if rest in self.values else float(rest) if "." in rest or "e" in rest else int(rest)
        return ctype, repr(value) if kind.startswith("f") else str(int(value))

    def run(self, source_file, plan):
        buffers = self.buffers(plan)
        names = list(buffers)
        for i, name in enumerate(names):
            with open(os.path.join(self.workdir, f"buf{i}.bin"), "wb") as f:
                f.write(buffers[name])
        calls = []
        for launch in plan["launches"]:
            grid = launch["grid"] if isinstance(launch["grid"], list) else [launch["grid"]]
            block = launch["block"] if isinstance(launch["block"], list) else [launch["block"]]
            if grid[1:] not in ([], [1], [1, 1]) or block[1:] not in ([], [1], [1, 1]):
                raise RuntimeError("the host emulation runs 1-D grids and blocks only")
            args = [self.argument(token, names) for token in launch["args"]]
            signature = ", ".join(t for t, _ in args)
            call = ", ".join(v for _, v in args)
            calls.append(f"    kfLaunch([&] {{ reinterpret_cast<void (*)({signature})>(&{launch['kernel']})({call}); }}, "
                         f"{grid[0]}, {block[0]});")
        main = os.path.join(self.workdir, "main.cpp")
        with open(main, "w") as f:
            f.write(f'#include "cuda_host_shim.h"\n#include "{source_file}"\n#include <fstream>\n#include <iterator>\n'
                    f"int main()\n{{\n    std::vector<std::vector<char>> buf({len(names)});\n"
                    f"    for (int i = 0; i < {len(names)}; ++i) {{\n"
                    f'        std::ifstream in("buf" + std::to_string(i) + ".bin", std::ios::binary);\n'
                    f"        buf[i].assign(std::istreambuf_iterator<char>(in), {{}});\n"
                    f"        buf[i].resize(buf[i].size() + 16); // no read past the end is ever valid, but it must not crash the host\n"
                    f"    }}\n" + "\n".join(calls) + "\n"
                    f"    for (int i = 0; i < {len(names)}; ++i) {{\n"
                    f'        std::ofstream out("buf" + std::to_string(i) + ".out", std::ios::binary);\n'
                    f"        out.write(buf[i].data(), buf[i].size() - 16);\n    }}\n}}\n")
        compiler = os.environ.get("CXX", "g++")
        include = ["-I", self.cuda_include, "-DKF_EMULATE_16BIT"] if self.cuda_include else []
        compiled = subprocess.run([compiler, "-std=c++20", "-O1", "-w", "-pthread", "-I", HERE, "-I", self.workdir]
                                  + include + ["main.cpp", "-o", "main"], cwd=self.workdir, capture_output=True, text=True)
        if compiled.returncode != 0:
            raise RuntimeError("host compile failed: " + " ".join(compiled.stderr.split())[:600])
        ran = subprocess.run(["./main"], cwd=self.workdir, capture_output=True, text=True, timeout=600)
        if ran.returncode != 0:
            raise RuntimeError(f"the emulated kernel crashed (exit {ran.returncode}): {ran.stderr[-300:]}")
        outputs = []
        for i, spec in enumerate(self.card["outputs"]):
            with open(os.path.join(self.workdir, f"buf{names.index(f'out:{i}')}.out"), "rb") as f:
                flat = torch.frombuffer(bytearray(f.read()), dtype=getattr(torch, spec["dtype"]))
            outputs.append(torch.as_strided(flat, spec["sizes"], spec["strides"]))
        return outputs


def compare(got, expected):
    """None when every output is within tolerance, else the first problem."""
    expected = [e for e in expected if isinstance(e, torch.Tensor)]
    if len(got) != len(expected):
        return f"{len(got)} outputs, eager gave {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        if g.shape != e.shape:
            return f"output {i}: shape {list(g.shape)}, eager {list(e.shape)}"
        atol, rtol = TOLERANCE.get(e.dtype, (0.0, 0.0))
        g, e = g.double(), e.double()
        bad = ~((g - e).abs() <= atol + rtol * e.abs()) & ~(torch.isnan(g) & torch.isnan(e)) & ~(g == e)  # inf == inf
        if bad.any():
            where = tuple(int(x) for x in bad.nonzero()[0])
            return (f"output {i}: {int(bad.sum())} of {e.numel()} elements out of tolerance; at {list(where)} got "
                    f"{g[where].item():.6g}, eager {e[where].item():.6g}")
    return None


def emulate_card(card, label_prefix, case, project, args):
    """Every candidate of one card: (printed lines, failures, candidates emulated)."""
    op = families.qualified(card)
    label = f"{label_prefix} {op} [{families.tensor_summary(card)}]"
    card_dir = os.path.join(case, card["id"][:8])
    os.makedirs(card_dir)
    card_file = os.path.join(card_dir, "card.json")
    with open(card_file, "w") as f:
        json.dump(on_gpu(card), f)
    dumped = subprocess.run([args.dump, card_file, card_dir, str(args.variants)], capture_output=True, text=True)
    if dumped.returncode != 0:
        if families.is_alias(card, dumped.stdout):
            return [f"  {label}: alias (no work): {dumped.stdout.strip()}"], [], 0
        if op in families.IN_PROGRESS:
            return [f"  {label}: unsupported (in progress): {dumped.stdout.strip()}"], [], 0
        return [], [f"{label}: {dumped.stdout.strip() or dumped.stderr.strip()}"], 0
    samples = card.get("samples", [])
    if not samples:
        return [], [f"{label}: no sample captured"], 0
    with SAMPLE_LOCK:  # load_sample's safe_globals allow-list is process-wide state, not per thread
        inputs, expected = load_sample(os.path.join(project, samples[0]["file"]))
    tensors, values = card_bindings(card, inputs)
    runner = Runner(card_dir, card, tensors, values, args.cuda_include)
    failures, count = [], int(dumped.stdout.strip())
    for k in range(count):
        with open(os.path.join(card_dir, f"{k}.json")) as f:
            plan = json.load(f)
        try:
            problem = compare(runner.run(f"{k}.cu", plan), list(expected))
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            problem = str(e)
        if problem:
            failures.append(f"{label} candidate {k}: {problem}")
    return [f"  {label}: {count} candidate(s) emulated"], failures, count


def clean_up(work, keep):
    """Removes the work directory, or names it when it is kept."""
    if keep:
        print(f"kept: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)


def summary(checked, failures):
    """Prints the count and every failure; the exit status (1 on a failure or when nothing ran)."""
    print(f"{checked} candidate(s) emulated, {len(failures)} failure(s)")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures or checked == 0 else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--dump", required=True, help="the kforge_kernel_dump test helper")
    parser.add_argument("--matrix", nargs="+", metavar="DTYPE:LENGTH",
                        help="models to emulate (default: " + " ".join(f"{d}:{n}" for d, n in DEFAULT_MATRIX) + ")")
    parser.add_argument("--cuda-include", help="the CUDA toolkit include directory (cuda_fp16.h, cuda_bf16.h)")
    parser.add_argument("--variants", type=int, default=3, help="candidates per card: the root and neighbours")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="cards emulated at once")
    parser.add_argument("--ops", nargs="+", metavar="OP",
                        help="emulate only the cards of these ops (e.g. aten::cumsum): a quick re-check of one family")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    unknown = sorted(set(args.ops or []) - set(families.COVERED))
    if unknown:
        print(f"error: --ops {' '.join(unknown)}: not among the covered ops", file=sys.stderr)
        return 2
    if shutil.which(os.environ.get("CXX", "g++")) is None:
        print("skipped: no host C++ compiler")
        return 77
    work = tempfile.mkdtemp(prefix="kforge-emulate-")
    failures, checked = [], 0
    try:
        matrix = [(m.split(":")[0], int(m.split(":")[1])) for m in args.matrix] if args.matrix else DEFAULT_MATRIX
        for dtype, length in matrix:
            if dtype != "float32" and not args.cuda_include:
                failures.append(f"{dtype}: --cuda-include is needed for 16-bit kernels")
                continue
            label = f"{dtype} L={length}"
            case = os.path.join(work, f"{dtype}-L{length}")
            os.makedirs(case)
            model_path, inputs_path = os.path.join(case, "model.pt"), os.path.join(case, "inputs.pt")
            families.export_model(length, dtype, "cpu", model_path, inputs_path)
            project = os.path.join(case, "project")
            capture = subprocess.run([args.kforge, "capture", model_path, "--inputs", inputs_path, "-o", project,
                                      "--device", "cpu", "--samples", "1", "--json", "--quiet"],
                                     capture_output=True, text=True)
            if capture.returncode != 0:
                failures.append(f"{label}: capture failed: {capture.stderr.strip()}")
                continue
            cards = [c for c in json.loads(capture.stdout)["cards"]
                     if families.qualified(c) in (args.ops or families.COVERED)]
            with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
                for lines, problems, count in pool.map(lambda c: emulate_card(c, label, case, project, args), cards):
                    print("\n".join(lines), flush=True)
                    failures += problems
                    checked += count
    finally:
        clean_up(work, args.keep)
    return summary(checked, failures)


if __name__ == "__main__":
    sys.exit(main())
