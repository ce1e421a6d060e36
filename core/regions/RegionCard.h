#pragma once
// A region card: a connected group of fusible native calls (regions/FusibleOps.h) that a captured
// forward runs, found on its call graph (regions/RegionFinder.h). The unit a fused kernel will
// replace; its member cards stay, so a region can fall back to its ops' kernels.

#include "model/ArgSpec.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::core {

struct RegionMember {
    std::string op;         // "aten::relu_"
    std::string overload;   // "" for the default overload
    std::string cardId;     // the member's operator card
    std::int32_t card = -1; // its index in Project::cards

    bool operator==(const RegionMember&) const = default;
};

/// An internal edge: output `output` of member `from` is argument `arg` (tensor `element` of it,
/// 0 unless the argument is a list) of member `to`. Members are numbered in topological order.
struct RegionEdge {
    int from = 0;
    int output = 0;
    int to = 0;
    int arg = 0;
    int element = 0;

    bool operator==(const RegionEdge&) const = default;
};

/// Where a region input is read: argument `arg` (tensor `element`) of member `member`.
struct RegionUse {
    int member = 0;
    int arg = 0;
    int element = 0;

    bool operator==(const RegionUse&) const = default;
};

/// A value from outside the region (a model input, parameter, constant or another op's result).
struct RegionInput {
    TensorSpec spec;             // from the first reading member card's argument spec
    std::vector<RegionUse> uses; // in member order

    bool operator==(const RegionInput&) const = default;
};

/// A value produced inside and used outside the region, or a model output.
struct RegionOutput {
    int member = 0;
    int output = 0; // index among the member's tensor outputs
    TensorSpec spec;

    bool operator==(const RegionOutput&) const = default;
};

struct RegionCard {
    std::string id;  // 16 hex digits: fnv1a64 of `key`
    std::string key; // the canonical chain: member card keys, their inputs by local numbering, outputs
    std::vector<RegionMember> members; // topological order (the order the forward runs them)
    std::vector<RegionEdge> edges;
    std::vector<RegionInput> inputs; // numbered by first use
    std::vector<RegionOutput> outputs;
    // Each place the forward runs the chain: the call positions of its members, in member order.
    std::vector<std::vector<std::int64_t>> occurrences;
    // An ESTIMATE of one run of the chain: the sum of the member cards' eager medians. The chain
    // run alone (as eager runs it) is timed in a later step; 0 when a member has no eager time.
    double eagerUsEstimate = 0;
    bool eagerEstimateComplete = false; // every member card had an eager time

    /// The chain in one line: "batch_norm -> relu_ -> add" (op names without "aten::").
    std::string chainText() const;

    bool operator==(const RegionCard&) const = default;
};

/// The JSON form `kforge cards --json` lists under "regions".
nlohmann::json toJson(const RegionCard& region);

} // namespace kforge::core
