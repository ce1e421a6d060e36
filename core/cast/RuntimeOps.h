#pragma once
// Which cards the .cast runtime (libkforge_runtime) can dispatch to a packaged kernel, and at which
// ATen operator it intercepts them. Shared by `kforge export` (custom vs fallback in the audit) and
// the runtime (which operator to override), so the two never disagree. Torch-free.
//
// The runtime overrides an operator's CUDA kernel at the dispatcher; the original stays callable
// through its per-backend function (at::cuda::<op>), which is where a call goes whenever a guard
// does not hold. Composite operators (layer_norm, group_norm, batch_norm, rms_norm,
// adaptive_avg_pool2d, embedding) are overridden as themselves, so one packaged kernel replaces
// the whole decomposition; their original is the composite implementation (runtime/CompositeHooks.h).

#include <optional>
#include <string>

namespace kforge::core {

struct RuntimeHook {
    std::string op;       // the operator the runtime overrides, "aten::_softmax"
    std::string overload; // "" for the default overload
};

/// The hook for a card's operator ("aten::softmax.int" -> aten::_softmax), or nullopt with `why`
/// set to a one-line reason.
std::optional<RuntimeHook> runtimeHookFor(const std::string& qualifiedOp, std::string& why);

} // namespace kforge::core
