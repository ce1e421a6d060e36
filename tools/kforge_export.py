#!/usr/bin/env python3
"""Turn an eager PyTorch nn.Module and example inputs into the two files `kforge capture` reads:
a TorchScript model (MODEL.pt) and an inputs file (torch.save of a tuple of tensors).

    from kforge_export import export_for_kforge
    export_for_kforge(model, (x,), "model.pt", "inputs.pt")            # torch.jit.trace (default)
    export_for_kforge(model, (x,), "model.pt", "inputs.pt", script=True)  # torch.jit.script

then:  kforge capture model.pt --inputs inputs.pt -o my-project

The model is put in eval mode, exported under torch.no_grad(), loaded back and run on the same
inputs; the export fails loudly if the TorchScript outputs differ from eager ones (a trace that
baked in data-dependent control flow, for example). See docs/exporting-models.md.
"""
import argparse
import os
import sys

import torch


def _flatten(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _flatten(item)]
    if isinstance(value, dict):
        return [t for key in sorted(value) for t in _flatten(value[key])]
    return []


def export_for_kforge(model, example_inputs, model_path, inputs_path=None, script=False, atol=1e-5, rtol=1e-4):
    """Exports `model` to TorchScript at `model_path` and saves `example_inputs` to `inputs_path`.

    example_inputs: a tensor or a tuple of tensors, in the order forward() takes them, on the device
    and in the dtype the model should be captured with. Returns the loaded TorchScript module.
    """
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    if not all(isinstance(t, torch.Tensor) for t in example_inputs):
        raise TypeError("example_inputs must be tensors (kforge capture feeds tensors only)")
    model = model.eval()
    with torch.no_grad():
        exported = torch.jit.script(model) if script else torch.jit.trace(model, example_inputs)
        exported.save(model_path)
        reloaded = torch.jit.load(model_path, map_location=example_inputs[0].device)
        eager = _flatten(model(*example_inputs))
        scripted = _flatten(reloaded(*example_inputs))
    if len(eager) != len(scripted) or not all(
            # NaN where eager has NaN is reproduced (the variance of a one-element row)
            a.shape == b.shape and torch.allclose(a.float(), b.float(), atol=atol, rtol=rtol, equal_nan=True)
            for a, b in zip(eager, scripted)):
        raise RuntimeError(f"{model_path}: the TorchScript model does not reproduce the eager outputs "
                           "(data-dependent control flow? try script=True)")
    if inputs_path is not None:
        torch.save(tuple(t.detach().cpu() for t in example_inputs), inputs_path)
    return reloaded


def main(argv=None):
    parser = argparse.ArgumentParser(description="Export a module defined in a Python file for kforge capture.")
    parser.add_argument("source", help="Python file defining make_model() and make_inputs()")
    parser.add_argument("model_path")
    parser.add_argument("inputs_path")
    parser.add_argument("--script", action="store_true", help="use torch.jit.script instead of trace")
    args = parser.parse_args(argv)
    namespace = {"__name__": "kforge_export_source", "__file__": os.path.abspath(args.source)}
    with open(args.source) as f:
        exec(compile(f.read(), args.source, "exec"), namespace)
    for name in ("make_model", "make_inputs"):
        if name not in namespace:
            print(f"kforge_export: error: {args.source} defines no {name}()", file=sys.stderr)
            return 1
    export_for_kforge(namespace["make_model"](), namespace["make_inputs"](), args.model_path, args.inputs_path,
                      script=args.script)
    return 0


if __name__ == "__main__":
    sys.exit(main())
