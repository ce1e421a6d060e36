#pragma once
// Runs a region's chain (model/RegionChain.h) as eager runs it: member by member through the
// dispatcher, each reading the region's inputs or earlier members' outputs, with the non-tensor
// arguments captured on its card. The reference a region kernel is judged against, and the work
// whose time is the region card's eager time. Internal to core (includes LibTorch).
//
// Thread: any; one ChainReplay per thread. run() enters InferenceMode itself.

#include "model/RegionChain.h"
#include "util/Result.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>

#include <optional>
#include <vector>

namespace kforge::core {

/// The IValue that a captured non-tensor argument (ArgKind::Value or None) stands for, rebuilt from
/// its JSON value by its schema type ("int", "float", "Scalar", "int[]", "ScalarType?", ...).
/// Unsupported with the argument's name and type when the type cannot be rebuilt.
Result<c10::IValue> capturedArgumentValue(const ArgSpec& arg);

/// AsCaptured: the chain as eager ran it. Float64: the same chain with every floating input, and
/// every floating dtype argument (`to(x, torch.bfloat16)`, softmax's `dtype`), in float64: the
/// exact result eager's chain approximates, rounding each member's output to its own dtype.
enum class ReplayPrecision { AsCaptured, Float64 };

class ChainReplay {
public:
    /// Resolves every member's operator and rebuilds its non-tensor arguments once.
    static Result<ChainReplay> prepare(const RegionChain& chain,
                                       ReplayPrecision precision = ReplayPrecision::AsCaptured);

    /// Runs the chain on `inputs` (the region card's arguments, in order) and returns its outputs in
    /// the card's order. In-place members write into the tensors they are given, as in the model:
    /// pass copies when the inputs must stay (a Float64 replay works on float64 copies of every
    /// input and leaves the inputs as they were). Errors name the member that failed.
    Result<std::vector<at::Tensor>> run(const std::vector<at::Tensor>& inputs) const;

private:
    struct Member {
        c10::OperatorHandle handle;
        std::string name;                              // "aten::add.Tensor"
        std::vector<std::optional<c10::IValue>> fixed; // per argument: the rebuilt non-tensor value
    };
    ChainReplay(const RegionChain& chain, std::vector<Member> members, ReplayPrecision precision)
        : m_chain(chain), m_members(std::move(members)), m_precision(precision)
    {
    }

    RegionChain m_chain;
    std::vector<Member> m_members;
    ReplayPrecision m_precision = ReplayPrecision::AsCaptured;
};

} // namespace kforge::core
