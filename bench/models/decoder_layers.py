"""Gemma-like and Qwen-like decoder layers from transformers' own classes, bf16, random weights.

The layers are transformers' GemmaDecoderLayer / Qwen2DecoderLayer built from GemmaConfig /
Qwen2Config at a real model's sizes, with attn_implementation="eager": attention is matmul ->
+ causal mask -> softmax(dim=-1, dtype=float32) -> cast to bf16 -> matmul, so softmax is a real
operator (sdpa would hide it inside a fused vendor kernel). Two layers, then the final norm.

Left out: the token embedding and lm_head (vocabulary 256000 x 2048 in bf16 is 1 GiB each; they
are a gather and one GEMM, not what the layers' cards are about). The input is therefore the
embedded hidden states [batch, seq, hidden] (random normal), and the module computes the rotary
tables, the position ids and the additive causal mask itself (the mask and ids are buffers, as
the model would build them for a batch without padding).

- Gemma: Gemma 2B's configuration (hidden 2048, 8 heads x 256 head_dim, 1 KV head, GeGLU MLP
  intermediate 16384 with gelu tanh, RMSNorm eps 1e-6 with (1 + weight), rope theta 10000,
  vocabulary 256000), batch 4.
- Qwen: Qwen2.5-3B's configuration (hidden 2048, 16 heads x 128, 2 KV heads, SiLU-gated MLP
  intermediate 11008, q/k/v biases, RMSNorm eps 1e-6, rope theta 1e6, vocabulary 151936), batch 4.

Two layers in bf16: Gemma 0.44 GB, Qwen 0.31 GB of weights (the TorchScript file's size).
"""
import torch
import torch.nn as nn

LAYERS = 2
BATCH = 4

DESCRIPTIONS = {
    "gemma": (f"{LAYERS} transformers GemmaDecoderLayer (Gemma 2B sizes: hidden 2048, 8x256 heads, 1 KV head, "
              "GeGLU 16384) + final RMSNorm, eager attention, no embedding/lm_head, batch 4, seq {seq}, bfloat16"),
    "qwen": (f"{LAYERS} transformers Qwen2DecoderLayer (Qwen2.5-3B sizes: hidden 2048, 16x128 heads, 2 KV heads, "
             "SwiGLU 11008) + final RMSNorm, eager attention, no embedding/lm_head, batch 4, seq {seq}, bfloat16"),
}


def gemma_config():
    from transformers import GemmaConfig
    return GemmaConfig(vocab_size=256000, hidden_size=2048, intermediate_size=16384, num_hidden_layers=LAYERS,
                       num_attention_heads=8, num_key_value_heads=1, head_dim=256, hidden_act="gelu_pytorch_tanh",
                       max_position_embeddings=8192, rms_norm_eps=1e-6, attention_bias=False,
                       rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
                       attn_implementation="eager")


def qwen_config():
    from transformers import Qwen2Config
    return Qwen2Config(vocab_size=151936, hidden_size=2048, intermediate_size=11008, num_hidden_layers=LAYERS,
                       num_attention_heads=16, num_key_value_heads=2, hidden_act="silu",
                       max_position_embeddings=32768, rms_norm_eps=1e-6, use_sliding_window=False,
                       rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
                       attn_implementation="eager")


class DecoderStack(nn.Module):
    """rotary tables -> LAYERS decoder layers -> final norm, over hidden states [B, S, D]."""

    def __init__(self, config, layer_cls, rotary_cls, norm_cls, seq, dtype):
        super().__init__()
        self.layers = nn.ModuleList(layer_cls(config, i) for i in range(config.num_hidden_layers))
        self.rotary_emb = rotary_cls(config=config)
        self.norm = norm_cls(config.hidden_size, eps=config.rms_norm_eps)
        self.register_buffer("position_ids", torch.arange(seq).unsqueeze(0), persistent=False)
        # The additive causal mask transformers builds for eager attention: 0 on and below the
        # diagonal, the dtype's lowest value above it, shape [1, 1, S, S].
        mask = torch.full((seq, seq), torch.finfo(dtype).min, dtype=dtype).triu(1)
        self.register_buffer("causal_mask", mask[None, None], persistent=False)

    def forward(self, hidden_states):
        position_embeddings = self.rotary_emb(hidden_states, self.position_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states, attention_mask=self.causal_mask, position_ids=self.position_ids,
                                  position_embeddings=position_embeddings)
        return self.norm(hidden_states)


def _build(kind, seq, device, dtype, batch):
    dtype = dtype or torch.bfloat16
    torch.manual_seed(0)
    if kind == "gemma":
        from transformers.models.gemma import modeling_gemma as m
        config = gemma_config()
        model = DecoderStack(config, m.GemmaDecoderLayer, m.GemmaRotaryEmbedding, m.GemmaRMSNorm, seq, dtype)
    else:
        from transformers.models.qwen2 import modeling_qwen2 as m
        config = qwen_config()
        model = DecoderStack(config, m.Qwen2DecoderLayer, m.Qwen2RotaryEmbedding, m.Qwen2RMSNorm, seq, dtype)
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():  # RMSNorm weights start at 0 (Gemma's 1 + w) or 1 (Qwen): make them random
        for name, param in model.named_parameters():
            if name.endswith("norm.weight"):
                param.copy_(torch.randn(param.shape, generator=generator) * 0.1 + (0.0 if kind == "gemma" else 1.0))
    # The rotary inverse frequencies stay float32 (transformers computes them in float32 and the
    # rotary forward casts them to float anyway); .to(dtype) would round them to bf16.
    rotary = {name: buffer.clone() for name, buffer in model.rotary_emb.named_buffers()}
    model = model.to(device=device, dtype=dtype).eval().requires_grad_(False)
    for name, buffer in rotary.items():
        setattr(model.rotary_emb, name, buffer.to(device))
    x = torch.randn(batch or BATCH, seq, config.hidden_size, generator=generator)
    return model, (x.to(device=device, dtype=dtype),)


def gemma_s512(device="cuda", dtype=None, batch=None):
    return _build("gemma", 512, device, dtype, batch)


def gemma_s2048(device="cuda", dtype=None, batch=None):
    return _build("gemma", 2048, device, dtype, batch)


def qwen_s512(device="cuda", dtype=None, batch=None):
    return _build("qwen", 512, device, dtype, batch)


def qwen_s2048(device="cuda", dtype=None, batch=None):
    return _build("qwen", 2048, device, dtype, batch)
