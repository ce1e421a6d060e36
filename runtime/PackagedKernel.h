#pragma once
// One custom kernel of a loaded .cast package, ready to serve calls: its card (argument names and
// values), guard, launch plan and the cubin loaded into the device's primary context, plus hit and
// fallback counters. Internal to libkforge_runtime.
//
// Thread: immutable after load except the counters (atomics); serve() may run on any thread whose
// current device is the one the kernel was loaded on (the guard checks the device).

#include "cast/CastPackage.h"
#include "cubin/CubinModule.h"
#include "model/LaunchPlan.h"
#include "model/OperatorCard.h"
#include "util/Result.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <c10/util/SmallVector.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kforge::runtime {

/// A call as the hook sees it: tensor arguments and the other arguments, by schema name (string
/// literals). Inline storage: building one allocates nothing (the fallback path is timed per call).
struct HookCall {
    c10::SmallVector<std::pair<const char*, const at::Tensor*>, 6> tensors;
    c10::SmallVector<std::pair<const char*, c10::IValue>, 6> values;
};

/// The card as cards.json holds it, rebuilt from the manifest entry (op, overload, args, a region's
/// chain) and the plan's outputs, so that the launch plan resolves its tokens exactly as at
/// evaluation.
core::Result<core::OperatorCard> manifestCard(const core::CastKernel& kernel);

class PackagedKernel {
public:
    /// Parses the manifest entry's card, plan and guard and loads the cubin for `arch` (or JIT
    /// compiles the PTX when the package has no cubin for it) on the current device.
    static core::Result<std::unique_ptr<PackagedKernel>> load(const core::CastKernel& kernel, const std::string& arch,
                                                              int device);

    const std::string& id() const { return m_id; }
    const core::OperatorCard& card() const { return m_card; }

    /// Whether the call is exactly what the kernel was proven on (guard and baked-in arguments).
    /// Allocation-free: it runs on every call of the hooked operator.
    bool matches(const HookCall& call) const;
    /// Empty when matches(call); else the first difference, as one line (for the stats).
    std::string mismatch(const HookCall& call) const;
    /// Launches on PyTorch's current stream and returns the outputs (for an in-place card, the
    /// written tensor itself). An error (a launch the driver refuses) means: fall back.
    core::Result<std::vector<at::Tensor>> launch(const HookCall& call) const;

    std::atomic<std::uint64_t> hits{0};
    std::atomic<std::uint64_t> fallbacks{0};
    /// False: every call of this kernel's operator runs the original (the in-model check's ablation).
    std::atomic<bool> enabled{true};

private:
    PackagedKernel() = default;
    bool valueMatches(const core::ArgSpec& expected, const c10::IValue& actual, std::int64_t rank) const;
    const core::ArgSpec* findArg(const char* name) const;
    bool valuesMatch(const HookCall& call, std::int64_t rank, std::string* why) const;
    /// Whether guard tensor i, a 0-dim device operand, may be served from the host scalar `t` (a
    /// region kernel: any 0-dim CPU tensor of its dtype but a wrapped number).
    bool servesHostScalar(std::size_t i, const at::Tensor& t) const;
    /// Why `t` cannot be guard tensor i where the card had a host number there (a value the kernel
    /// takes by value, read on the host as eager reads it); empty when it can.
    std::string hostNumberProblem(std::size_t i, const at::Tensor& t) const;

    std::string m_id;
    core::OperatorCard m_card;
    core::KernelGuard m_guard;
    core::LaunchPlan m_plan;
    std::unique_ptr<core::CubinModule> m_module;
    int m_device = 0;
    std::string m_writtenArg;                  // in-place cards: the argument output 0 is ("self" of add_)
    std::vector<c10::ScalarType> m_guardTypes; // per guard tensor, parsed once at load
    std::vector<bool> m_hostNumbers;           // per guard tensor: the card had a host number there
    std::vector<std::string> m_regionDtypes;   // region kernels: the float dtypes its members compute in
    std::string m_hostScalarOutput;   // the output dtype host numbers may serve (core/cast/HostNumbers.h); "": never
    std::string m_capabilityMismatch; // why this device can never match; empty when it can
};

} // namespace kforge::runtime
