#pragma once
// Output comparisons of tensors of any size with float64 temporaries of a bounded size (issue 27:
// the evaluator's memory stays a small multiple of the card's tensors; a 6 GiB output compared
// whole in float64 needed tens of GiB of temporaries on the device and on the host).
//
// allWithinTolerance: compareOutputs' acceptance rule (checks/OutputComparison.h) evaluated with
// ATen on the tensors' device, slice by slice: the common case, a candidate that passes.
// compareInSlices / compareWithGoldenInSlices: the element-by-element comparisons that describe a
// failure or judge it against float64, on the host one slice at a time, merged into one result
// over the whole tensors.

#include "checks/OutputComparison.h"
#include "checks/Tolerance.h"

#include <ATen/ATen.h>

#include <cstddef>
#include <cstdint>
#include <optional>

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

/// compareOutputs(got, expected) over the whole tensors (same sizes, any devices), computed on
/// float64 host copies of one slice at a time. Counts and maxima cover every element; the first
/// bad element is the one with the least row-major index, with its coordinates in the whole tensor.
ComparisonResult compareInSlices(const at::Tensor& got, const at::Tensor& expected, const Tolerance& tolerance,
                                 std::int64_t sliceElements = kToleranceSliceElements);

/// compareWithGolden(got, eager, golden), or compareScanWithGolden along `scannedDim` (whose lines
/// no slice cuts), over the whole tensors, likewise slice by slice.
ComparisonResult compareWithGoldenInSlices(const at::Tensor& got, const at::Tensor& eager, const at::Tensor& golden,
                                           const Tolerance& tolerance, double multiplier,
                                           std::optional<std::size_t> scannedDim,
                                           std::int64_t sliceElements = kToleranceSliceElements);

} // namespace kforge::core
