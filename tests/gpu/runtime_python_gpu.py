#!/usr/bin/env python3
"""Loads a .cast package into python3's torch through libkforge_runtime and checks that an eager
nn.Module (no TorchScript) is served by the packaged relu kernel for float32 [64, 1000], also when
its forward is captured into a CUDA graph (torch.cuda.graph) and replayed on new input values,
and that loading it prints no dispatcher warning about the kernels it overrides.

Usage: runtime_python_gpu.py --library libkforge_runtime.so --cast relu.cast   (exit 0 on success)
"""
import argparse
import json
import os
import sys
import tempfile
import warnings

import torch

OVERRIDE_WARNING = "Overriding a previously registered kernel"


def load_capturing_warnings(path):
    """torch.ops.kforge.load_cast(path) with the process's stderr (fd 2) and Python's warnings
    captured: (handle, what either received)."""
    with tempfile.TemporaryFile() as err, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(err.fileno(), 2)
        try:
            handle = torch.ops.kforge.load_cast(path)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        err.seek(0)
        text = err.read().decode(errors="replace")
    return handle, text + "".join(str(w.message) for w in caught)


def replay_in_a_cuda_graph(model):
    """Captures model's forward into a CUDA graph (with the package loaded) and replays it on new
    values of the captured input; the reason it went wrong, or None."""
    static = torch.randn(64, 1000, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        out = model(static)
    for replay in range(3):
        static.copy_(torch.randn(64, 1000, device="cuda"))
        graph.replay()
        torch.cuda.synchronize()
        if not torch.equal(out, torch.clamp_min(static, 0)):
            return f"replay {replay} differs from eager"
    del graph  # before the package is unloaded: a replay after that would launch an unloaded kernel
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--library", required=True)
    parser.add_argument("--cast", required=True)
    args = parser.parse_args()
    torch.ops.load_library(args.library)
    model = torch.nn.Sequential(torch.nn.ReLU()).cuda().eval()
    x = torch.randn(64, 1000, device="cuda")
    expected = torch.clamp_min(x, 0)
    # The first override of a CUDA kernel in this process: the dispatcher's one-time warning about
    # it is expected by design and filtered (runtime/OpHooks.cpp); nothing else may be printed.
    handle, printed = load_capturing_warnings(args.cast)
    try:
        with torch.no_grad():
            got = model(x)
        stats = json.loads(torch.ops.kforge.cast_stats())
        graph_error = replay_in_a_cuda_graph(model)
        graph_stats = json.loads(torch.ops.kforge.cast_stats())
    finally:
        torch.ops.kforge.unload_cast(handle)
    if OVERRIDE_WARNING in printed:
        sys.exit("python: loading the package printed the dispatcher's override warning: " + printed.strip())
    hits = sum(k["hits"] for k in stats["kernels"])
    if not torch.equal(got, expected):
        sys.exit("python: the served relu differs from eager")
    if hits != 1:
        sys.exit(f"python: expected one hit, stats {stats}")
    if graph_error:
        sys.exit("python: CUDA graph: " + graph_error)
    if sum(k["hits"] for k in graph_stats["kernels"]) != 2:
        sys.exit(f"python: CUDA graph: expected one more hit (the capture) and none per replay, stats {graph_stats}")
    try:
        torch.ops.kforge.load_cast(args.cast + ".missing")
        sys.exit("python: loading a missing package did not raise")
    except RuntimeError as error:
        if "kforge:" not in str(error):
            sys.exit(f"python: unexpected error text {error}")
    print("python: eager nn.Module served by the package (1 hit), also captured into a CUDA graph and replayed "
          "3 times; missing package refused")


if __name__ == "__main__":
    main()
