#pragma once
// compareOutputs' acceptance rule (checks/OutputComparison.h) evaluated with ATen on the tensors'
// device, slice by slice: a candidate's output of any size is judged with float64 temporaries of a
// bounded size (issue 27: the evaluator's memory stays a small multiple of the card's tensors; a
// 6 GiB output compared whole in float64 needed tens of GiB of temporaries).

#include "checks/Tolerance.h"

#include <ATen/ATen.h>

#include <cstdint>

namespace kforge::core {

/// Elements per slice by default: 16 Mi, about 1 GiB of float64 and bool temporaries at most.
constexpr std::int64_t kToleranceSliceElements = std::int64_t{1} << 24;

/// True when every element of `got` is within `tolerance` of `expected` (same sizes; `expected` may
/// live on another device, each slice is moved to got's): NaN where eager has NaN, an infinity of
/// eager's sign, else |got - expected| <= atol + rtol * |expected| (bit-equal when exact). `maxAbs`:
/// the largest finite |got - expected| over the slices compared, every slice when it returns true;
/// it stops at the first slice with a failing element. Slices are views along the outermost dims
/// of at most `sliceElements` elements (one whole innermost row when a row alone is more).
bool allWithinTolerance(const at::Tensor& got, const at::Tensor& expected, const Tolerance& tolerance, double& maxAbs,
                        std::int64_t sliceElements = kToleranceSliceElements);

} // namespace kforge::core
