"""The benchmark models of the issue-7 suite (bench/suite.py): random weights, no downloads.

Each builder is `build(device="cuda", dtype=None, batch=None)` and returns `(module, inputs)`:
the module in eval mode with requires_grad off, on `device`, and a tuple of example input
tensors in the order forward() takes them. `dtype` and `batch` override the benchmark's own
(for CPU smoke tests: fp32 at a small batch); the weights come from torch.manual_seed(0), so a
build is the same on every machine.

    import models
    model, inputs = models.build("resnet50_fp32", "cuda")
    print(models.MODELS["resnet50_fp32"].description)
"""
import collections

from . import decoder_layers, resnet, sd_vae

Model = collections.namedtuple("Model", "name builder description")

# name -> Model; the order is the suite's default order (small and quick first).
MODELS = collections.OrderedDict((m.name, m) for m in (
    Model("resnet50_fp32", resnet.resnet50_fp32, resnet.DESCRIPTIONS["resnet50_fp32"]),
    Model("resnet50_fp16_cl", resnet.resnet50_fp16_cl, resnet.DESCRIPTIONS["resnet50_fp16_cl"]),
    Model("sd_block_fp16", sd_vae.sd_block_fp16, sd_vae.DESCRIPTION),
    Model("gemma_layers_bf16_s512", decoder_layers.gemma_s512, decoder_layers.DESCRIPTIONS["gemma"].format(seq=512)),
    Model("gemma_layers_bf16_s2048", decoder_layers.gemma_s2048,
          decoder_layers.DESCRIPTIONS["gemma"].format(seq=2048)),
    Model("qwen_layers_bf16_s512", decoder_layers.qwen_s512, decoder_layers.DESCRIPTIONS["qwen"].format(seq=512)),
    Model("qwen_layers_bf16_s2048", decoder_layers.qwen_s2048, decoder_layers.DESCRIPTIONS["qwen"].format(seq=2048)),
))


def build(name, device="cuda", dtype=None, batch=None):
    if name not in MODELS:
        raise KeyError(f"unknown model '{name}' (known: {', '.join(MODELS)})")
    return MODELS[name].builder(device=device, dtype=dtype, batch=batch)


def parameter_bytes(module):
    """Bytes of parameters and buffers: about the size of the TorchScript file."""
    tensors = list(module.parameters()) + list(module.buffers())
    return sum(t.numel() * t.element_size() for t in tensors)
