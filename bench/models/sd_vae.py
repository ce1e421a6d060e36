"""The entry of Stable Diffusion 3.5 Medium's VAE decoder: conv_in and the mid block, fp16.

Shapes from the model's VAE configuration (diffusers AutoencoderKL, vae/config.json of
stabilityai/stable-diffusion-3.5-medium): latent_channels 16, block_out_channels
[128, 256, 512, 512], layers_per_block 2, norm_num_groups 32, act_fn silu, mid block with
attention (one head of 512 channels), GroupNorm eps 1e-6. The decoder's conv_in maps the 16 latent
channels to 512 and its mid block runs at the latent resolution: ResnetBlock2D(512) ->
spatial self-attention -> ResnetBlock2D(512).

Resolution: a 512x512 image, latent 64x64, batch 2 (a 1024x1024 image gives 128x128 and a
16384x16384 attention matrix per image: 1 GiB in fp32, which makes every sample and validation
pass of the search slow without adding a new kind of card). group_norm then runs at
float16 [2, 512, 64, 64], G=32: the paper's SD 3.5 headline op, and the group_norm target of
bench/search_targets.py.

The modules are written here after diffusers' ResnetBlock2D and Attention with its classic
processor (no diffusers dependency): attention scores by baddbmm with alpha = 1/sqrt(512),
softmax upcast to float32 (the mid block's Attention has upcast_softmax=True), then cast back.
diffusers' divisions by output_scale_factor / rescale_output_factor (both 1.0) are left out.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CHANNELS = 512
GROUPS = 32
EPS = 1e-6
LATENT_CHANNELS = 16
LATENT_SIZE = 64
BATCH = 2

DESCRIPTION = (f"SD 3.5 Medium VAE decoder conv_in + mid block (ResnetBlock2D, 1-head spatial attention, "
               f"ResnetBlock2D), {CHANNELS} ch, GroupNorm {GROUPS}, latent {LATENT_CHANNELS}x{LATENT_SIZE}x"
               f"{LATENT_SIZE} (512x512 image), batch {BATCH}, float16")


class ResnetBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm1 = nn.GroupNorm(GROUPS, channels, eps=EPS)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.norm2 = nn.GroupNorm(GROUPS, channels, eps=EPS)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        h = self.conv1(F.silu(self.norm1(x)))
        h = self.conv2(F.silu(self.norm2(h)))
        return x + h


class SpatialSelfAttention(nn.Module):
    """One head over the H*W positions, as diffusers' Attention(512, heads=1, upcast_softmax=True)."""

    def __init__(self, channels):
        super().__init__()
        self.group_norm = nn.GroupNorm(GROUPS, channels, eps=EPS)
        self.to_q = nn.Linear(channels, channels)
        self.to_k = nn.Linear(channels, channels)
        self.to_v = nn.Linear(channels, channels)
        self.to_out = nn.Linear(channels, channels)
        self.scale = 1.0 / math.sqrt(channels)

    def forward(self, x):
        b, c, h, w = x.shape
        tokens = self.group_norm(x).view(b, c, h * w).transpose(1, 2)
        q, k, v = self.to_q(tokens), self.to_k(tokens), self.to_v(tokens)
        scores = torch.baddbmm(torch.empty(b, h * w, h * w, dtype=q.dtype, device=q.device), q, k.transpose(1, 2),
                               beta=0, alpha=self.scale)
        probs = scores.float().softmax(dim=-1).to(q.dtype)
        out = self.to_out(torch.bmm(probs, v))
        return out.transpose(1, 2).reshape(b, c, h, w) + x


class VaeDecoderEntry(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_in = nn.Conv2d(LATENT_CHANNELS, CHANNELS, 3, padding=1)
        self.resnet0 = ResnetBlock(CHANNELS)
        self.attention = SpatialSelfAttention(CHANNELS)
        self.resnet1 = ResnetBlock(CHANNELS)

    def forward(self, latent):
        return self.resnet1(self.attention(self.resnet0(self.conv_in(latent))))


def sd_block_fp16(device="cuda", dtype=None, batch=None):
    torch.manual_seed(0)
    model = VaeDecoderEntry()
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():  # random affine GroupNorm parameters, not the 1/0 defaults
        for module in model.modules():
            if isinstance(module, nn.GroupNorm):
                module.weight.copy_(torch.randn(module.weight.shape, generator=generator) * 0.5 + 1.0)
                module.bias.copy_(torch.randn(module.bias.shape, generator=generator) * 0.1)
    dtype = dtype or torch.float16
    model = model.to(device=device, dtype=dtype).eval().requires_grad_(False)
    latent = torch.randn(batch or BATCH, LATENT_CHANNELS, LATENT_SIZE, LATENT_SIZE, generator=generator)
    return model, (latent.to(device=device, dtype=dtype),)
