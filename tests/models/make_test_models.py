#!/usr/bin/env python3
"""Writes the TorchScript test models and inputs that the Kernel Forge tests capture.

Run with the same torch as the build (2.11). Usage: make_test_models.py OUTPUT_DIR
Every file is regenerated from a fixed seed, so no binary fixture is committed.
"""
import copy
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvGroupNormBlock(nn.Module):
    """conv + group_norm + relu + adaptive_avg_pool2d (the SD / ResNet-head pattern)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.norm = nn.GroupNorm(4, 8)

    def forward(self, x):
        return F.adaptive_avg_pool2d(F.relu(self.norm(self.conv(x))), 1)


class TransformerBlock(nn.Module):
    """Pre-norm attention + MLP: layer_norm, linear, softmax, gelu, residual add."""

    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        # unflatten/flatten with constant sizes: the trace holds no shape arithmetic.
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q = q.unflatten(-1, (self.heads, -1)).transpose(1, 2)
        k = k.unflatten(-1, (self.heads, -1)).transpose(1, 2)
        v = v.unflatten(-1, (self.heads, -1)).transpose(1, 2)
        attn = torch.softmax(q @ k.transpose(-2, -1) * self.scale, dim=-1)
        x = x + self.proj((attn @ v).transpose(1, 2).flatten(2))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class BasicBlock(nn.Module):
    """ResNet basic block: conv-bn-relu-conv-bn, identity add, relu."""

    def __init__(self, channels=8):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + x)


class TwoInputs(nn.Module):
    """Two inputs, one of them integer token ids (embedding), for the inputs-file path."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 16)

    def forward(self, ids, scale):
        return self.embed(ids) * scale


class SoftmaxOnly(nn.Module):
    """One softmax over the last dimension: the card the evaluator tests use."""

    def forward(self, x):
        return torch.softmax(x, dim=-1)


class InPlaceAdd(nn.Module):
    """y = 2 * x, then y.add_(x) in place: the in-place card of the evaluator tests."""

    def forward(self, x):
        y = x * 2.0
        y.add_(x)
        return y


class MixedPrecisionNorm(nn.Module):
    """An RMSNorm computed in `compute` precision and cast back to the input's dtype."""

    def __init__(self, dim, compute):
        super().__init__()
        self.compute = compute
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x):
        h = x.to(self.compute)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
        return self.weight * h.to(x.dtype)


class MixedPrecisionBlock(nn.Module):
    """A decoder-style block traced in bfloat16, with the casts transformers models make: an RMSNorm
    computed in `compute` precision, a causal mask made with torch.full in the input's dtype, and a
    softmax in `compute` precision. The trace bakes each of these dtypes in as a constant, which
    the float64 reference run (core/capture/Float64Model.h) has to undo. With compute=float64 and
    float64 weights and input, eager Python gives the true float64 result to test against."""

    def __init__(self, dim=32, heads=4, compute=torch.float32):
        super().__init__()
        self.heads, self.compute = heads, compute
        self.norm = MixedPrecisionNorm(dim, compute)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)
        self.register_buffer("positions", torch.arange(8))  # integer: stays int64 in float64

    def forward(self, x):
        h = self.norm(x)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        q, k, v = (t.unflatten(-1, (self.heads, -1)).transpose(1, 2) for t in (q, k, v))
        mask = torch.full((8, 8), torch.finfo(x.dtype).min, dtype=x.dtype, device=x.device).triu(1)
        scores = q @ k.transpose(-2, -1) * 0.25 + mask + self.positions.to(x.dtype) * 0.01
        attn = torch.softmax(scores, dim=-1, dtype=self.compute).to(x.dtype)
        return x + self.proj((attn @ v).transpose(1, 2).flatten(2))


