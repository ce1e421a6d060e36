#include "checks/EarlyTimingStop.h"

#include <algorithm>
#include <cmath>

namespace kforge::core {

double thirdQuartile(std::vector<double> values)
{
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    const double rank = 0.75 * static_cast<double>(values.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(rank));
    const std::size_t above = std::min(below + 1, values.size() - 1);
    return values[below] + (rank - static_cast<double>(below)) * (values[above] - values[below]);
}

bool clearlySlowerThanBest(const std::vector<double>& pairedRatios, double bestSpeedup)
{
    if (!(bestSpeedup > 0) || pairedRatios.size() < static_cast<std::size_t>(kEarlyLookRepetitions))
        return false;
    return thirdQuartile(pairedRatios) < kClearlySlowerShare * bestSpeedup;
}

} // namespace kforge::core
