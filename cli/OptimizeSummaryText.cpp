#include "OptimizeSummaryText.h"

#include "model/NodeRanking.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

namespace kforge::cli {
namespace {

// A skip reason without its details ("vendor-backed (cuBLAS/cuDNN): not searched by default" ->
// "vendor-backed (cuBLAS/cuDNN)"), so that cards skipped for one cause count together.
std::string reasonHead(const std::string& reason)
{
    const std::size_t colon = reason.find(": ");
    return colon == std::string::npos ? reason : reason.substr(0, colon);
}

} // namespace

std::string formatOptimizeSummary(const core::OptimizeSummary& summary, const std::vector<core::SkippedCard>& skipped,
                                  std::size_t fastest)
{
    std::size_t faster = 0;
    std::size_t notFaster = 0;
    std::size_t unmeasured = 0;
    std::size_t compileOnly = 0;
    double seconds = 0;
    std::vector<std::pair<double, std::string>> speedups;
    for (const core::CardOutcome& card : summary.cards) {
        seconds += card.seconds;
        if (card.failed())
            continue;
        compileOnly += card.compileOnly ? 1 : 0;
        const std::optional<double> speedup = card.best ? core::nodeSpeedup(*card.best) : std::nullopt;
        if (!speedup) {
            ++unmeasured;
            continue;
        }
        (*speedup > 1.0 ? faster : notFaster) += 1;
        speedups.emplace_back(*speedup, card.label);
    }
    char line[256];
    std::string text;
    std::snprintf(line, sizeof line, "summary: %zu card%s searched in %.1f s: %zu faster than eager, %zu not faster",
                  summary.cards.size(), summary.cards.size() == 1 ? "" : "s", seconds, faster, notFaster);
    text += line;
    if (unmeasured)
        text += ", " + std::to_string(unmeasured) + " without a measured node";
    text += ", " + std::to_string(summary.failedCount()) + " failed\n";
    if (compileOnly)
        text += "  " + std::to_string(compileOnly) +
            " compiled only: no GPU was visible to the worker, so nothing was validated or timed\n";
    std::sort(speedups.begin(), speedups.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t i = 0; i < speedups.size() && i < fastest; ++i) {
        std::snprintf(line, sizeof line, "  %s %.3fx  %s\n", i == 0 ? "best" : "    ", speedups[i].first,
                      speedups[i].second.c_str());
        text += line;
    }
    if (!skipped.empty()) {
        std::map<std::string, std::size_t> byReason;
        for (const core::SkippedCard& card : skipped)
            ++byReason[reasonHead(card.reason)];
        std::vector<std::pair<std::size_t, std::string>> ordered;
        for (const auto& [reason, count] : byReason)
            ordered.emplace_back(count, reason);
        std::stable_sort(ordered.begin(), ordered.end(),
                         [](const auto& a, const auto& b) { return a.first > b.first; });
        text += "  skipped " + std::to_string(skipped.size()) + ":";
        for (std::size_t i = 0; i < ordered.size(); ++i)
            text += (i ? "; " : " ") + ordered[i].second + " (" + std::to_string(ordered[i].first) + ")";
        text += "\n";
    }
    return text;
}

} // namespace kforge::cli
