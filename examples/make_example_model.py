#!/usr/bin/env python3
"""The bundled example: a small diffusion-style block (conv stem, GroupNorm + SiLU, self-attention
with LayerNorm/softmax, GELU MLP, residual adds, pooled head), exported to TorchScript with example
inputs, exactly as docs/exporting-models.md describes for your own model.

Usage: make_example_model.py OUTPUT_DIR  -> OUTPUT_DIR/example_model.pt, OUTPUT_DIR/example_inputs.pt
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from kforge_export import export_for_kforge  # noqa: E402


class AttentionBlock(nn.Module):
    def __init__(self, channels, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = channels // heads
        self.scale = self.head_dim ** -0.5
        self.norm = nn.LayerNorm(channels)
        self.qkv = nn.Linear(channels, 3 * channels)
        self.out = nn.Linear(channels, channels)
        self.mlp_norm = nn.LayerNorm(channels)
        self.fc1 = nn.Linear(channels, 4 * channels)
        self.fc2 = nn.Linear(4 * channels, channels)

    def forward(self, x):
        # Constant-size reshapes (unflatten/flatten): the trace holds no shape arithmetic.
        qkv = self.qkv(self.norm(x)).unflatten(-1, (3, self.heads, self.head_dim))
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        attn = torch.softmax((q @ k.transpose(-2, -1)) * self.scale, dim=-1)
        x = x + self.out((attn @ v).transpose(1, 2).flatten(2))
        return x + self.fc2(F.gelu(self.fc1(self.mlp_norm(x))))


class ExampleModel(nn.Module):
    def __init__(self, channels=64, heads=4, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, stride=2, padding=1)
        self.norm1 = nn.GroupNorm(8, channels)
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.norm2 = nn.GroupNorm(8, channels)
        self.attention = AttentionBlock(channels, heads)
        self.head = nn.Linear(channels, classes)

    def forward(self, image):
        x = F.silu(self.norm1(self.stem(image)))
        x = x + F.silu(self.norm2(self.conv(x)))
        tokens = self.attention(x.flatten(2).transpose(1, 2))
        x = tokens.transpose(1, 2).reshape_as(x)
        return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))


# What tools/kforge_export.py reads from a model file: `kforge_export.py examples/make_example_model.py
# model.pt inputs.pt` exports this model as your own would be.
def make_model():
    torch.manual_seed(0)
    return ExampleModel()


def make_inputs():
    torch.manual_seed(1)
    return (torch.randn(4, 3, 32, 32),)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    export_for_kforge(make_model(), make_inputs(), os.path.join(out, "example_model.pt"),
                      os.path.join(out, "example_inputs.pt"))


if __name__ == "__main__":
    main()
