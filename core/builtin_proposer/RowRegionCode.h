#pragma once
// Code pieces the row-region kernels share (RowRegionFamily.cpp, RowRegionSplit.cpp): how a row's
// values combine for each kind of reduction. Internal to kforge_builtin_proposer.

#include "pointwise/PointwiseExpression.h"

#include <string>

namespace kforge::core::row_code {

/// "sum", "prod", "max" or "min": the suffix of the kind's combine function kfRow_<name>.
const char* reduceName(PointwiseReduce r);
/// The CUDA expression combining `a` and `b` (max and min NaN-propagating, as eager's).
std::string combine(PointwiseReduce r, const std::string& a, const std::string& b);
/// The CUDA literal a combine starts from: 0, 1, -inf or +inf.
const char* identity(PointwiseReduce r);
/// `float kfRow_<kind>(float v, float* scratch)`: v combined over the THREADS threads of one row
/// group, in a fixed order; every thread of the block calls it the same number of times and each
/// gets its group's result. THREADS >= 32, so a warp never spans two rows; scratch holds
/// WARPS floats per group.
std::string reduceFunction(PointwiseReduce r);

} // namespace kforge::core::row_code
