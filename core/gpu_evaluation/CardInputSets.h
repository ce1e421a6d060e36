#pragma once
// The input sets a card's candidates are validated on (docs/validation.md, "Validation"): every
// captured sample with the eager outputs recorded at capture, then fresh sets with the samples'
// layouts in new storage and eager's outputs for them. A search evaluates many candidates of one
// card, so the sets of the card evaluated last stay cached in the worker. GPU worker only.
//
// Memory (issue 27: the evaluator's peak stays a small multiple of one set): when every set
// together fits a quarter of the device's memory they all stay on the device, as made. A larger
// card keeps only its first sample there (the one candidates are timed on); the other samples wait
// in host memory and each fresh set is drawn again from its own seed when it is validated (the same
// values for every candidate), so that one extra set is on the device at a time.
//
// Host numbers (OperatorCard::isHostNumberArg: a 0-dim CPU tensor of a GPU call) stay on the host,
// as the model passed them: eager reads their value there (unrounded, where a 0-dim device operand
// is first converted to the op's dtype), and a kernel takes the value as a number. A fresh set
// draws a new value for each, so a kernel that baked the captured number in fails.

#include "gpu_evaluation/EagerReference.h"
#include "model/OperatorCard.h"
#include "util/Result.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kforge::core {

/// One set: the inputs a candidate runs on and eager's outputs for them, on the device (host
/// numbers on the host).
struct InputSet {
    std::string name;                 // "sample call-3" or "fresh input set 2"
    std::vector<c10::IValue> inputs;  // exact layouts
    std::vector<at::Tensor> expected; // eager's outputs
};

struct InputSetOptions {
    int freshSets = 3;              // fresh sets after the samples
    std::uint64_t seed = 1;         // fresh set k draws from a generator seeded with (seed, k)
    bool eagerWritesInputs = false; // an in-place or out= op, or a region: eager runs on copies
    /// Bytes every set together may take on the device to stay there; nullopt: a quarter of its memory.
    std::optional<std::int64_t> residentBytes;
};

class CardInputSets {
public:
    std::size_t size() const { return m_samples.size() + static_cast<std::size_t>(m_options.freshSets); }

    /// Set k (samples first, then fresh sets) on the device: a resident set shared, a transient one
    /// made now and freed with the last pointer to it. An error when eager fails on a fresh set;
    /// throws c10::OutOfMemoryError when the device cannot hold it.
    Result<std::shared_ptr<const InputSet>> at(std::size_t k) const;

    /// The first sample, always on the device: what candidate and eager are timed on.
    const InputSet& timingSet() const { return *m_samples.front(); }

    /// {"resident": every set kept on the device, "set_bytes": one set's inputs and outputs}.
    nlohmann::json describe() const;

private:
    friend Result<CardInputSets*> cardInputs(const std::filesystem::path&, const OperatorCard&, const EagerReference&,
                                             const InputSetOptions&, c10::Device);
    Result<std::shared_ptr<const InputSet>> freshSet(int k) const;

    EagerReference m_eager;
    InputSetOptions m_options;
    c10::Device m_device = c10::Device(c10::kCUDA, 0);
    std::vector<bool> m_hostNumbers; // per card argument: a host number (stays on the host)
    bool m_resident = true;
    std::int64_t m_setBytes = 0;
    std::vector<std::shared_ptr<const InputSet>> m_samples; // on the device, or past the first on the host
    std::vector<std::shared_ptr<const InputSet>> m_fresh;   // when resident
};

/// The sets of `card` (at least one sample: the caller checks), cached: the same card, samples
/// (files, sizes, modification times) and options as the last call return the same sets.
Result<CardInputSets*> cardInputs(const std::filesystem::path& projectDir, const OperatorCard& card,
                                  const EagerReference& eager, const InputSetOptions& options, c10::Device device);

/// A copy of every tensor in `value`, each on the device it is on (a host number stays on the host):
/// what eager runs on when it may write its inputs.
c10::IValue cloneWhereItIs(const c10::IValue& value);

/// Drops the cache (a candidate wrote into the cached inputs, or the device ran out of memory).
void forgetCardInputs();

} // namespace kforge::core
