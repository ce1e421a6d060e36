#pragma once
// An operator card: one runtime variant of one ATen operator in a captured model (op + overload,
// dtypes, sizes, strides, devices and every non-tensor argument value). Cards are what the search
// optimizes and what a .cast package guards on.

#include "model/ArgSpec.h"
#include "model/RegionChain.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::core {

/// Eager latency of one call of the card's variant, measured by replaying it.
struct EagerTiming {
    std::string device;  // "cuda:0 (NVIDIA H200)" or "cpu": the device the number was measured on
    std::string method;  // how it was measured, e.g. "cuda-events, L2 flushed" or "cpu wall clock"
    double medianUs = 0; // median over `repetitions`
    double q1Us = 0;     // first quartile
    double q3Us = 0;     // third quartile
    int repetitions = 0;

    bool operator==(const EagerTiming&) const = default;
};

/// One captured call's real inputs and eager outputs, stored in the project (see docs/project-format.md).
struct SampleRef {
    std::int64_t callPosition = 0; // index of the call in the model's execution order
    std::string file;              // path relative to the project directory
    std::int64_t bytes = 0;        // tensor payload size

    bool operator==(const SampleRef&) const = default;
};

/// The samples note of a card whose calls return a view of an input or the input itself (a view
/// such as flatten, dropout in eval, `to` into the same dtype): nothing is computed, so there is no
/// kernel to write for it (OperatorCard::computesNothing).
inline constexpr const char* kAliasOutputSamplesNote =
    "its output is a view of an input or the input itself: nothing computed, not sampled";

struct OperatorCard {
    std::string id;       // 16 hex digits: fnv1a64 of `key`
    std::string key;      // canonical variant key (see variantKey)
    std::string op;       // "aten::softmax"
    std::string overload; // "int" (empty for the default overload)
    std::string schema;   // full schema text
    std::vector<ArgSpec> args;
    std::vector<TensorSpec> outputs; // eager output layouts (empty if the op returns no tensor)
    std::int64_t callCount = 0;
    std::vector<std::int64_t> callPositions; // execution-order indices of every call
    bool vendorBacked = false;               // backed by cuBLAS/cuDNN (see isVendorBackedOp)
    std::vector<SampleRef> samples;
    std::string samplesNote;          // why fewer samples than asked, if so
    std::optional<EagerTiming> eager; // absent when the card could not be replayed
    std::string eagerNote;            // why eager is absent, if so
    double timeShare = 0;             // share of the model's total eager operator time, 0..1
                                      // (a CUDA capture's host ops: 0, see runsOnHost)
    // Set for a region card (model/RegionChain.h): a chain of member calls run as one unit. Its op
    // is kRegionOp, its arguments the region's inputs; its eager time is the chain replayed alone.
    std::optional<RegionChain> region;

    bool isRegion() const { return region.has_value(); }
    /// Whether capture saw its calls return an input or a view of one (kAliasOutputSamplesNote).
    bool computesNothing() const { return samplesNote == kAliasOutputSamplesNote; }

    /// "aten::softmax.int" (no dot for the default overload).
    std::string qualifiedName() const;
    /// What a table shows for the card: qualifiedName(), or "region: mul -> add -> relu_".
    std::string displayName() const;
    /// Total eager time of all calls in microseconds (0 when not timed).
    double totalEagerUs() const;
    /// The argument with schema name `name`, or null.
    const ArgSpec* findArg(const std::string& name) const;
    /// True when none of its tensors (arguments or outputs) is on a GPU: a host op, such as the
    /// item() of a CPU scalar a traced model keeps. A CUDA capture times such a card by wall clock
    /// and leaves it out of the model's GPU time (timeShare 0): it occupies no GPU.
    bool runsOnHost() const;
    /// True when `arg` is a host number of a GPU card: one 0-dim tensor on the CPU in a call whose
    /// outputs are on a GPU (a Python number the call received as a wrapped CPU tensor, or a 0-dim
    /// CPU tensor the model made). Eager reads its value on the host at each call; a kernel takes
    /// that value as a number (docs/kernel-contract.md), never a pointer.
    bool isHostNumberArg(const ArgSpec& arg) const;

    bool operator==(const OperatorCard&) const = default;
};

/// The canonical variant key: qualified op name and every argument's keyText, in schema order.
std::string variantKey(const std::string& op, const std::string& overload, const std::vector<ArgSpec>& args);

/// The stable card id for a variant key.
std::string cardIdForKey(const std::string& key);

/// True for operators whose CUDA implementation is a vendor library call (cuBLAS, cuDNN, cuDNN/flash
/// attention): convolutions, matrix products, linear, attention and cuDNN recurrent layers.
bool isVendorBackedOp(const std::string& op);

/// True for the in-place form of an op, qualified ("aten::relu_") or bare ("relu_"): the name after
/// the namespace ends in exactly one '_' and does not start with one (not "__iand__", "_foreach_").
bool isInPlaceOpName(std::string_view op);

} // namespace kforge::core
