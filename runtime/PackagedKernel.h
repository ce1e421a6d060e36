#pragma once
// One custom kernel of a loaded .cast package, ready to serve calls: its card (argument names and
// values), guard, launch plan and the cubin loaded into the device's primary context, plus hit and
// fallback counters. Internal to libkforge_runtime.
//
// Thread: immutable after load except the counters (atomics); serve() may run on any thread whose
// current device is the one the kernel was loaded on (the guard checks the device).

#include "capture/OperatorCard.h"
#include "cast/CastPackage.h"
#include "eval/CubinModule.h"
#include "kernel/LaunchPlan.h"
#include "util/Result.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kforge::runtime {

/// A call as the hook sees it: tensor arguments and the other arguments, by schema name.
struct HookCall {
    std::vector<std::pair<std::string, const at::Tensor*>> tensors;
    std::vector<std::pair<std::string, c10::IValue>> values;
};

class PackagedKernel {
public:
    /// Parses the manifest entry's card, plan and guard and loads the cubin for `arch` (or JIT
    /// compiles the PTX when the package has no cubin for it) on the current device.
    static core::Result<std::unique_ptr<PackagedKernel>> load(const core::CastKernel& kernel, const std::string& arch,
                                                              int device);

    const std::string& id() const { return m_id; }
    const core::OperatorCard& card() const { return m_card; }

    /// Empty when the call is exactly what the kernel was proven on; else the first difference.
    std::string mismatch(const HookCall& call) const;
    /// Launches on PyTorch's current stream and returns the outputs (for an in-place card, the
    /// written tensor itself). An error (a launch the driver refuses) means: fall back.
    core::Result<std::vector<at::Tensor>> launch(const HookCall& call) const;

    std::atomic<std::uint64_t> hits{0};
    std::atomic<std::uint64_t> fallbacks{0};

private:
    PackagedKernel() = default;
    bool valueMatches(const core::ArgSpec& expected, const c10::IValue& actual, std::int64_t rank) const;

    std::string m_id;
    core::OperatorCard m_card;
    core::KernelGuard m_guard;
    core::LaunchPlan m_plan;
    std::unique_ptr<core::CubinModule> m_module;
    int m_device = 0;
    std::string m_writtenArg; // in-place cards: the argument output 0 is ("self" of add_)
};

} // namespace kforge::runtime