class MixedPrecisionStack(nn.Module):
    """The block one level down, as a decoder layer sits in a model: the norm's casts are two calls
    deep, where a float64 run that inlines only one level would leave them in bfloat16."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([MixedPrecisionBlock()])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class RotateHalf(nn.Module):
    def forward(self, x):
        x1 = x[..., : x.shape[-1] // 2]
        x2 = x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)


class SizeArithmetic(nn.Module):
    """rotate_half and repeat_kv as transformers write them, one in a submodule. The trace turns
    `x.shape[-1] // 2` and `heads * 2` into 0-dim int64 tensor constants feeding aten::Int: shape
    arithmetic that, with the constants loaded onto the GPU, would run on the GPU and synchronize the
    forward (HostScalarConstants.h)."""

    def __init__(self):
        super().__init__()
        self.rotate = RotateHalf()

    def forward(self, x):
        batch, heads, seq, dim = x.shape
        rotated = self.rotate(x)
        repeated = rotated[:, :, None].expand(batch, heads, 2, seq, dim).reshape(batch, heads * 2, seq, dim)
        return repeated * 0.5


class WaitsForTheGpu(nn.Module):
    """A forward that reads GPU data on the host: nonzero's output size depends on the values, so
    the host waits for the GPU before it can go on (DeviceWaits.h)."""

    def forward(self, x):
        y = torch.relu(x)
        return y * 2, torch.nonzero(y > 1)


class BnReluAdd(nn.Module):
    """conv -> batch_norm -> relu_ -> add(identity): the fused region batch_norm -> relu_ -> add."""

    def __init__(self, channels=8):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu(self.bn(self.conv(x))) + x


class BnReluAddStack(nn.Module):
    """Two BnReluAdd layers of one shape: one region with two occurrences."""

    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(BnReluAdd(), BnReluAdd())

    def forward(self, x):
        return self.layers(x)


class RmsNormWrittenOut(nn.Module):
    """RMSNorm as decoders write it: pow, mean, add, rsqrt, mul, mul by the weight."""

    def __init__(self, dim=32):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))


class ScaledMaskedSoftmax(nn.Module):
    """Attention scores: scale * (q @ k^T) + mask -> softmax -> to(bfloat16), matmuls around it."""

    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.full((8, 8), -1e4).triu(1))

    def forward(self, q, k, v):
        scores = q @ k.transpose(-2, -1)
        attn = torch.softmax(scores * 0.25 + self.mask, dim=-1).to(torch.bfloat16)
        return attn @ v.to(torch.bfloat16)


class GeluTanhWrittenOut(nn.Module):
    """GELU with tanh written out as 8 elementwise ops."""

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * x.pow(3))))


class SwiGluMlp(nn.Module):
    """down(silu(gate(x)) * up(x)): the linears bound the region silu -> mul."""

    def __init__(self, dim=32, hidden=64):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class ResidualNorm(nn.Module):
    """h = x + fc(x); fc2(layer_norm(h)) + h: the region add -> layer_norm, and a last add that a
    path through fc2 keeps out of it (convexity)."""

    def __init__(self, dim=32):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.fc2 = nn.Linear(dim, dim)

    def forward(self, x):
        h = x + self.fc(x)
        return self.fc2(self.norm(h)) + h


class SqueezeExciteBlock(nn.Module):
    """MobileNetV3's batch_norm -> hardswish, then its squeeze-excite: avgpool -> 1x1 conv -> relu ->
    1x1 conv -> hardsigmoid -> mul by the block's input. The regions batch_norm -> hardswish and
    hardsigmoid -> mul (broadcast over H and W); the pool and the convolutions between them keep the
    two apart (a path through non-members)."""

    def __init__(self, channels=16, squeezed=8):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(channels, squeezed, 1)
        self.fc2 = nn.Conv2d(squeezed, channels, 1)

    def forward(self, x):
        x = F.hardswish(self.bn(x))
        scale = F.hardsigmoid(self.fc2(F.relu(self.fc1(self.pool(x)))))
        return x * scale


def save_region_models(out):
    """The models of the fused-region tests (tests/core/capture/RegionCaptureTest.cpp)."""
    trace(BnReluAddStack(), torch.randn(2, 8, 8, 8)).save(os.path.join(out, "bn_relu_add_stack.pt"))
    trace(RmsNormWrittenOut(), torch.randn(2, 8, 32)).save(os.path.join(out, "rms_norm_written_out.pt"))
    qkv = (torch.randn(2, 4, 8, 16), torch.randn(2, 4, 8, 16), torch.randn(2, 4, 8, 16))
    trace(ScaledMaskedSoftmax(), qkv).save(os.path.join(out, "scaled_masked_softmax.pt"))
    trace(GeluTanhWrittenOut(), torch.randn(4, 64)).save(os.path.join(out, "gelu_tanh_written_out.pt"))
    trace(SwiGluMlp(), torch.randn(2, 8, 32)).save(os.path.join(out, "swiglu_mlp.pt"))
    trace(ResidualNorm(), torch.randn(2, 8, 32)).save(os.path.join(out, "residual_norm.pt"))
    trace(SqueezeExciteBlock(), torch.randn(2, 16, 8, 8)).save(os.path.join(out, "squeeze_excite.pt"))


def save_mixed_precision_block(out):
    """mixed_precision_block.pt (traced in bfloat16) and mixed_precision_float64.pt: the tuple
    (bfloat16 input, the same block's output computed in float64 throughout)."""
    block = MixedPrecisionStack().eval().to(torch.bfloat16)
    x = torch.randn(2, 8, 32).to(torch.bfloat16)
    with torch.no_grad():
        reference = copy.deepcopy(block).double()  # the same bfloat16-rounded weights
        for module in reference.modules():
            if hasattr(module, "compute"):
                module.compute = torch.float64
        expected = reference(x.double())
        traced = torch.jit.trace(block, x)
    traced.save(os.path.join(out, "mixed_precision_block.pt"))
    torch.save((x, expected), os.path.join(out, "mixed_precision_float64.pt"))


def trace(module, example):
    module.eval()
    with torch.no_grad():
        # BatchNorm statistics that are not the defaults, so the op does real work.
        for m in module.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
        return torch.jit.trace(module, example)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    trace(ConvGroupNormBlock(), torch.randn(2, 3, 16, 16)).save(os.path.join(out, "conv_gn_block.pt"))
    trace(TransformerBlock(), torch.randn(2, 8, 32)).save(os.path.join(out, "transformer_block.pt"))
    trace(BasicBlock(), torch.randn(2, 8, 8, 8)).save(os.path.join(out, "basic_block.pt"))
    trace(SoftmaxOnly(), torch.randn(4, 8)).save(os.path.join(out, "softmax_only.pt"))
    trace(InPlaceAdd(), torch.randn(4, 8)).save(os.path.join(out, "inplace_add.pt"))
    ids = torch.randint(0, 100, (2, 5))
    scale = torch.randn(2, 5, 1)
    trace(TwoInputs(), (ids, scale)).save(os.path.join(out, "two_inputs.pt"))
    torch.save((ids, scale), os.path.join(out, "two_inputs_inputs.pt"))
    save_mixed_precision_block(out)
    trace(SizeArithmetic(), torch.randn(2, 4, 8, 16)).save(os.path.join(out, "size_arithmetic.pt"))
    trace(WaitsForTheGpu(), torch.randn(4, 8)).save(os.path.join(out, "waits_for_the_gpu.pt"))
    save_region_models(out)

    # Bad inputs for the error tests.
    torch.save(ConvGroupNormBlock().state_dict(), os.path.join(out, "state_dict_not_torchscript.pt"))
    with open(os.path.join(out, "conv_gn_block.pt"), "rb") as f:
        whole = f.read()
    with open(os.path.join(out, "truncated.pt"), "wb") as f:
        f.write(whole[: len(whole) // 2])
    with open(os.path.join(out, "garbage.pt"), "wb") as f:
        f.write(b"this is not a model\n" * 10)
    torch.save({"not": "tensors"}, os.path.join(out, "dict_inputs.pt"))


if __name__ == "__main__":
    main()
