"""ResNet-50 (torchvision, random weights), batch 32, 3x224x224: fp32 NCHW and fp16 channels-last.

The same two configurations as the end-to-end anchors measured before the suite (eager 5.80 / 7.87 ms
by do_bench on an H200, 2026-11-29); the suite's own numbers: bench/results/2026-12-02-suite-h200-latest.md.
"""
import torch

DESCRIPTIONS = {
    "resnet50_fp32": "torchvision ResNet-50, random weights, batch 32, 3x224x224, float32 NCHW",
    "resnet50_fp16_cl": "torchvision ResNet-50, random weights, batch 32, 3x224x224, float16 channels-last",
}


def _resnet50(device, dtype, batch, channels_last):
    import torchvision  # here, so that the other models do not need it
    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None)
    # torchvision initializes BatchNorm to weight 1, bias 0 and running stats 0/1: batch_norm would
    # be an identity. Random statistics make the captured batch_norm cards do real work.
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                c = module.num_features
                module.weight.copy_(torch.rand(c, generator=generator) * 0.5 + 0.75)
                module.bias.copy_(torch.randn(c, generator=generator) * 0.1)
                module.running_mean.copy_(torch.randn(c, generator=generator) * 0.1)
                module.running_var.copy_(torch.rand(c, generator=generator) * 0.5 + 0.75)
    model = model.to(device=device, dtype=dtype).eval().requires_grad_(False)
    x = torch.randn(batch, 3, 224, 224, generator=generator).to(device=device, dtype=dtype)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    return model, (x,)


def resnet50_fp32(device="cuda", dtype=None, batch=None):
    return _resnet50(device, dtype or torch.float32, batch or 32, channels_last=False)


def resnet50_fp16_cl(device="cuda", dtype=None, batch=None):
    return _resnet50(device, dtype or torch.float16, batch or 32, channels_last=True)
