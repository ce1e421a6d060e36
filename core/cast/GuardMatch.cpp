#include "cast/GuardMatch.h"

namespace kforge::core {
namespace {

std::string list(const std::vector<std::int64_t>& values)
{
    std::string out = "[";
    for (std::size_t i = 0; i < values.size(); ++i)
        out += (i ? "," : "") + std::to_string(values[i]);
    return out + "]";
}

GuardMatchResult mismatch(GuardMismatch kind, std::string reason)
{
    return {kind, std::move(reason)};
}

} // namespace

const char* guardMismatchName(GuardMismatch m)
{
    switch (m) {
    case GuardMismatch::None:
        return "match";
    case GuardMismatch::TensorCount:
        return "tensor count";
    case GuardMismatch::Dtype:
        return "dtype";
    case GuardMismatch::Sizes:
        return "sizes";
    case GuardMismatch::Strides:
        return "strides";
    case GuardMismatch::Capability:
        return "capability";
    case GuardMismatch::Alignment:
        return "alignment";
    }
    return "?";
}

GuardMatchResult matchGuard(const KernelGuard& guard, const CallSpec& call)
{
    if (call.capabilityMajor != guard.capabilityMajor || call.capabilityMinor != guard.capabilityMinor)
        return mismatch(GuardMismatch::Capability,
                        "device capability " + std::to_string(call.capabilityMajor) + "." +
                            std::to_string(call.capabilityMinor) + " != guard " +
                            std::to_string(guard.capabilityMajor) + "." + std::to_string(guard.capabilityMinor));
    if (call.tensors.size() != guard.tensors.size())
        return mismatch(GuardMismatch::TensorCount,
                        std::to_string(call.tensors.size()) + " tensor arguments != guard " +
                            std::to_string(guard.tensors.size()));
    for (std::size_t i = 0; i < guard.tensors.size(); ++i) {
        const TensorGuard& g = guard.tensors[i];
        const CallTensor& t = call.tensors[i];
        if (t.dtype != g.dtype)
            return mismatch(GuardMismatch::Dtype, g.arg + ": dtype " + t.dtype + " != guard " + g.dtype);
        if (t.sizes != g.sizes)
            return mismatch(GuardMismatch::Sizes, g.arg + ": sizes " + list(t.sizes) + " != guard " + list(g.sizes));
        if (t.strides != g.strides)
            return mismatch(GuardMismatch::Strides,
                            g.arg + ": strides " + list(t.strides) + " != guard " + list(g.strides));
        const auto alignment = static_cast<std::uintptr_t>(g.alignmentBytes > 0 ? g.alignmentBytes : 1);
        if (t.dataPtr % alignment != 0)
            return mismatch(GuardMismatch::Alignment,
                            g.arg + ": data pointer is " + std::to_string(t.dataPtr % alignment) +
                                " bytes off the required " + std::to_string(alignment) + "-byte alignment");
    }
    return {};
}

} // namespace kforge::core
