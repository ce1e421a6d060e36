#pragma once
// Guard matching: may a packaged kernel serve this call? A pure function over
// value types, so the runtime's dispatcher (any thread, per call) and the tests
// share one definition of "the call is exactly what the kernel was proven on".
// No allocation on a hit.

#include "cast/CastPackage.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::core {

/// One tensor argument of an actual call.
struct CallTensor {
    std::string dtype;
    std::vector<std::int64_t> sizes;
    std::vector<std::int64_t> strides;
    std::uintptr_t dataPtr = 0;
};

/// An actual call: its tensor arguments in schema order and the device it runs
/// on.
struct CallSpec {
    std::vector<CallTensor> tensors;
    int capabilityMajor = 0;
    int capabilityMinor = 0;
};

enum class GuardMismatch {
    None,        // the guard holds: the kernel may run
    TensorCount, // a different number of tensor arguments
    Dtype,
    Sizes,
    Strides,
    Capability,
    Alignment, // a data pointer is not aligned as the kernel's vectorized loads
               // need
};
const char* guardMismatchName(GuardMismatch mismatch);

struct GuardMatchResult {
    GuardMismatch mismatch = GuardMismatch::None;
    std::string reason; // empty on a match; else e.g. "self: sizes [8,16] !=
                        // guard [4,16]"

    bool matched() const { return mismatch == GuardMismatch::None; }
};

/// The first mismatch, checked in this order: capability, tensor count, then
/// per tensor dtype, sizes, strides, alignment.
GuardMatchResult matchGuard(const KernelGuard& guard, const CallSpec& call);

} // namespace kforge::core
