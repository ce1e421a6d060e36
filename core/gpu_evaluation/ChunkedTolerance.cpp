#include "gpu_evaluation/ChunkedTolerance.h"

#include <algorithm>
#include <functional>

namespace kforge::core {

namespace {

bool sliceWithinTolerance(const at::Tensor& got, const at::Tensor& expected, const Tolerance& tolerance, double& maxAbs)
{
    const at::Tensor g = got.to(at::kDouble);
    const at::Tensor e = expected.to(g.device(), at::kDouble);
    const at::Tensor finite = g.isfinite() & e.isfinite();
    const at::Tensor diff = at::where(finite, (g - e).abs(), at::zeros_like(g));
    if (diff.numel())
        maxAbs = std::max(maxAbs, diff.max().item<double>());
    at::Tensor ok = (g.isnan() & e.isnan()) | (g.isinf() & e.isinf() & (g == e));
    ok = ok | (finite & (tolerance.exact ? (g == e) : (diff <= tolerance.atol + tolerance.rtol * e.abs())));
    return ok.all().item<bool>();
}

// Calls `judge` on views of `a` and `b` that together cover them, each at most `limit` elements
// where a single innermost row allows it, slicing the outermost dim larger than 1 first. Stops at
// the first slice `judge` refuses.
bool forEachSlice(const at::Tensor& a, const at::Tensor& b, std::int64_t limit,
                  const std::function<bool(const at::Tensor&, const at::Tensor&)>& judge)
{
    if (a.numel() <= limit || a.dim() <= 1)
        return judge(a, b);
    std::int64_t d = 0;
    while (d + 1 < a.dim() && a.size(d) == 1)
        ++d;
    const std::int64_t inner = a.numel() / a.size(d);
    if (d + 1 == a.dim()) // only the innermost dim is larger than 1
        return judge(a, b);
    const std::int64_t step = std::max<std::int64_t>(1, limit / inner);
    for (std::int64_t i = 0; i < a.size(d); i += step) {
        const std::int64_t n = std::min(step, a.size(d) - i);
        if (!forEachSlice(a.narrow(d, i, n), b.narrow(d, i, n), limit, judge))
            return false;
    }
    return true;
}

} // namespace

bool allWithinTolerance(const at::Tensor& got, const at::Tensor& expected, const Tolerance& tolerance, double& maxAbs,
                        std::int64_t sliceElements)
{
    maxAbs = 0;
    return forEachSlice(
        got, expected, std::max<std::int64_t>(sliceElements, 1),
        [&](const at::Tensor& g, const at::Tensor& e) { return sliceWithinTolerance(g, e, tolerance, maxAbs); });
}

} // namespace kforge::core
