#pragma once
// The chain of ops a region card stands for (docs/project-format.md, "Region cards"): the member
// calls in execution order, each with its card's arguments, and where each member's tensors come
// from (a region input or an earlier member's output). Enough to replay the chain as eager runs it
// (capture/ChainReplay.h), to generate one kernel for it and to print it. Torch-free value type.
//
// A region card is an OperatorCard whose `region` is set: op kRegionOp, arguments "in0".."inN-1"
// (the region's external tensors, in order of first use), outputs the values the chain hands on.

#include "model/ArgSpec.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::core {

/// The op name of every region card.
inline constexpr const char* kRegionOp = "kforge::region";

/// Where a member reads a tensor: region input `index` (argument "in<index>" of the region card),
/// or output `output` of the earlier member `index`.
struct ChainSource {
    bool fromMember = false;
    int index = 0;
    int output = 0;

    bool operator==(const ChainSource&) const = default;
};

struct ChainMember {
    std::string op;       // "aten::relu_"
    std::string overload; // "" for the default overload
    std::string cardId;   // the member's own operator card
    // The member card's arguments in schema order: tensor specs and non-tensor values as captured.
    std::vector<ArgSpec> args;
    // Per argument: the source of each of its tensors (one for Tensor, one per element of a list,
    // none for any other kind).
    std::vector<std::vector<ChainSource>> sources;
    std::vector<TensorSpec> outputs; // the member's eager outputs

    bool operator==(const ChainMember&) const = default;
};

struct RegionChain {
    std::vector<ChainMember> members; // topological (execution) order
    std::vector<ChainSource> outputs; // the region card's outputs; each from a member
    // Each place the forward runs the chain: the call positions of its members, in member order.
    std::vector<std::vector<std::int64_t>> occurrences;

    /// The chain in one line: "batch_norm -> relu_ -> add" (op names without "aten::").
    std::string text() const;
    /// Member `m` as a call: "m1 = aten::add.Tensor(self=m0, other=in2, alpha=1)" (in<i>: a region
    /// input; m<j> or m<j>.<k>: a member's first or k-th output).
    std::string memberText(size_t m) const;
    /// "out0 = m3, out1 = m1".
    std::string outputsText() const;
    /// A one-line problem when the chain does not agree with itself or with `inputs` (the region
    /// card's input specs): sources in range and earlier than their reader, source specs equal to
    /// the argument specs they feed, tensor counts as the arguments', outputs from members,
    /// occurrences one position per member. "" when it is sound.
    std::string problem(const std::vector<TensorSpec>& inputs) const;

    bool operator==(const RegionChain&) const = default;
};

} // namespace kforge::core
