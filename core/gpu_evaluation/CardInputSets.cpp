#include "gpu_evaluation/CardInputSets.h"

#include "capture/SampleIO.h"
#include "capture/TorchInterop.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <optional>

namespace kforge::core {
namespace {

namespace fs = std::filesystem;

// Every set on the device while they fit this share of its memory together; the rest of the
// memory is for a candidate's outputs (two runs, guarded), the untouched copies of its inputs,
// timing and the comparisons' slices.
constexpr double kResidentShare = 0.25;

// A fresh tensor with the layout of `t` in new storage (so no address repeats) on t's device, values
// drawn there to match t's range: floats normal with its mean and standard deviation, integers
// uniform between its minimum and maximum, bools uniform. Floats are drawn in place: no temporary
// of the tensor's size beyond the new storage.
at::Tensor freshTensorLike(const at::Tensor& t, at::Generator& generator)
{
    at::Tensor out = torchinterop::cloneExact(t, t.device());
    if (t.numel() == 0)
        return out;
    // An expanded (overlapping) tensor, e.g. repeat_kv's keys before their reshape, cannot be
    // written element by element: its storage is (cloneExact gave it exactly its span, offset 0).
    const bool overlapping = at::has_internal_overlap(out) == at::MemOverlap::Yes;
    at::Tensor target = overlapping
        ? out.as_strided({static_cast<std::int64_t>(out.storage().nbytes()) / out.element_size()}, {1}, 0)
        : out;
    if (at::isFloatingType(t.scalar_type())) {
        // Reductions of a 16-bit tensor accumulate in float32: no float copy of the tensor.
        const auto [deviation, average] = at::std_mean(t);
        const double mean = average.item<double>();
        const double std = t.numel() > 1 ? deviation.item<double>() : 1.0;
        target.normal_(std::isfinite(mean) ? mean : 0.0, std > 0 && std::isfinite(std) ? std : 1.0, generator);
        return out;
    }
    const auto options = at::TensorOptions().device(t.device());
    at::Tensor drawn;
    if (t.scalar_type() == at::kBool) {
        drawn = at::randint(0, 2, target.sizes(), generator, options.dtype(at::kLong));
    } else {
        const at::Tensor asLong = t.to(at::kLong);
        drawn = at::randint(asLong.min().item<std::int64_t>(), asLong.max().item<std::int64_t>() + 1, target.sizes(),
                            generator, options.dtype(at::kLong));
    }
    target.copy_(drawn);
    return out;
}

// A host number's fresh value, drawn on the host: a float normal around the captured value
// (standard deviation 1), an integer uniform in [-(2|v| + 2), 2|v| + 2], a bool either. Unlike a
// tensor's, a single value has no spread to match, and it must change for a baked-in copy to fail.
at::Tensor freshHostNumber(const at::Tensor& t, at::Generator& generator)
{
    if (at::isFloatingType(t.scalar_type())) {
        const double value = t.item<double>();
        return at::empty({}, t.options()).normal_(std::isfinite(value) ? value : 0.0, 1.0, generator);
    }
    if (t.scalar_type() == at::kBool)
        return at::randint(0, 2, {}, generator, t.options());
    const std::int64_t bound = 2 * std::abs(t.item<std::int64_t>()) + 2;
    return at::randint(-bound, bound + 1, {}, generator, t.options());
}

// Fresh inputs with the layouts and devices of `real`: every defined tensor in them, in lists
// (aten::cat's tensors) and tuples too, a freshTensorLike (drawn by `generator`), a host number
// (`hostNumbers[i]`) a freshHostNumber (drawn by `hostGenerator`); everything else as it is.
std::vector<c10::IValue> freshInputsLike(const std::vector<c10::IValue>& real, const std::vector<bool>& hostNumbers,
                                         at::Generator& generator, at::Generator& hostGenerator)
{
    const auto fresh = [&generator](const at::Tensor& t) { return t.defined() ? freshTensorLike(t, generator) : t; };
    std::vector<c10::IValue> inputs;
    for (std::size_t i = 0; i < real.size(); ++i) {
        if (i < hostNumbers.size() && hostNumbers[i] && real[i].isTensor())
            inputs.emplace_back(freshHostNumber(real[i].toTensor(), hostGenerator));
        else
            inputs.push_back(torchinterop::mapTensors(real[i], fresh));
    }
    return inputs;
}

std::int64_t setBytes(const InputSet& set)
{
    std::int64_t bytes = 0;
    for (const c10::IValue& value : set.inputs)
        bytes += torchinterop::payloadBytes(value);
    for (const at::Tensor& t : set.expected)
        bytes += torchinterop::payloadBytes(t);
    return bytes;
}

// `set` copied onto `device`, host numbers (`hostNumbers[i]`) left on the host.
std::shared_ptr<const InputSet> onDevice(const InputSet& set, c10::Device device, const std::vector<bool>& hostNumbers)
{
    auto copy = std::make_shared<InputSet>();
    copy->name = set.name;
    for (std::size_t i = 0; i < set.inputs.size(); ++i) {
        const bool hostNumber = i < hostNumbers.size() && hostNumbers[i];
        copy->inputs.push_back(hostNumber ? cloneWhereItIs(set.inputs[i])
                                          : torchinterop::cloneValue(set.inputs[i], device));
    }
    for (const at::Tensor& t : set.expected)
        copy->expected.push_back(t.to(device));
    return copy;
}

struct CachedCardInputs {
    std::string key;
    CardInputSets sets;
};
std::optional<CachedCardInputs> g_cardInputs;

std::string cacheKey(const fs::path& projectDir, const OperatorCard& card, const InputSetOptions& options)
{
    std::string key = projectDir.string() + "|" + card.id + "|" + std::to_string(options.seed) + "|" +
        std::to_string(options.freshSets) + "|" + (options.eagerWritesInputs ? "copies" : "in place") + "|" +
        (options.residentBytes ? std::to_string(*options.residentBytes) : "default");
    for (const SampleRef& ref : card.samples) {
        std::error_code ec;
        const fs::path file = projectDir / ref.file;
        const auto size = fs::file_size(file, ec);
        const auto modified = fs::last_write_time(file, ec).time_since_epoch().count();
        key += "|" + ref.file + ":" + std::to_string(size) + ":" + std::to_string(modified);
    }
    return key;
}

} // namespace

Result<std::shared_ptr<const InputSet>> CardInputSets::at(std::size_t k) const
{
    if (k < m_samples.size())
        return k == 0 || m_resident ? m_samples[k] : onDevice(*m_samples[k], m_device, m_hostNumbers);
    const std::size_t fresh = k - m_samples.size();
    if (m_resident)
        return m_fresh.at(fresh);
    return freshSet(static_cast<int>(fresh));
}

Result<std::shared_ptr<const InputSet>> CardInputSets::freshSet(int k) const
{
    at::Generator generator = at::make_generator<at::CUDAGeneratorImpl>(m_device.index());
    // Philox streams of distinct seeds are independent: set k's values depend on k alone.
    const std::uint64_t seed = m_options.seed + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(k);
    generator.set_current_seed(seed);
    at::Generator hostGenerator = at::make_generator<at::CPUGeneratorImpl>(seed);
    auto set = std::make_shared<InputSet>();
    set->name = "fresh input set " + std::to_string(k + 1);
    try {
        set->inputs = freshInputsLike(m_samples.front()->inputs, m_hostNumbers, generator, hostGenerator);
        if (m_options.eagerWritesInputs) {
            std::vector<c10::IValue> copies;
            for (const c10::IValue& value : set->inputs)
                copies.push_back(cloneWhereItIs(value));
            set->expected = m_eager(copies);
        } else {
            set->expected = m_eager(set->inputs);
        }
    } catch (const c10::OutOfMemoryError&) {
        throw;
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, "eager reference failed: " + torchinterop::oneLineError(e), set->name);
    }
    return std::shared_ptr<const InputSet>(std::move(set));
}

