#include "gpu_evaluation/ChunkedTolerance.h"

#include <algorithm>
#include <functional>
#include <vector>

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

// Same-sized views of `tensors` at `start` (per dim, where the slice begins in the whole tensors).
using SliceJudge = std::function<bool(const std::vector<at::Tensor>&, const std::vector<std::int64_t>& start)>;

// Calls `judge` on views of `tensors` (same sizes) that together cover them, each at most `limit`
// elements where the dims allow it: the outermost dim larger than 1 (never `keep`) is cut first,
// a cut slice still too large is cut along its next dim. Slices come in row-major order of their
// starts. Stops at the first slice `judge` refuses.
bool forEachSlice(const std::vector<at::Tensor>& tensors, std::int64_t limit, std::optional<std::size_t> keep,
                  std::vector<std::int64_t>& start, std::size_t fromDim, const SliceJudge& judge)
{
    const at::Tensor& a = tensors.front();
    std::size_t d = fromDim;
    while (d < static_cast<std::size_t>(a.dim()) && (a.size(static_cast<std::int64_t>(d)) == 1 || keep == d))
        ++d;
    if (a.numel() <= limit || d >= static_cast<std::size_t>(a.dim()))
        return judge(tensors, start);
    const auto dim = static_cast<std::int64_t>(d);
    const std::int64_t perIndex = a.numel() / a.size(dim);
    const std::int64_t step = std::max<std::int64_t>(1, limit / std::max<std::int64_t>(perIndex, 1));
    const std::int64_t origin = start[d];
    for (std::int64_t i = 0; i < a.size(dim); i += step) {
        const std::int64_t n = std::min(step, a.size(dim) - i);
        std::vector<at::Tensor> slices;
        for (const at::Tensor& t : tensors)
            slices.push_back(t.narrow(dim, i, n));
        start[d] = origin + i;
        // A slice of one index along d that is still too large is cut along the dims after d.
        if (!forEachSlice(slices, limit, keep, start, n == 1 ? d + 1 : static_cast<std::size_t>(a.dim()), judge))
            return false;
    }
    start[d] = origin;
    return true;
}

bool forEachSlice(const std::vector<at::Tensor>& tensors, std::int64_t limit, std::optional<std::size_t> keep,
                  const SliceJudge& judge)
{
    std::vector<std::int64_t> start(static_cast<std::size_t>(tensors.front().dim()), 0);
    return forEachSlice(tensors, std::max<std::int64_t>(limit, 1), keep, start, 0, judge);
}

at::Tensor hostDouble(const at::Tensor& t)
{
    return t.to(at::kCPU, at::kDouble).contiguous();
}

// Adds one slice's result (its first bad element at slice coordinates) into the whole's.
void merge(ComparisonResult& whole, const ComparisonResult& slice, const std::vector<std::int64_t>& start,
           const std::vector<std::int64_t>& sizes)
{
    whole.elements += slice.elements;
    whole.mismatches += slice.mismatches;
    whole.maxAbsError = std::max(whole.maxAbsError, slice.maxAbsError);
    whole.maxRelError = std::max(whole.maxRelError, slice.maxRelError);
    if (slice.firstBadIndex < 0)
        return;
    std::vector<std::int64_t> coordinates = slice.firstBadCoordinates;
    std::int64_t index = 0;
    for (std::size_t d = 0; d < sizes.size(); ++d) {
        if (d < coordinates.size())
            coordinates[d] += start[d];
        index = index * sizes[d] + (d < coordinates.size() ? coordinates[d] : 0);
    }
    if (whole.firstBadIndex >= 0 && whole.firstBadIndex <= index)
        return;
    whole.firstBadIndex = index;
    whole.firstBadCoordinates = coordinates;
    whole.firstBadGot = slice.firstBadGot;
    whole.firstBadExpected = slice.firstBadExpected;
    whole.reason = slice.reason;
}

ComparisonResult inSlices(const std::vector<at::Tensor>& tensors, std::int64_t limit, std::optional<std::size_t> keep,
                          const std::function<ComparisonResult(const std::vector<at::Tensor>&)>& compare)
{
    ComparisonResult whole;
    const std::vector<std::int64_t> sizes = tensors.front().sizes().vec();
    forEachSlice(tensors, limit, keep,
                 [&](const std::vector<at::Tensor>& slices, const std::vector<std::int64_t>& start) {
                     std::vector<at::Tensor> host;
                     for (const at::Tensor& t : slices)
                         host.push_back(hostDouble(t));
                     merge(whole, compare(host), start, sizes);
                     return true;
                 });
    whole.passed = whole.mismatches == 0;
    return whole;
}

} // namespace

bool allWithinTolerance(const at::Tensor& got, const at::Tensor& expected, const Tolerance& tolerance, double& maxAbs,
                        std::int64_t sliceElements)
{
    maxAbs = 0;
    return forEachSlice({got, expected}, sliceElements, std::nullopt,
                        [&](const std::vector<at::Tensor>& slices, const std::vector<std::int64_t>&) {
                            return sliceWithinTolerance(slices[0], slices[1], tolerance, maxAbs);
                        });
}

ComparisonResult compareInSlices(const at::Tensor& got, const at::Tensor& expected, const Tolerance& tolerance,
                                 std::int64_t sliceElements)
{
    return inSlices({got, expected}, sliceElements, std::nullopt, [&](const std::vector<at::Tensor>& h) {
        return compareOutputs(h[0].data_ptr<double>(), h[1].data_ptr<double>(), h[0].sizes().vec(), tolerance);
    });
}

ComparisonResult compareWithGoldenInSlices(const at::Tensor& got, const at::Tensor& eager, const at::Tensor& golden,
                                           const Tolerance& tolerance, double multiplier,
                                           std::optional<std::size_t> scannedDim, std::int64_t sliceElements)
{
    return inSlices({got, eager, golden}, sliceElements, scannedDim, [&](const std::vector<at::Tensor>& h) {
        const std::vector<std::int64_t> sizes = h[0].sizes().vec();
        return scannedDim ? compareScanWithGolden(h[0].data_ptr<double>(), h[1].data_ptr<double>(),
                                                  h[2].data_ptr<double>(), sizes, *scannedDim, tolerance, multiplier)
                          : compareWithGolden(h[0].data_ptr<double>(), h[1].data_ptr<double>(), h[2].data_ptr<double>(),
                                              sizes, tolerance, multiplier);
    });
}

} // namespace kforge::core
