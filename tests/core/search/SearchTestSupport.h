#pragma once
// Deterministic stand-ins for the proposer and the evaluator, and a scratch directory, shared by
// the search tests.

#include "../ScratchDir.h"

#include "model/SearchTree.h"
#include "search/Evaluator.h"
#include "search/Proposer.h"
#include "search/SearchRun.h"
#include "util/Hash.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kforge::core::test {

/// Root source "k"; the c-th child of a node with source S gets source "S.c", so a source spells
/// its lineage. Every `failEvery`-th proposal (1-based, 0 = never) is a failed proposal.
class SyntheticProposer : public Proposer {
public:
    int calls = 0;
    int failEvery = 0;
    std::function<Result<Proposal>(int call)> override; // returns an error to inject one
    std::vector<std::size_t> likelyNextLimits;          // the limit of every likelyNext call

    /// Guesses the next two children of `current`'s source.
    std::vector<Candidate> likelyNext(const SearchTree&, const Proposal& current, std::size_t limit) override
    {
        likelyNextLimits.push_back(limit);
        std::vector<Candidate> out;
        for (const char* suffix : {".0", ".1"}) {
            Candidate c;
            c.source = current.candidate.source + suffix;
            out.push_back(c);
        }
        return out;
    }

    Result<Proposal> proposeRoot(const SearchTree&, const std::atomic<bool>&) override
    {
        ++calls;
        Proposal p;
        p.candidate.source = "k";
        p.candidate.launchPlan = {{"block", 128}};
        p.provenance.kind = ProvenanceKind::Root;
        return p;
    }

    Result<Proposal> propose(const SearchTree&, const SearchNode& parent, const std::atomic<bool>&) override
    {
        ++calls;
        if (override) {
            auto injected = override(calls);
            if (!injected)
                return injected;
        }
        const std::string index = std::to_string(parent.childIds.size());
        Proposal p;
        p.candidate.source = parent.candidate.source + "." + index;
        p.candidate.launchPlan = {{"block", 128}, {"variant", index}};
        p.provenance.kind = ProvenanceKind::BuiltinTransformation;
        p.provenance.transformation = "t" + index;
        p.provenance.details = {{"parent", parent.id}};
        if (failEvery > 0 && calls % failEvery == 0)
            p.failureReason = "reply had no code block\nfull reply follows";
        return p;
    }
};

/// latency = f(fnv1a64(source)); about a third of the candidates fail (compile or validation).
/// Modes: compile-only (no measurement), or a fixed latency per call via `latencyOfCall`.
class SyntheticEvaluator : public Evaluator {
public:
    int calls = 0;
    bool compileOnly = false;
    bool neverFail = false;
    bool coarse = false; // only three latencies (20/40/80 us): many exact UCT ties, so many RNG draws
    double eagerUs = 50.0;
    std::function<double(int call)> latencyOfCall;    // overrides the hash latency
    std::function<Result<Evaluation>(int call)> hook; // runs first; an error is returned
    std::function<void(int call)> sideEffect;         // e.g. request a stop, or _exit
    std::vector<std::vector<std::string>> prepared;   // sources of every prepareAhead call
    int callsWhenLastPrepared = -1;
    std::vector<std::map<std::string, double>> bestNoted; // every noteBestSpeedups call
    std::vector<double> bestReturned;                     // the best speedup returned before each of them
    double bestSoFar = 0;

    void noteBestSpeedups(const std::map<std::string, double>& byGpuModel) override
    {
        bestNoted.push_back(byGpuModel);
        bestReturned.push_back(bestSoFar);
    }

    void prepareAhead(const std::vector<Candidate>& likelyNext) override
    {
        std::vector<std::string> sources;
        for (const Candidate& c : likelyNext)
            sources.push_back(c.source);
        prepared.push_back(sources);
        callsWhenLastPrepared = calls;
    }

    Result<Evaluation> evaluate(const Candidate& candidate, const std::atomic<bool>&) override
    {
        ++calls;
        if (sideEffect)
            sideEffect(calls);
        if (hook) {
            auto injected = hook(calls);
            if (!injected)
                return injected;
        }
        const std::uint64_t h = fnv1a64(candidate.source);
        Evaluation e;
        if (compileOnly) {
            e.status = NodeStatus::CompiledOnly;
            return e;
        }
        if (!neverFail && candidate.source != "k" && h % 6 == 0) {
            e.status = NodeStatus::FailedCompile;
            e.failureReason = "error: identifier \"x\" is undefined in " + candidate.source + "\nsecond line";
            e.report = EvaluationReport::fromJson({{"log", "full compiler log"}});
            return e;
        }
        if (!neverFail && candidate.source != "k" && h % 6 == 1) {
            e.status = NodeStatus::FailedValidation;
            e.failureReason = "max abs error 0.5 exceeds tolerance";
            return e;
        }
        double median = 10.0 + static_cast<double>((h >> 8) % 900) / 10.0;
        if (coarse)
            median = 20.0 * static_cast<double>(1 << ((h >> 8) % 3));
        if (latencyOfCall)
            median = latencyOfCall(calls);
        e.status = NodeStatus::Passed;
        e.latency = LatencyStats{median, median * 0.98, median * 1.03};
        e.eagerUs = eagerUs;
        bestSoFar = std::max(bestSoFar, eagerUs / median);
        return e;
    }
};

/// Options with a fixed node clock, so trees of different runs compare byte for byte.
inline SearchRunOptions fixedClockOptions(int maxIterations)
{
    SearchRunOptions options;
    options.budget.maxIterations = maxIterations;
    options.nowUnixMs = [] { return std::int64_t{1700000000000}; };
    return options;
}

} // namespace kforge::core::test
