#pragma once
// Where a region card's chain (model/RegionChain.h) runs in a TorchScript graph: a node per chain
// member with the member's operator, reading the chain's sources, with non-tensor arguments that
// are constants equal to the captured ones. Used by RegionRewrite.h; internal to core (LibTorch).

#include "model/RegionChain.h"

#include <torch/csrc/jit/ir/ir.h>

#include <functional>
#include <optional>
#include <vector>

namespace kforge::core {

struct RegionMatch {
    std::vector<torch::jit::Node*> members;  // per chain member, in member order
    std::vector<torch::jit::Node*> lists;    // the prim::ListConstruct of each member's Tensor[] argument
    std::vector<torch::jit::Value*> inputs;  // per region input (argument in<i>)
    std::vector<torch::jit::Value*> outputs; // per region output
};

/// The number of region inputs a chain reads (one more than the highest input index).
size_t regionInputCount(const RegionChain& chain);

/// The first match of `chain` among the nodes of `block` (not its sub-blocks) that `accept` takes.
/// A match is self-contained: distinct region inputs are distinct values, and a value of the chain
/// that is not a region output is read by members only (a member's Tensor[] argument is a
/// prim::ListConstruct that only that member reads, part of the match). The search gives up after a bounded number
/// of steps (a pathological graph costs milliseconds, not minutes).
std::optional<RegionMatch> findRegionMatch(torch::jit::Block& block, const RegionChain& chain,
                                           const std::function<bool(const RegionMatch&)>& accept);

} // namespace kforge::core
