#pragma once
// Code pieces the row-region kernels share (RowRegionFamily.cpp, RowRegionSplit.cpp,
// RowRegionColumns.cpp): how a row's values combine for each kind of reduction. A walk keeps an
// accumulator `float acc` and, for a pair reduction (argmax, argmin), `int at`, the index of the
// element acc came from. Internal to kforge_builtin_proposer.

#include "pointwise/PointwiseExpression.h"

#include <string>

namespace kforge::core::row_code {

/// "sum", "prod", "max", "min", "argmax" or "argmin": the suffix of the kind's device functions.
const char* reduceName(PointwiseReduce r);
/// The CUDA expression combining values `a` and `b` (max and min NaN-propagating, as eager's); not
/// for a pair reduction, whose values combine with their indices (fold).
std::string combine(PointwiseReduce r, const std::string& a, const std::string& b);
/// The declarations of a walk's accumulator at its start value, each line starting with `indent`:
/// 0, 1, -inf or +inf; a pair's index starts past every column, so any element wins over it.
std::string accumulators(PointwiseReduce r, const std::string& indent);
/// The statement folding `value` (and, for a pair, its row column `index`) into the accumulator.
std::string fold(PointwiseReduce r, const std::string& value, const std::string& index);
/// The device functions of kind `r`: for a pair `void kfPair_<kind>(float& v, int& i, float w, int j)`,
/// (w, j) folded into (v, i) by eager's rule; then kfRow_<kind>, which combines a thread's
/// accumulator over the THREADS threads of its row group in a fixed order (every thread of the block
/// calls it the same number of times and each gets its group's result; THREADS >= 32, so a warp
/// never spans two rows): `float kfRow_<kind>(float v, float* scratch)`, or for a pair
/// `void kfRow_<kind>(float& v, int& i, float* scratch, int* scratch_at)`. scratch (and scratch_at)
/// hold WARPS values per group.
std::string reduceFunctions(PointwiseReduce r);
/// The statement that combines the accumulator over the row group through kfRow_<kind>, with the
/// block's `scratch` (and `scratch_at`) arrays.
std::string rowCombine(PointwiseReduce r);

} // namespace kforge::core::row_code
