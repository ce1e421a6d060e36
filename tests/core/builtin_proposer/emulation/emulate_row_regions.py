#!/usr/bin/env python3
"""CPU test: row region kernels (RowRegionFamily), run by the host emulation of CUDA, against eager.

Chains that reduce rows, built and run in torch on the CPU as emulate_pointwise_regions.py builds
its chains and written as the region cards a capture would write: transformers' attention (scores *
scale + mask -> softmax(dtype=float32) -> to) with a causal mask and with fully masked rows (NaN
rows, as eager), Gemma's and Qwen's RMSNorm written out, residual add -> layer_norm with both
outputs, rms_norm after an add, log_softmax over an odd row length, amax without keepdim beside a
mean-centred output with NaNs in the input, a softmax of a transposed input over a per-row
scale, and rows split over blocks (a softmax over rows longer than registers hold, a residual add ->
layer_norm and an RMSNorm with a per-row output over few long rows), and rows of several trailing
dims (a layer_norm over [6, 40], the mean of every element, a sum over the last two dims of a permuted
input), and group_norm regions (group_norm -> silu as SD's blocks run it, NCHW and channels-last, and a
residual add -> group_norm without weight or bias), and row statistics (var and std with a NaN row,
var_mean with both outputs, vector norms of every order, logsumexp with infinite rows, prod, max of
every element, instance_norm -> relu, split std and logsumexp over few long rows), and rows of
leading and middle dims (sum and mean over a middle dim, softmax over NCHW channels with a NaN,
log_softmax over dim 0, var over a middle dim beside x - mean, amax over dims 0 and 2 of a permuted
input, a split mean over the batch of few long columns; a thread per row where 4096 rows or more are
adjacent in memory: a mean over a middle dim, a softmax over NCHW channels with a NaN, var beside x - mean,
a float32 sum of long rows that cancel and an infinite one),
and index reductions (argmax with ties and a row of two NaNs, max.dim over a middle dim with both
outputs, a split argmin of every element, min.dim over NCHW channels a thread per row; argmax and
argmin of rows with ties at several positions, NaN first, last and several, rows all -inf, all +inf
and all equal, the same rows split over blocks by max.dim), and column parts (threads sharing a row
of a middle dim: max.dim and a bf16 argmin of those rows, a softmax over NCHW channels with a NaN,
var beside x - mean). kforge_kernel_dump writes the built-in proposer's root candidate and a few neighbours; each is
compiled with the host C++ compiler against cuda_host_shim.h, run on the chain's inputs with its
launch plan (outputs poisoned with NaN) and compared with eager's outputs within
emulate_builtin_families.py's tolerances (NaN where eager has NaN).

Skipped (exit 77) without torch or a host C++ compiler.
Usage: emulate_row_regions.py --dump build/.../kforge_kernel_dump [--cuda-include DIR]
                              [--variants 3] [--only NAME] [--keep]
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
# emulate_pointwise_regions exits 77 (skipped) when torch is not installed.
from emulate_pointwise_regions import Chain, randn, run_cases  # noqa: E402
import torch  # noqa: E402


def attention_softmax(dtype=torch.bfloat16, keys=40, fully_masked_row=False):
    c = Chain()
    seq = 12
    scores = c.input(randn(2, 3, seq, keys, dtype=dtype, seed=30) * 4)
    mask = torch.full((seq, keys), torch.finfo(dtype).min, dtype=dtype).triu(1)
    if fully_masked_row:
        mask = mask.float().masked_fill(mask == torch.finfo(dtype).min, float("-inf")).to(dtype)
        mask[5, :] = float("-inf")  # eager gives NaN for the whole row
    m = c.input(mask[None, None])
    scaled = c.call("mul", "Scalar", self=scores, other=0.125)
    masked = c.call("add", "Tensor", self=scaled, other=m, alpha=1)
    p = c.call("softmax", "int", self=masked, dim=-1, dtype=torch.float32)
    c.output(c.call("to", "dtype", self=p, dtype=dtype))
    return c


def attention_softmax_f16_odd_keys():
    return attention_softmax(torch.float16, keys=37)


def attention_softmax_f32_fully_masked_row():
    return attention_softmax(torch.float32, keys=48, fully_masked_row=True)


def gemma_rms_norm_written_out():
    c = Chain()
    x = c.input(randn(4, 7, 96, dtype=torch.bfloat16, seed=31) * 2)
    w = c.input(randn(96, dtype=torch.bfloat16, seed=32) * 0.1)
    xf = c.call("to", "dtype", self=x, dtype=torch.float32)
    var = c.call("mean", "dim", self=c.call("pow", "Tensor_Scalar", self=xf, exponent=2), dim=[-1], keepdim=True)
    r = c.call("rsqrt", self=c.call("add", "Scalar", self=var, other=1e-6, alpha=1))
    normed = c.call("mul", "Tensor", self=xf, other=r)
    scale = c.call("add", "Scalar", self=c.call("to", "dtype", self=w, dtype=torch.float32), other=1.0, alpha=1)
    c.output(c.call("type_as", self=c.call("mul", "Tensor", self=normed, other=scale), other=x))
    return c


def qwen_rms_norm_written_out():
    c = Chain()
    x = c.input(randn(5, 128, dtype=torch.bfloat16, seed=33) * 3)
    w = c.input(randn(128, dtype=torch.bfloat16, seed=34))
    h = c.call("to", "dtype", self=x, dtype=torch.float32)
    var = c.call("mean", "dim", self=c.call("pow", "Tensor_Scalar", self=h, exponent=2), dim=[-1], keepdim=True)
    normed = c.call("mul", "Tensor", self=h,
                    other=c.call("rsqrt", self=c.call("add", "Scalar", self=var, other=1e-6, alpha=1)))
    c.output(c.call("mul", "Tensor", self=w, other=c.call("to", "dtype", self=normed, dtype=torch.bfloat16)))
    return c


def residual_add_layer_norm():
    c = Chain()
    x, r = c.input(randn(33, 160, dtype=torch.float16, seed=35)), c.input(randn(33, 160, dtype=torch.float16, seed=36))
    w, b = c.input(randn(160, dtype=torch.float16, seed=37)), c.input(randn(160, dtype=torch.float16, seed=38))
    h = c.call("add", "Tensor", self=x, other=r, alpha=1)
    c.output(h)
    c.output(c.call("layer_norm", input=h, normalized_shape=[160], weight=w, bias=b, eps=1e-5, cudnn_enable=True))
    return c


def add_rms_norm():
    c = Chain()
    x, r = c.input(randn(9, 256, seed=39)), c.input(randn(9, 256, seed=40))
    w = c.input(randn(256, seed=41))
    h = c.call("add", "Tensor", self=x, other=r, alpha=1)
    c.output(c.call("rms_norm", input=h, normalized_shape=[256], weight=w, eps=1e-5))
    return c


def log_softmax_odd_rows():
    c = Chain()
    x = c.input(randn(50, 37, seed=42) * 5)
    c.output(c.call("_log_softmax", self=c.call("relu", self=x), dim=1, half_to_float=False))
    return c


def amax_and_centred_with_nans():
    c = Chain()
    xs = randn(6, 50, seed=43)
    xs[2, 17] = float("nan")
    x = c.input(xs)
    y = c.call("mul", "Scalar", self=x, other=2.0)
    c.output(c.call("amax", self=y, dim=[-1], keepdim=False))
    mean = c.call("mean", "dim", self=y, dim=[-1], keepdim=True)
    c.output(c.call("sub", "Tensor", self=y, other=mean, alpha=1))
    return c


def softmax_of_transposed_input_per_row_scale():
    c = Chain()
    x = c.input(randn(48, 40, seed=44).t())  # [40, 48], strides (1, 40)
    s = c.input(randn(40, 1, seed=45).abs())
    scaled = c.call("mul", "Tensor", self=x, other=s)
    c.output(c.call("_softmax", self=scaled, dim=-1, half_to_float=False))
    return c


def split_softmax_of_rows_longer_than_registers():
    c = Chain()
    xs = randn(2, 40000, seed=46) * 6
    xs[1, 123] = float("nan")  # one NaN row, as eager
    x = c.input(xs)
    c.output(c.call("_softmax", self=c.call("mul", "Scalar", self=x, other=0.5), dim=-1, half_to_float=False))
    return c


def split_residual_add_layer_norm_few_long_rows():
    c = Chain()
    x, r = c.input(randn(3, 9000, dtype=torch.bfloat16, seed=47)), c.input(randn(3, 9000, dtype=torch.bfloat16, seed=48))
    w, b = c.input(randn(9000, dtype=torch.bfloat16, seed=49)), c.input(randn(9000, dtype=torch.bfloat16, seed=50))
    h = c.call("add", "Tensor", self=x, other=r, alpha=1)
    c.output(h)
    c.output(c.call("layer_norm", input=h, normalized_shape=[9000], weight=w, bias=b, eps=1e-5, cudnn_enable=True))
    return c


def split_rms_norm_with_row_output():
    c = Chain()
    x = c.input(randn(2, 3, 8192, seed=51) * 2)
    xf = c.call("mul", "Scalar", self=x, other=1.5)
    ms = c.call("mean", "dim", self=c.call("pow", "Tensor_Scalar", self=xf, exponent=2), dim=[-1], keepdim=True)
    c.output(ms)
    c.output(c.call("mul", "Tensor", self=xf, other=c.call("rsqrt", self=c.call("add", "Scalar", self=ms, other=1e-6,
                                                                                   alpha=1))))
    return c


def layer_norm_over_two_trailing_dims():
    c = Chain()
    x = c.input(randn(5, 6, 40, dtype=torch.float16, seed=52) * 2)
    w, b = c.input(randn(6, 40, dtype=torch.float16, seed=53)), c.input(randn(6, 40, dtype=torch.float16, seed=54))
    c.output(c.call("layer_norm", input=c.call("relu", self=x), normalized_shape=[6, 40], weight=w, bias=b, eps=1e-5,
                    cudnn_enable=True))
    return c


def mean_of_every_element_split():
    c = Chain()
    x = c.input(randn(3, 5, 700, seed=55))
    c.output(c.call("mean", "dim", self=c.call("mul", "Scalar", self=x, other=3.0), dim=[0, 1, 2], keepdim=False))
    return c


def sum_over_two_dims_of_a_permuted_input():
    c = Chain()
    x = c.input(randn(7, 10, 12, seed=56).permute(0, 2, 1))  # [7, 12, 10], the row dims do not merge
    c.output(c.call("sum", "dim_IntList", self=c.call("exp", self=x), dim=[-2, -1], keepdim=True))
    return c


def group_norm_silu(channels_last=False):
    c = Chain()
    xs = randn(2, 12, 5, 7, dtype=torch.bfloat16, seed=57) * 3
    if channels_last:
        xs = xs.contiguous(memory_format=torch.channels_last)
    x = c.input(xs)
    w, b = c.input(randn(12, dtype=torch.bfloat16, seed=58)), c.input(randn(12, dtype=torch.bfloat16, seed=59))
    y = c.call("group_norm", input=x, num_groups=3, weight=w, bias=b, eps=1e-6, cudnn_enabled=True)
    c.output(c.call("silu", self=y))
    return c


def group_norm_silu_channels_last():
    return group_norm_silu(channels_last=True)


def residual_add_group_norm_without_affine():
    c = Chain()
    x, r = c.input(randn(3, 8, 30, seed=60)), c.input(randn(3, 8, 30, seed=61))
    h = c.call("add", "Tensor", self=x, other=r, alpha=1)
    c.output(c.call("group_norm", input=h, num_groups=4, weight=None, bias=None, eps=1e-5, cudnn_enabled=True))
    return c


def var_and_std_with_a_nan_row():
    c = Chain()
    xs = randn(6, 50, seed=62) * 3 + 1
    xs[4, 9] = float("nan")
    x = c.input(xs)
    c.output(c.call("var", "correction", self=x, dim=[-1], correction=1, keepdim=True))
    c.output(c.call("std", "correction", self=x, dim=[-1], correction=0, keepdim=False))
    return c


def var_mean_over_two_trailing_dims():
    c = Chain()
    x = c.input(randn(4, 6, 20, dtype=torch.bfloat16, seed=63) * 2)
    var, mean = c.call("var_mean", "correction", self=c.call("silu", self=x), dim=[-2, -1], correction=1, keepdim=True)
    c.output(var)
    c.output(mean)
    return c


def vector_norms_of_every_order():
    c = Chain()
    xs = randn(7, 33, dtype=torch.float16, seed=64)
    xs[2, 5] = 0
    xs[3, :] = 0
    x = c.input(xs)
    for order in [2, 1, float("inf"), float("-inf"), 0, 3.0]:
        c.output(c.call("linalg_vector_norm", self=x, ord=order, dim=[-1], keepdim=False))
    c.output(c.call("norm", "ScalarOpt_dim", self=x, p=2, dim=[-1], keepdim=True))
    return c


def logsumexp_with_infinite_rows():
    c = Chain()
    xs = randn(5, 40, dtype=torch.bfloat16, seed=65) * 4
    xs[1, :] = float("-inf")  # every element -inf: -inf, as eager
    xs[2, 7] = float("inf")  # an infinite max: inf
    x = c.input(xs)
    c.output(c.call("logsumexp", self=c.call("mul", "Scalar", self=x, other=2.0), dim=[-1], keepdim=False))
    return c


def prod_of_rows():
    c = Chain()
    x = c.input(1 + 0.05 * randn(8, 64, seed=66))
    c.output(c.call("prod", "dim_int", self=x, dim=-1, keepdim=True))
    return c


def max_of_every_element():
    c = Chain()
    x = c.input(randn(3, 100, dtype=torch.float16, seed=67))
    c.output(c.call("max", self=c.call("relu", self=x)))
    return c


def instance_norm_relu(dtype=torch.float32, affine=True):
    c = Chain()
    x = c.input(randn(2, 6, 5, 7, dtype=dtype, seed=68) * 2 + 1)
    w = c.input(randn(6, dtype=dtype, seed=69)) if affine else None
    b = c.input(randn(6, dtype=dtype, seed=70)) if affine else None
    y = c.call("instance_norm", input=x, weight=w, bias=b, running_mean=None, running_var=None, use_input_stats=True,
               momentum=0.1, eps=1e-5, cudnn_enabled=True)
    c.output(c.call("relu", self=y))
    return c


def instance_norm_bf16_without_affine():
    return instance_norm_relu(torch.bfloat16, affine=False)


def split_std_and_logsumexp_of_few_long_rows():
    c = Chain()
    x = c.input(randn(3, 9000, seed=71) * 2)
    c.output(c.call("std", "correction", self=x, dim=[-1], correction=1, keepdim=True))
    c.output(c.call("logsumexp", self=x, dim=[-1], keepdim=True))
    return c


def sum_over_a_middle_dim_with_and_without_keepdim():
    c = Chain()
    x = c.input(randn(4, 9, 13, seed=72))
    y = c.call("exp", self=c.call("mul", "Scalar", self=x, other=0.5))
    c.output(c.call("sum", "dim_IntList", self=y, dim=[1], keepdim=False))
    c.output(c.call("mean", "dim", self=y, dim=[1], keepdim=True))
    return c


def softmax_over_channels_of_nchw():
    c = Chain()
    xs = randn(2, 7, 5, 6, dtype=torch.float16, seed=73) * 3
    xs[1, 3, 2, 4] = float("nan")  # one NaN column, as eager
    x = c.input(xs)
    c.output(c.call("_softmax", self=x, dim=1, half_to_float=False))
    return c


def log_softmax_over_the_leading_dim():
    c = Chain()
    x = c.input(randn(6, 40, seed=74) * 2)
    c.output(c.call("_log_softmax", self=c.call("relu", self=x), dim=0, half_to_float=False))
    return c


def var_over_a_middle_dim_beside_a_centred_output():
    c = Chain()
    x = c.input(randn(3, 20, 11, dtype=torch.bfloat16, seed=75) * 2 + 1)
    mean = c.call("mean", "dim", self=x, dim=[1], keepdim=True)
    c.output(c.call("sub", "Tensor", self=x, other=mean, alpha=1))
    c.output(c.call("var", "correction", self=x, dim=[1], correction=1, keepdim=True))
    return c


def amax_over_leading_and_last_dims_of_a_transposed_input():
    c = Chain()
    x = c.input(randn(5, 8, 12, seed=76).permute(2, 0, 1))  # [12, 5, 8]
    c.output(c.call("amax", self=x, dim=[0, 2], keepdim=False))
    return c


def split_mean_over_the_batch_of_few_long_columns():
    c = Chain()
    x = c.input(randn(9000, 3, seed=77))
    c.output(c.call("mean", "dim", self=c.call("mul", "Scalar", self=x, other=2.0), dim=[0], keepdim=True))
    return c


def columns_mean_over_a_middle_dim():
    c = Chain()
    x = c.input(randn(4, 16, 1024, seed=78))
    c.output(c.call("mean", "dim", self=c.call("exp", self=x), dim=[1], keepdim=True))
    return c


def columns_softmax_over_nchw_channels():
    c = Chain()
    xs = randn(2, 5, 32, 64, dtype=torch.float16, seed=79) * 3
    xs[0, 2, 3, 4] = float("nan")
    x = c.input(xs)
    c.output(c.call("_softmax", self=x, dim=1, half_to_float=False))
    return c


def columns_var_beside_a_centred_output():
    c = Chain()
    x = c.input(randn(2, 12, 2048, dtype=torch.bfloat16, seed=80) * 2 + 1)
    mean = c.call("mean", "dim", self=x, dim=[1], keepdim=True)
    c.output(c.call("sub", "Tensor", self=x, other=mean, alpha=1))
    c.output(c.call("var", "correction", self=x, dim=[1], correction=1, keepdim=False))
    return c


def columns_sum_of_long_rows_that_cancel():
    # 4096 rows of 2048 float32 terms of magnitude 100, a thread each: summed one term at a time
    # without compensation, the error (~5e-3) exceeds the tolerance where a sum cancels to near 0.
    # The CPU's eager sums these strided rows one term at a time too, so the reference is the exact
    # sum rounded to float32.
    c = Chain()
    xs = randn(2, 2048, 2048, seed=83) * 100
    xs[1, 7, 5] = float("inf")  # an infinite sum stays inf (the compensation skips it)
    x = c.input(xs)
    c.output(c.call("sum", "dim_IntList", self=x, dim=[1], keepdim=False), reference=xs.double().sum(1).float())
    return c


def argmax_with_ties_and_a_nan_row():
    c = Chain()
    xs = (randn(6, 45, seed=81) * 2).round()  # small integers: ties, the first one wins
    xs[4, 30] = float("nan")
    xs[4, 40] = float("nan")  # the first NaN's index, as eager
    x = c.input(xs)
    c.output(c.call("argmax", self=c.call("mul", "Scalar", self=x, other=1.5), dim=-1, keepdim=False))
    return c


def max_dim_over_a_middle_dim_values_and_indices():
    c = Chain()
    x = c.input((randn(3, 17, 10, dtype=torch.bfloat16, seed=82) * 2).round())
    values, indices = c.call("max", "dim", self=x, dim=1, keepdim=True)
    c.output(values)
    c.output(indices)
    return c


def argmin_of_every_element_split():
    c = Chain()
    x = c.input(randn(3, 5000, seed=83))
    c.output(c.call("argmin", self=c.call("abs", self=x), dim=None, keepdim=False))
    return c


def columns_min_dim_over_channels():
    c = Chain()
    x = c.input(randn(2, 6, 48, 48, dtype=torch.float16, seed=84))
    values, indices = c.call("min", "dim", self=x, dim=1, keepdim=False)
    c.output(values)
    c.output(indices)
    return c


def index_rows(rows, length, seed):
    """Rows that test eager's index rule: small integers (ties at several positions), then rows with
    a NaN first, a NaN last, several NaNs, every element -inf, every element +inf, every element
    equal, the extreme tied at the first and last positions."""
    xs = (randn(rows, length, seed=seed) * 2).round()
    xs[0, 0] = float("nan")
    xs[1, -1] = float("nan")
    xs[2, [3, length // 2, length - 2]] = float("nan")
    xs[3, :] = float("-inf")
    xs[4, :] = float("inf")
    xs[5, :] = 7.0
    xs[6, :] = 0.0
    xs[6, [0, length - 1]] = 9.0
    xs[6, length // 3] = -9.0
    xs[7, [0, length - 1]] = -9.0
    return xs


def argmax_and_argmin_of_special_rows():
    c = Chain()
    x = c.input(index_rows(10, 300, seed=85))
    c.output(c.call("argmax", self=x, dim=-1, keepdim=True))
    c.output(c.call("argmin", self=x, dim=-1, keepdim=False))
    return c


def max_dim_of_special_rows_split_over_blocks():
    # 10 rows of 20000: few long rows, each cut over several blocks, ties and NaNs in different chunks.
    c = Chain()
    xs = index_rows(10, 20000, seed=86)
    xs[8, [100, 19000]] = 50.0  # the max in the first and the last chunk: the first wins
    x = c.input(xs)
    values, indices = c.call("max", "dim", self=x, dim=-1, keepdim=False)
    c.output(values)
    c.output(indices)
    return c


def columns_parts_max_dim_over_a_middle_dim():
    # [4, 64, 1024] over dim 1: 4096 rows of 64, a thread per row and part (column_parts 8).
    c = Chain()
    xs = index_rows(4096, 64, seed=87).reshape(4, 1024, 64).transpose(1, 2).contiguous()
    x = c.input(xs)
    values, indices = c.call("max", "dim", self=x, dim=1, keepdim=True)
    c.output(values)
    c.output(indices)
    return c


def columns_parts_argmin_over_a_middle_dim_bf16():
    c = Chain()
    xs = index_rows(4096, 40, seed=88).reshape(2, 2048, 40).transpose(1, 2).to(torch.bfloat16).contiguous()
    c.output(c.call("argmin", self=c.input(xs), dim=1, keepdim=False))
    return c


def columns_parts_softmax_over_nchw_channels():
    # 32 channels of 4096 positions: four threads share each row, each holding 8 channels.
    c = Chain()
    xs = randn(2, 32, 32, 64, dtype=torch.float16, seed=89) * 3
    xs[1, 20, 5, 6] = float("nan")
    c.output(c.call("_softmax", self=c.input(xs), dim=1, half_to_float=False))
    return c


def columns_parts_var_beside_a_centred_output():
    c = Chain()
    x = c.input(randn(2, 100, 2048, seed=90) * 2 + 1)
    mean = c.call("mean", "dim", self=x, dim=[1], keepdim=True)
    c.output(c.call("sub", "Tensor", self=x, other=mean, alpha=1))
    c.output(c.call("var", "correction", self=x, dim=[1], correction=1, keepdim=False))
    return c


CASES = {f.__name__: f for f in [attention_softmax, attention_softmax_f16_odd_keys,
                                 attention_softmax_f32_fully_masked_row, gemma_rms_norm_written_out,
                                 qwen_rms_norm_written_out, residual_add_layer_norm, add_rms_norm, log_softmax_odd_rows,
                                 amax_and_centred_with_nans, softmax_of_transposed_input_per_row_scale,
                                 split_softmax_of_rows_longer_than_registers,
                                 split_residual_add_layer_norm_few_long_rows, split_rms_norm_with_row_output,
                                 layer_norm_over_two_trailing_dims, mean_of_every_element_split,
                                 sum_over_two_dims_of_a_permuted_input, group_norm_silu, group_norm_silu_channels_last,
                                 residual_add_group_norm_without_affine, var_and_std_with_a_nan_row,
                                 var_mean_over_two_trailing_dims, vector_norms_of_every_order,
                                 logsumexp_with_infinite_rows, prod_of_rows, max_of_every_element, instance_norm_relu,
                                 instance_norm_bf16_without_affine, split_std_and_logsumexp_of_few_long_rows,
                                 sum_over_a_middle_dim_with_and_without_keepdim, softmax_over_channels_of_nchw,
                                 log_softmax_over_the_leading_dim, var_over_a_middle_dim_beside_a_centred_output,
                                 amax_over_leading_and_last_dims_of_a_transposed_input,
                                 split_mean_over_the_batch_of_few_long_columns, columns_mean_over_a_middle_dim,
                                 columns_softmax_over_nchw_channels, columns_var_beside_a_centred_output,
                                 columns_sum_of_long_rows_that_cancel,
                                 argmax_with_ties_and_a_nan_row, max_dim_over_a_middle_dim_values_and_indices,
                                 argmin_of_every_element_split, columns_min_dim_over_channels,
                                 argmax_and_argmin_of_special_rows, max_dim_of_special_rows_split_over_blocks,
                                 columns_parts_max_dim_over_a_middle_dim, columns_parts_argmin_over_a_middle_dim_bf16,
                                 columns_parts_softmax_over_nchw_channels,
                                 columns_parts_var_beside_a_centred_output]}


def main():
    return run_cases(__doc__.split("\n\n")[0], CASES, "kforge-row-regions-")


if __name__ == "__main__":
    sys.exit(main())
