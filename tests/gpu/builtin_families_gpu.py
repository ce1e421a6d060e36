#!/usr/bin/env python3
"""GPU test: every built-in kernel family, on odd row lengths, validated against eager PyTorch.

For each row length L in (1, 7, 197, 1000, 4097) and dtype (float32, bfloat16, float16) one
TorchScript model calls every op a built-in family covers on tensors whose innermost size is L
(softmax, log_softmax, layer_norm, rms_norm, group_norm and batch_norm in eval mode (NCHW and channels-last),
adaptive_avg_pool2d to 1 and max_pool2d 3x3 stride 2 (NCHW and channels-last), avg_pool1d/2d/3d and
max_pool1d/3d, mean, sum, var, std,
vector_norm, logsumexp, instance_norm, argmax, max.dim, sum and softmax over dim 1, cumsum (over the
last dim and dim 1) and cumprod, relu, gelu exact and tanh, silu, sigmoid, tanh,
neg (also of two slices, gathered into a dense output), flatten of a transposed tensor, rsqrt, cos, sin, pow 2, add / sub /
mul / div with a broadcast [L] and a same-shape operand, mul and add with a float64 0-dim tensor that
moved to the GPU with the model (a decoder's attention scale, an RMSNorm eps), mul by a number on
the host (the row length, a 0-dim int64 CPU tensor), mul and add into a
transposed output (the decoders' rotary embedding on q.transpose(1, 2)), add of a channels-last and
an NCHW operand both ways (SD's VAE attention residual: a transposed operand), an in-place add_ on a
clone, embedding, a dtype conversion (bfloat16 / float16 to float32, float32 to float16) and a
type_as into another dtype (float32 to bfloat16, 16-bit to float32)).
Each model is captured (`kforge capture --samples 1`), searched with the built-in proposer
(`kforge optimize --iterations 4 --seed 1`) and every card's tree read back (`kforge tree --json`).

Pass/fail:
- every op of the list is captured as a card (nothing vanished);
- every card of a covered op was searched (not skipped by optimize) and its root node passed
  validation (an in-place add_ card that the proposer calls unsupported is reported, not failed:
  that support is in progress);
- no node failed except by a "no untried transformation" proposal: a wrong result, a bounds,
  determinism or launch failure, a compile error, a crash or a time-out is a bug of a template.

Exits 77 ("Skipped" for ctest) when torch sees no CUDA device. Everything it writes lives in a
temporary folder that is removed at the end (--keep keeps it and prints where).

--ops searches only the cards of the ops named (e.g. `--ops aten::cat aten::reshape` to re-check a
fix in a minute or two instead of the whole matrix); every op is still captured and counted.

Usage: builtin_families_gpu.py --kforge build/cli/kforge [--jobs 4] [--lengths 1 7] [--dtypes float32]
                               [--ops aten::cat ...]
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tools"))

ROW_LENGTHS = (1, 7, 197, 1000, 4097)
DTYPES = ("float32", "bfloat16", "float16")
ROWS, BATCH, CHANNELS, GROUPS, VOCAB, INDICES = 3, 2, 4, 2, 11, 5
ITERATIONS = 4

# Ops of the model that a built-in family covers, with the number of cards each must give
# (add/sub/mul/div: one with a broadcast [L] operand, one with a same-shape operand; add and mul
# also one with a float64 0-dim operand and one into a transposed output; mul also one by a host
# number; add also the two mixed channels-last / NCHW ones).
COVERED = {
    "aten::softmax.int": 2, "aten::log_softmax.int": 1, "aten::layer_norm": 1, "aten::rms_norm": 1,
    "aten::group_norm": 2, "aten::batch_norm": 2, "aten::adaptive_avg_pool2d": 2, "aten::max_pool2d": 2, "aten::mean.dim": 1,
    "aten::sum.dim_IntList": 2, "aten::relu": 2, "aten::relu_": 2, "aten::silu_": 1, "aten::gelu": 2, "aten::silu": 1, "aten::sigmoid": 1,
    "aten::tanh": 1, "aten::add.Tensor": 6, "aten::sub.Tensor": 2, "aten::mul.Tensor": 5, "aten::div.Tensor": 2,
    "aten::embedding": 1, "aten::add_.Tensor": 2, "aten::to.dtype": 1, "aten::neg": 3, "aten::rsqrt": 1,
    "aten::cos": 1, "aten::sin": 1,
    "aten::pow.Tensor_Scalar": 1, "aten::type_as": 1, "aten::contiguous": 3, "aten::reshape": 1, "aten::cat": 2,
    "aten::cumsum": 2, "aten::cumprod": 1, "aten::avg_pool1d": 1, "aten::max_pool1d": 1, "aten::avg_pool2d": 1,
    "aten::avg_pool3d": 1, "aten::max_pool3d": 1, "aten::flatten.using_ints": 1,
}
# Row statistics and index reductions the row-region generator covers, counted by op whatever overload the trace records
# (var.dim or var.correction): one card each. A row of one element is not a row: their cards at row
# length 1 are refused with that reason, reported rather than failed.
ROW_STATISTICS = {"aten::var": 1, "aten::std": 1, "aten::linalg_vector_norm": 1, "aten::logsumexp": 1,
                  "aten::instance_norm": 1, "aten::argmax": 1, "aten::max": 1}
ONE_ELEMENT_ROW = "fewer than two elements"
# Covered ops whose support is being added: "unsupported" is reported, not a failure.
IN_PROGRESS = {"aten::add_.Tensor"}
# Cards made by the capture, not by one op, with no fixed count: the model's fused regions (the
# pointwise region family takes the all-pointwise ones; a refusal, e.g. of a chain with a norm, is
# reported). Every one searched must pass like an op card.
GENERATED = {"kforge::region"}
# The proposer's reason for a call that returns its input itself (contiguous() of a tensor already in
# the layout asked for, as x4.contiguous(memory_format=channels_last) at row length 1): no work.
ALIAS_REASON = "returns the tensor itself"


def is_alias(card, reason):
    """Whether `reason` refuses `card` as a call that returns its input, and the card agrees: its
    output has its input's sizes and strides (so the refusal cannot hide a layout it should copy)."""
    if ALIAS_REASON not in reason or len(card.get("outputs") or []) != 1:
        return False
    inputs = [a["tensors"][0] for a in card["args"] if a.get("name") == "self" and a.get("kind") == "tensor"]
    out = card["outputs"][0]
    return len(inputs) == 1 and inputs[0]["sizes"] == out["sizes"] and inputs[0]["strides"] == out["strides"]
