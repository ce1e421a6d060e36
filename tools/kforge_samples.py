"""Read Kernel Forge sample files (PROJECT_DIR/samples/<card id>/call-<n>.pt) in Python.

    from kforge_samples import load_sample
    inputs, outputs = load_sample(path)   # two tuples: the op's arguments and its eager results

Samples are written by LibTorch's pickler. Tensors, numbers, strings and None load with plain
torch.load(path); list arguments (int[], float[], bool[], Tensor[]) are pickled through
torch.jit._pickle helpers, which load_sample allows explicitly (weights_only stays on).
"""
import torch
import torch.jit._pickle as _jit_pickle

_SAMPLE_GLOBALS = [
    _jit_pickle.build_intlist,
    _jit_pickle.build_doublelist,
    _jit_pickle.build_boollist,
    _jit_pickle.build_tensorlist,
    _jit_pickle.restore_type_tag,
]


def load_sample(path, map_location=None):
    with torch.serialization.safe_globals(_SAMPLE_GLOBALS):
        inputs, outputs = torch.load(path, map_location=map_location, weights_only=True)
    return inputs, outputs