nlohmann::json CardInputSets::describe() const
{
    return nlohmann::json{{"resident", m_resident}, {"set_bytes", m_setBytes}};
}

Result<CardInputSets*> cardInputs(const fs::path& projectDir, const OperatorCard& card, const EagerReference& eager,
                                  const InputSetOptions& options, c10::Device device)
{
    const std::string key = cacheKey(projectDir, card, options);
    if (g_cardInputs && g_cardInputs->key == key)
        return &g_cardInputs->sets;
    g_cardInputs.reset();

    CardInputSets sets;
    sets.m_eager = eager;
    sets.m_options = options;
    sets.m_device = device;
    for (const ArgSpec& arg : card.args)
        sets.m_hostNumbers.push_back(card.isHostNumberArg(arg));
    std::vector<InputSet> loaded; // past the first sample, on the host until the budget is known
    for (const SampleRef& ref : card.samples) {
        auto sample = loadSampleFile(projectDir / ref.file);
        if (!sample)
            return sample.error();
        InputSet set;
        set.name = "sample call-" + std::to_string(ref.callPosition);
        set.inputs = sample->inputs;
        set.expected = tensorsOf(sample->outputs);
        if (sets.m_samples.empty()) {
            sets.m_setBytes = setBytes(set);
            sets.m_samples.push_back(onDevice(set, device, sets.m_hostNumbers));
        } else {
            loaded.push_back(std::move(set));
        }
    }
    const double budget = options.residentBytes
        ? static_cast<double>(*options.residentBytes)
        : kResidentShare * static_cast<double>(at::cuda::getDeviceProperties(device.index())->totalGlobalMem);
    sets.m_resident = static_cast<double>(sets.m_setBytes) * static_cast<double>(sets.size()) <= budget;
    for (InputSet& set : loaded)
        sets.m_samples.push_back(sets.m_resident ? onDevice(set, device, sets.m_hostNumbers)
                                                 : std::make_shared<const InputSet>(std::move(set)));
    if (sets.m_resident) {
        for (int k = 0; k < options.freshSets; ++k) {
            auto fresh = sets.freshSet(k);
            if (!fresh)
                return fresh.error();
            sets.m_fresh.push_back(fresh.value());
        }
    }
    g_cardInputs = CachedCardInputs{key, std::move(sets)};
    return &g_cardInputs->sets;
}

c10::IValue cloneWhereItIs(const c10::IValue& value)
{
    return torchinterop::mapTensors(value, [](const at::Tensor& t) { return torchinterop::cloneExact(t, t.device()); });
}

void forgetCardInputs()
{
    g_cardInputs.reset();
}

} // namespace kforge::core