FAILED_STATUSES = {"failed-proposal", "failed-compile", "failed-validation", "crashed", "timed-out"}


def make_model(length, dtype_name, device):
    """The model and its inputs for row length `length` on `device` (a CPU build works too:
    `python3 -c "import builtin_families_gpu as t; t.make_model(7, 'bfloat16', 'cpu')"`)."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    dtype = getattr(torch, dtype_name)
    kw = 3 if length >= 3 else 1  # a 3-D window no wider than the input (eager refuses a wider one)
    # The CPU has no 16-bit avg_pool3d (the host emulation's models): left out there.
    no_avg_pool3d = device == "cpu" and dtype != torch.float32
    generator = torch.Generator().manual_seed(1000 + length)

    def randn(*shape, scale=1.0, shift=0.0):
        return torch.randn(*shape, generator=generator) * scale + shift

    def rand(*shape, scale=1.0, shift=0.0):
        return torch.rand(*shape, generator=generator) * scale + shift

    class AllFamilies(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_weight = nn.Parameter(randn(length, scale=0.5, shift=1.0), requires_grad=False)
            self.ln_bias = nn.Parameter(randn(length, scale=0.1), requires_grad=False)
            self.rms_weight = nn.Parameter(randn(length, scale=0.5, shift=1.0), requires_grad=False)
            self.gn_weight = nn.Parameter(randn(CHANNELS, scale=0.5, shift=1.0), requires_grad=False)
            self.gn_bias = nn.Parameter(randn(CHANNELS, scale=0.1), requires_grad=False)
            self.bn_weight = nn.Parameter(randn(CHANNELS, scale=0.5, shift=1.0), requires_grad=False)
            self.bn_bias = nn.Parameter(randn(CHANNELS, scale=0.1), requires_grad=False)
            # Positive variances far from 0, also for the evaluator's fresh inputs (drawn with the
            # captured tensor's mean and standard deviation).
            self.register_buffer("bn_mean", randn(CHANNELS, scale=0.1))
            self.register_buffer("bn_var", rand(CHANNELS, scale=0.1, shift=1.0))
            self.embedding = nn.Parameter(randn(VOCAB, length), requires_grad=False)

        def forward(self, x, y, b, d, db, xg, x4, xp, xr, idx):
            acc = x.clone()
            acc.add_(y)
            # channels-last residual add_, as ResNet-50 fp16 channels-last's
            acc_cl = xp.clone(memory_format=torch.channels_last)
            acc_cl.add_(xp.clone(memory_format=torch.channels_last))
            r = torch.rsqrt(d)
            return (
                torch.softmax(x, dim=-1),
                torch.log_softmax(x, dim=-1),
                F.layer_norm(x, [length], self.ln_weight, self.ln_bias, 1e-5),
                F.rms_norm(x, [length], self.rms_weight, 1e-6),
                F.group_norm(xg, GROUPS, self.gn_weight, self.gn_bias, 1e-5),
                # channels-last (NHWC) memory, as SD's VAE gives the group_norm after a residual add
                F.group_norm(x4.contiguous(memory_format=torch.channels_last), GROUPS, self.gn_weight,
                             self.gn_bias, 1e-5),
                F.batch_norm(xg, self.bn_mean, self.bn_var, self.bn_weight, self.bn_bias, False, 0.1, 1e-5),
                # channels-last (NHWC) memory, as in ResNet-50 fp16 channels-last
                F.batch_norm(x4.contiguous(memory_format=torch.channels_last), self.bn_mean, self.bn_var,
                             self.bn_weight, self.bn_bias, False, 0.1, 1e-5),
                F.adaptive_avg_pool2d(x4, 1),
                # channels-last, as ResNet-50 channels-last's head (H = 2: never also contiguous)
                F.adaptive_avg_pool2d(xp.contiguous(memory_format=torch.channels_last), 1),
                F.max_pool2d(xp, 3, 2, 1),
                F.max_pool2d(xp.contiguous(memory_format=torch.channels_last), 3, 2, 1),
                # 1-D, 2-D and 3-D windows (xp as an unbatched [C, D, H, W] for the 3-D ones); the
                # avg_pool2d's last window clipped by ceil_mode and not counting the padding
                F.avg_pool1d(xg, 3, 2, 1), F.max_pool1d(xg, 3, 2, 1),
                F.avg_pool2d(xp, 3, 2, 1, ceil_mode=True, count_include_pad=False),
                *([] if no_avg_pool3d else [F.avg_pool3d(xp, (2, 2, kw), stride=(1, 1, 2), padding=(1, 1, kw // 2))]),
                F.max_pool3d(xp, (2, 2, kw), stride=(1, 1, 2), padding=(0, 1, kw // 2), dilation=(2, 1, 1)),
                x.mean(dim=-1),
                x.sum(dim=-1),
                x.var(dim=-1), x.std(dim=-1, unbiased=False), torch.linalg.vector_norm(x, dim=-1),
                torch.logsumexp(x, dim=-1), F.instance_norm(xp), x.argmax(dim=-1), *x.max(dim=-1),
                # over the channels (dim 1): rows along a strided dim, a thread per row where there are
                # 4096 rows or more
                x4.sum(dim=1), torch.softmax(xg, dim=1),
                torch.relu(x),
                # in place (torchvision's ReLU(inplace=True)) on a copy, NCHW and channels-last, and
                # out of place on channels-last memory
                F.relu(x.clone(), inplace=True),
                F.relu(xp.clone(memory_format=torch.channels_last), inplace=True),
                torch.relu(xp.clone(memory_format=torch.channels_last)),
                F.silu(x.clone(), inplace=True),
                F.gelu(x),
                F.gelu(x, approximate="tanh"),
                F.silu(x),
                torch.sigmoid(x),
                torch.tanh(x),
                -x,
                # of a slice, into a dense output (gathered): every other row of xp, and the upper
                # half of xr's 16-element rows (rotate_half's -x[..., d/2:]: vector loads)
                -xp[:, :, 1:], -xr[..., 8:],
                # flatten of a transposed tensor copies (a reshape that cannot view)
                xr.transpose(1, 2).flatten(1),
                r,
                # scans: along the rows, over the channels (columns of the length), and a product of
                # values in [0.58, 0.71] (rsqrt of d: shrinks slowly, no overflow)
                torch.cumsum(x, dim=-1), torch.cumsum(xg, dim=1), torch.cumprod(r, dim=-1),
                # the rotary tables' cos and sin (d * d is x * y's card: only the sin is new)
                torch.cos(x), torch.sin(d * d),
                x.pow(2),
                x + b, x + y,
                x - b, x - y,
                x * b, x * y,
                x * self.scale64, x + self.scale64,
                # a number on the host: the trace keeps the row length as a 0-dim int64 constant,
                # which stays on the CPU (HostScalarConstants.h): the kernel takes its value
                x * x.shape[-1],
                # into a transposed (dense, permuted) output, as the decoders' rotary embedding:
                # q.transpose(1, 2) * cos and + a contiguous operand (whose contiguous() is a card too)
                xp.transpose(1, 2) * b, xp.transpose(1, 2) + xp.transpose(1, 2).contiguous(),
                # a channels-last and an NCHW operand, as SD's VAE attention residual: the output is
                # laid out as self, the other operand is read transposed (staged through tiles)
                xp.contiguous(memory_format=torch.channels_last) + xp.flip(0),
                xp.flip(0) + xp.contiguous(memory_format=torch.channels_last),
                # rotate_half's cat of a negated upper half and a sliced lower half; a cat on dim 0 of
                # three inputs of unequal sizes, two of them row slices (each its own range of blocks)
                torch.cat((-xr[..., 8:], xr[..., :8]), dim=-1), torch.cat((x, y[:1], x[1:]), dim=0),
                # repeat_kv's reshape of expanded keys (heads 2 x 3 repeats): a copy, not a view
                xp.transpose(1, 2)[:, :, None].expand(BATCH, 2, 3, CHANNELS, length).reshape(BATCH, 6, CHANNELS, length),
                x / db, x / d,
                acc, acc_cl,
                F.embedding(idx, self.embedding),
                x.to(torch.float16 if x.dtype == torch.float32 else torch.float32),
                # a decoder RMSNorm's `output.type_as(x)`: into the other dtype of the probe
                x.type_as(self.dtype_probe),
            )

    model = AllFamilies().to(device=device, dtype=dtype).eval()
    # After the dtype conversion, which would make it `dtype`: a traced Python number becomes such a
    # float64 0-dim constant, on the model's device. 1/sqrt(128) is not exact in 16 bits.
    model.register_buffer("scale64", torch.tensor(128 ** -0.5, dtype=torch.float64, device=device))
    # type_as's target: bfloat16 for float32 models, float32 otherwise (registered after .to() too).
    model.register_buffer("dtype_probe", torch.zeros(length, dtype=torch.bfloat16 if dtype == torch.float32
                                                     else torch.float32, device=device))
    inputs = (
        randn(ROWS, length),                          # x
        randn(ROWS, length),                          # y
        randn(length),                                # b: broadcast operand
        rand(ROWS, length, shift=2.0),                # d: divisor, far from 0
        rand(length, shift=2.0),                      # db: broadcast divisor
        randn(BATCH, CHANNELS, length),               # xg: group_norm / batch_norm input
        randn(BATCH, CHANNELS, 1, length),            # x4: adaptive_avg_pool2d and channels-last norms input
        randn(BATCH, CHANNELS, 2, length),            # xp: pooling input (NCHW and channels-last)
        randn(BATCH, CHANNELS, 16),                   # xr: rows to slice, whatever the length
    )
    inputs = tuple(t.to(device=device, dtype=dtype) for t in inputs)
    idx = torch.randint(0, VOCAB, (INDICES,), generator=generator).to(device)
    return model, inputs + (idx,)


def export_model(length, dtype_name, device, model_path, inputs_path):
    from kforge_export import export_for_kforge

    model, inputs = make_model(length, dtype_name, device)
    # The reload check compares TorchScript with eager on the same device: the same kernels run.
    export_for_kforge(model, inputs, model_path, inputs_path, atol=1e-3, rtol=1e-3)


class Case:
    def __init__(self, length, dtype):
        self.length, self.dtype = length, dtype
        self.lines = []      # one per card: what the test saw
        self.failures = []   # one per problem: why the test fails
        self.reported = []   # unsupported in-progress ops: printed, not failures
        self.cards_checked = 0
        self.seconds = 0.0

    @property
    def name(self):
        return f"L={self.length} {self.dtype}"

    def fail(self, what, reason):
        self.failures.append(f"{self.name} {what}: {reason}")


def run(cmd, timeout, env=None):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, 124, e.stdout or "", f"timed out after {timeout} s")


def qualified(card):
    return card["op"] + ("." + card["overload"] if card.get("overload") else "")


def tensor_summary(card):
    parts = []
    for arg in card["args"]:
        for t in arg.get("tensors", []) or []:
            parts.append(f"{t['dtype']}[{','.join(str(s) for s in t['sizes'])}]")
    return " ".join(parts)


def one_line(text, limit=300):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def check_tree(case, card, tree, label):
    """Checks one card's tree; returns the status text for its line."""
    nodes = tree.get("nodes", [])
    if not nodes:
        case.fail(label, "the search tree has no node")
        return "FAIL: empty tree"
    root = nodes[0]
    problems = []
    if root["status"] == "compiled-only":
        problems.append(f"root {root['id']} is compiled-only: not validated (the worker saw no GPU?)")
    elif root["status"] != "passed":
        problems.append(f"root {root['id']} did not pass validation: {root['status']}: "
                        f"{one_line(root.get('failure_reason') or 'no reason')}")
    exhausted, unmeasured = 0, []
    for node in nodes:
        status, reason = node["status"], node.get("failure_reason", "")
        if status == "failed-proposal" and "untried" in reason:
            exhausted += 1
            continue
        if status == "passed" or node is root:
            continue
        if status in FAILED_STATUSES:
            problems.append(f"{node['id']} {status}: {one_line(reason or 'no reason')}")
        else:  # compiled-only (the worker measured nothing) or left in flight
            unmeasured.append(f"{node['id']} {status}")
    if unmeasured:
        problems.append("not validated on the GPU: " + ", ".join(unmeasured))
    for problem in problems:
        case.fail(label, problem)
    passed = [n for n in nodes if n["status"] == "passed"]
    best = max((n for n in passed if n.get("speedup")), key=lambda n: n["speedup"], default=None)
    text = "FAIL" if problems else "ok"
    text += f": {len(nodes)} nodes, {len(passed)} passed"
    if exhausted:
        text += f", {exhausted} no-untried"
    if problems:
        text += f", {len(problems)} bad"
    if best:
        text += f"; best {best['id']} {best['speedup']:.3f}x ({best['latency']['median_us']:.2f} us)"
    return text


def run_case(case, kforge, workdir, env, ops=None):
    started = time.monotonic()
    model_path = os.path.join(workdir, "model.pt")
    inputs_path = os.path.join(workdir, "inputs.pt")
    project = os.path.join(workdir, "project")
    capture = run([kforge, "capture", model_path, "--inputs", inputs_path, "-o", project, "--samples", "1",
                   "--quiet", "--json"], 600, env)
    if capture.returncode != 0:
        case.fail("capture", one_line(capture.stderr or f"exit {capture.returncode}"))
        return case
    cards = json.loads(capture.stdout)["cards"]

    counts = {}
    for card in cards:
        counts[qualified(card)] = counts.get(qualified(card), 0) + 1
    for op, expected in COVERED.items():
        if counts.get(op, 0) != expected:
            case.fail(op, f"captured {counts.get(op, 0)} card(s), expected {expected} (op fused away or missing?)")
    for op, expected in ROW_STATISTICS.items():
        got = sum(1 for card in cards if card["op"] == op)
        if got != expected:
            case.fail(op, f"captured {got} card(s), expected {expected} (op fused away or missing?)")

    selected = [card for card in cards if ops is None or qualified(card) in ops or card["op"] in ops]
    if not selected:
        case.fail("optimize", "no card of the ops selected with --ops")
        return case
    only = ["--cards"] + [card["id"] for card in selected] if ops is not None else []
    optimize = run([kforge, "optimize", project, "--iterations", str(ITERATIONS), "--seed", "1"] + only, 1800, env)
    skipped, errors = {}, {}
    for line in optimize.stderr.splitlines():
        match = re.match(r"kforge: (skip|error: )\s*([0-9a-fA-F]{8}) (\S+): (.*)$", line)
        if match:
            (skipped if match.group(1) == "skip" else errors)[match.group(2)] = match.group(4)
    # Exit 1 with no card error line: the cards named by --cards that failed are listed in one
    # "N of M cards failed" line; region cards the proposer refused are reported below, not failures.
    # Row statistics over rows of one element named by --cards are listed there too, with their reason.
    failed_line = re.search(r"kforge: error: (\d+) of \d+ cards failed", optimize.stderr)
    refused_regions = len(re.findall(r"[0-9a-f]{8} region: [^(]*\(built-in proposer", optimize.stderr))
    one_element = {m.group(1): m.group(2) for m in re.finditer(
        r"([0-9a-f]{8}) aten::\S+ \(built-in proposer, aten::\S+: ([^)]*" + ONE_ELEMENT_ROW + r"[^)]*)\)", optimize.stderr)}
    refused = refused_regions + len(one_element)
    only_refused_regions = failed_line is not None and int(failed_line.group(1)) == refused
    if optimize.returncode not in (0, 1) or (optimize.returncode == 1 and not errors and not only_refused_regions):
        case.fail("optimize", f"exit {optimize.returncode}: {one_line(optimize.stderr)}")

    for card in sorted(selected, key=lambda c: (qualified(c), tensor_summary(c))):
        op = qualified(card)
        label = f"{op} [{tensor_summary(card)}]"
        short = card["id"][:8]
        refusal = skipped.get(short) or errors.get(short)
        statistic = card["op"] in ROW_STATISTICS
        if op not in COVERED and op not in GENERATED and not statistic:
            status = "not covered (expected): " + one_line(skipped.get(short, "not searched"), 120)
        elif refusal and is_alias(card, refusal):
            # optimize skips such a card itself; one named by --cards (--ops) is refused as an error
            status = "alias (no work): " + one_line(refusal, 160)
        elif op in GENERATED and re.search(short + r" region: [^(]*\(built-in proposer", optimize.stderr):
            # named by --cards (--ops), a region the proposer does not cover fails its root (listed in
            # optimize's "N of M cards failed" line) instead of being skipped
            case.reported.append(f"{case.name} {label}: unsupported by the proposer")
            status = "unsupported (reported): the built-in proposer refused it"
        elif short in errors:
            case.fail(label, "optimize error: " + one_line(errors[short]))
            status = "FAIL: optimize error: " + one_line(errors[short], 160)
        elif statistic and (short in one_element or ONE_ELEMENT_ROW in skipped.get(short, "")):
            reason = one_element.get(short) or skipped[short]
            case.reported.append(f"{case.name} {label}: refused, rows of one element: {reason}")
            status = "one-element rows (reported): " + one_line(reason, 160)
        elif short in skipped:
            if op in IN_PROGRESS or op in GENERATED:
                case.reported.append(f"{case.name} {label}: unsupported by the proposer: {skipped[short]}")
                status = "unsupported (reported, in progress): " + one_line(skipped[short], 160)
            else:
                case.fail(label, "not searched: " + skipped[short])
                status = "FAIL: not searched: " + one_line(skipped[short], 160)
        else:
            case.cards_checked += 1
            tree = run([kforge, "tree", project, "--card", card["id"], "--json"], 120, env)
            if tree.returncode != 0:
                case.fail(label, "kforge tree: " + one_line(tree.stderr))
                status = "FAIL: no tree: " + one_line(tree.stderr, 160)
            else:
                status = check_tree(case, card, json.loads(tree.stdout), label)
        case.lines.append(f"{case.name:<16} {label:<72} {status}")
    case.seconds = time.monotonic() - started
    shutil.rmtree(project, ignore_errors=True)  # samples of finished cases do not pile up
    return case


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kforge", required=True, help="the kforge executable (it finds kforge-worker beside it)")
    parser.add_argument("--worker", help="kforge-worker to use instead (sets KFORGE_WORKER)")
    parser.add_argument("--jobs", type=int, default=4, help="models searched at once (default 4)")
    parser.add_argument("--lengths", type=int, nargs="+", default=list(ROW_LENGTHS))
    parser.add_argument("--dtypes", nargs="+", default=list(DTYPES), choices=DTYPES)
    parser.add_argument("--ops", nargs="+", metavar="OP",
                        help="search only these ops' cards (qualified names, e.g. aten::cat; default: all)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()

    unknown = sorted(set(args.ops or []) - set(COVERED) - GENERATED - set(ROW_STATISTICS))
    if unknown:
        print(f"error: --ops {' '.join(unknown)}: not among the covered ops ({', '.join(COVERED)})", file=sys.stderr)
        return 2

    import torch
    if not torch.cuda.is_available():
        print("skipped: no CUDA device (torch.cuda.is_available() is false)", flush=True)
        return 77
    if not os.access(args.kforge, os.X_OK):
        print(f"error: --kforge {args.kforge}: not an executable", file=sys.stderr)
        return 2
    kforge = os.path.abspath(args.kforge)
    env = dict(os.environ)
    if args.worker:
        env["KFORGE_WORKER"] = os.path.abspath(args.worker)

    tmp = tempfile.mkdtemp(prefix="kforge_builtin_families_")
    cases = []
    try:
        started = time.monotonic()
        print(f"built-in families on {torch.cuda.get_device_name(0)}, torch {torch.__version__}; "
              f"{ITERATIONS} iterations per card, {args.jobs} models at once", flush=True)
        # Models are exported one after the other (tracing is not meant to run on several
        # threads); the kforge runs then go in parallel.
        ready = []
        for length in args.lengths:
            for dtype in args.dtypes:
                case = Case(length, dtype)
                cases.append(case)
                workdir = os.path.join(tmp, f"L{length}_{dtype}")
                os.makedirs(workdir)
                try:
                    export_model(length, dtype, "cuda", os.path.join(workdir, "model.pt"),
                                 os.path.join(workdir, "inputs.pt"))
                    ready.append((case, workdir))
                except Exception as e:  # noqa: BLE001 - one line per case, the others go on
                    case.fail("export", one_line(f"{type(e).__name__}: {e}"))
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = {pool.submit(run_case, case, kforge, workdir, env, args.ops): case for case, workdir in ready}
            for future in concurrent.futures.as_completed(futures):
                case = futures[future]
                try:
                    future.result()
                except Exception as e:  # noqa: BLE001
                    case.fail("run", one_line(f"{type(e).__name__}: {e}"))
                for line in case.lines:
                    print(line, flush=True)
                print(f"{case.name}: {case.cards_checked} cards searched in {case.seconds:.0f} s, "
                      f"{len(case.failures)} failure(s)", flush=True)

        failures = [f for case in cases for f in case.failures]
        reported = [r for case in cases for r in case.reported]
        checked = sum(case.cards_checked for case in cases)
        print(f"\nsummary: {len(cases)} models, {checked} cards searched, {len(failures)} failure(s), "
              f"{len(reported)} in-progress op(s) reported unsupported, {time.monotonic() - started:.0f} s")
        for line in reported:
            print("  reported: " + line)
        if failures:
            print("FAILURES:")
            for line in failures:
                print("  " + line)
            return 1
        print("all built-in families passed")
        return 0
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
