#include "gpu_evaluation/CandidateEvaluator.h"

#include "capture/ChainReplay.h"
#include "capture/EagerReplay.h"
#include "capture/SampleIO.h"
#include "capture/TorchInterop.h"
#include "checks/EarlyTimingStop.h"
#include "checks/MinimumTraffic.h"
#include "checks/ModelAccuracy.h"
#include "checks/OutputComparison.h"
#include "checks/Tolerance.h"
#include "cubin/CubinModule.h"
#include "gpu_evaluation/CardInputSets.h"
#include "gpu_evaluation/ChunkedTolerance.h"
#include "gpu_evaluation/CopyBandwidth.h"
#include "gpu_evaluation/EagerReference.h"
#include "gpu_evaluation/GpuActivityTimer.h"
#include "model/LaunchPlan.h"
#include "project/ProjectJson.h"
#include "protocol/Base64.h"
#include "regions/RegionOperatorCard.h"

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/core/InferenceMode.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>

namespace kforge::core {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr std::int64_t kGuardBytes = 4096; // around every output, checked for stray writes
constexpr std::int64_t kL2FlushBytes = 256ll << 20;
constexpr std::uint8_t kGuardByte = 0xA5;
constexpr int kFaultExitCode = 70;

// Wall time of the evaluation's phases, for the report (where the seconds of an iteration go).
struct PhaseClock {
    std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
    json laps = json::object();
    void lap(const char* name)
    {
        const auto now = std::chrono::steady_clock::now();
        laps[name] = std::chrono::duration<double, std::milli>(now - last).count();
        last = now;
    }
};

struct EvalOptions {
    int freshInputSets = 3;
    std::uint64_t seed = 1;
    std::optional<std::int64_t> residentBytes; // the input sets' device budget (CardInputSets.h)
    int warmup = 5;
    int repetitions = 50;
    int warmRepetitions = 20;
    bool time = true;
    double bestSpeedup = 0; // the best node's on this GPU model: timing may stop early below it
};

EvalOptions parseOptions(const json& request)
{
    EvalOptions options;
    if (!request.contains("options") || !request.at("options").is_object())
        return options;
    const json& o = request.at("options");
    options.freshInputSets = o.value("fresh_input_sets", options.freshInputSets);
    options.seed = o.value("seed", options.seed);
    if (o.contains("resident_bytes") && o.at("resident_bytes").is_number_integer())
        options.residentBytes = o.at("resident_bytes").get<std::int64_t>();
    options.warmup = o.value("warmup", options.warmup);
    options.repetitions = std::max(3, o.value("repetitions", options.repetitions));
    options.warmRepetitions = std::max(3, o.value("warm_repetitions", options.warmRepetitions));
    options.time = o.value("time", options.time);
    if (o.contains("best_speedup") && o.at("best_speedup").is_number())
        options.bestSpeedup = o.at("best_speedup").get<double>();
    return options;
}

// A faulted kernel poisons the CUDA context: nothing in this process can use the GPU any more.
[[noreturn]] void dieWithCudaFault(const std::string& what, cudaError_t error)
{
    std::fprintf(stderr, "kforge-worker: CUDA error during %s: %s: %s\n", what.c_str(), cudaGetErrorName(error),
                 cudaGetErrorString(error));
    std::fflush(stderr);
    std::_Exit(kFaultExitCode);
}

void synchronizeOrDie(const std::string& what)
{
    if (cudaError_t error = cudaDeviceSynchronize(); error != cudaSuccess)
        dieWithCudaFault(what, error);
}

// `tensor` reinterpreted as integers of the same width, so that equality is bitwise (NaN == NaN).
at::Tensor bitsOf(const at::Tensor& tensor)
{
    switch (tensor.element_size()) {
    case 1:
        return tensor.scalar_type() == at::kBool ? tensor.to(at::kByte) : tensor.view(at::kByte);
    case 2:
        return tensor.view(at::kShort);
    case 4:
        return tensor.view(at::kInt);
    case 8:
        return tensor.view(at::kLong);
    default:
        return tensor;
    }
}

bool bitwiseEqual(const at::Tensor& a, const at::Tensor& b)
{
    return a.sizes() == b.sizes() && at::equal(bitsOf(a), bitsOf(b));
}

// One candidate run's output tensors with poisoned contents and guard bytes around them.
struct CandidateOutputs {
    std::vector<at::Tensor> buffers; // uint8, guard + span + guard
    std::vector<at::Tensor> views;   // the outputs as the plan declares them
};

bool poison(at::Tensor& view, bool second)
{
    if (at::isFloatingType(view.scalar_type()))
        view.fill_(second ? 1234.5 : std::numeric_limits<double>::quiet_NaN());
    else if (view.scalar_type() == at::kBool)
        view.fill_(!second);
    else
        view.fill_(second ? 60 : 90); // two sentinels: an unwritten element differs between the runs
    return true;
}

// The one argument an in-place or out= operator writes (schema `Tensor(a!)`): the candidate gets
// output 0's guarded buffer in its place, so the cached inputs stay untouched. An in-place
// argument's buffer starts as a copy of the input (its old values are the op's operand); an out=
// argument's starts poisoned like any output (its old values mean nothing).
struct MutatedArgument {
    size_t index = 0;
    std::string name;
    bool startsFromInput = false;
};

Result<std::optional<MutatedArgument>> mutatedArgumentOf(const c10::FunctionSchema& schema, const OperatorCard& card,
                                                         const LaunchPlan& plan)
{
    std::optional<MutatedArgument> found;
    const auto& arguments = schema.arguments();
    for (size_t i = 0; i < arguments.size(); ++i) {
        const c10::AliasInfo* alias = arguments[i].alias_info();
        if (!alias || !alias->isWrite())
            continue;
        if (found)
            return makeError(ErrorCode::Unsupported, "operators that write more than one argument are not evaluated",
                             "card " + card.id);
        found = MutatedArgument{i, arguments[i].name(), !arguments[i].is_out()};
    }
    if (!found)
        return found;
    const ArgSpec* arg = card.findArg(found->name);
    if (!arg || arg->kind != ArgKind::Tensor || arg->tensors.size() != 1)
        return makeError(ErrorCode::Unsupported, "the written argument '" + found->name + "' is not one tensor",
                         "card " + card.id);
    const TensorSpec& written = arg->tensors[0];
    if (plan.outputs.empty() || plan.outputs[0].dtype != written.dtype || plan.outputs[0].sizes != written.sizes ||
        plan.outputs[0].strides != written.strides)
        return makeError(ErrorCode::InvalidArgument,
                         "output 0 must have the layout of the written argument '" + found->name + "' " +
                             written.toShortString(),
                         "card " + card.id);
    return found;
}

Result<CandidateOutputs> allocateOutputs(const LaunchPlan& plan, c10::Device device, bool secondPoison,
                                         const at::Tensor* initialOutput0 = nullptr)
{
    CandidateOutputs outputs;
    for (const TensorSpec& spec : plan.outputs) {
        c10::ScalarType dtype;
        if (!torchinterop::scalarTypeFromName(spec.dtype, dtype))
            return makeError(ErrorCode::Unsupported, "output dtype '" + spec.dtype + "' is not supported", "plan");
        const std::int64_t bytes = spec.storageSpan() * c10::elementSize(dtype);
        at::Tensor buffer = at::empty({bytes + 2 * kGuardBytes}, at::TensorOptions().dtype(at::kByte).device(device));
        buffer.fill_(kGuardByte);
        at::Tensor view = at::from_blob(buffer.data_ptr<std::uint8_t>() + kGuardBytes, spec.sizes, spec.strides,
                                        at::TensorOptions().dtype(dtype).device(device));
        if (outputs.views.empty() && initialOutput0)
            view.copy_(*initialOutput0);
        else
            poison(view, secondPoison);
        outputs.buffers.push_back(buffer);
        outputs.views.push_back(view);
    }
    return outputs;
}

// Checks the guard bytes around each output (on the device; only a failure is read back to say
// where); returns a description of the first stray write.
std::string strayWrites(const CandidateOutputs& outputs)
{
    for (size_t i = 0; i < outputs.buffers.size(); ++i) {
        const at::Tensor& buffer = outputs.buffers[i];
        const std::int64_t total = buffer.numel();
        const at::Tensor before = buffer.slice(0, 0, kGuardBytes);
        const at::Tensor after = buffer.slice(0, total - kGuardBytes, total);
        for (const bool isBefore : {true, false}) {
            const at::Tensor stray = (isBefore ? before : after).ne(kGuardByte).nonzero();
            if (stray.numel() == 0)
                continue;
            // Before the start: report the byte nearest to the output; past the end: the first one.
            const std::int64_t index = isBefore ? stray.max().item<std::int64_t>() : stray.min().item<std::int64_t>();
            return "output " + std::to_string(i) + " written out of bounds: byte " +
                (isBefore ? std::to_string(index - kGuardBytes) + " (before the start)"
                          : "+" + std::to_string(index) + " past the end");
        }
    }
    return {};
}

LaunchBindings bindingsFor(const OperatorCard& card, const std::vector<c10::IValue>& inputs,
                           const CandidateOutputs& outputs, const std::map<std::string, at::Tensor>& scratch,
                           const std::optional<MutatedArgument>& mutated)
{
    LaunchBindings bindings;
    for (size_t i = 0; i < card.args.size() && i < inputs.size(); ++i) {
        const ArgSpec& arg = card.args[i];
        if (arg.kind == ArgKind::Tensor && inputs[i].isTensor() && card.isHostNumberArg(arg)) {
            // A host number stays on the host (CardInputSets.h); the kernel takes its value.
            bindings.cardValues[arg.name] = inputs[i].toTensor().item<double>();
        } else if (arg.kind == ArgKind::Tensor && inputs[i].isTensor()) {
            bindings.tensorArgs[arg.name] = reinterpret_cast<CUdeviceptr>(inputs[i].toTensor().data_ptr());
        } else if (arg.kind == ArgKind::TensorList && inputs[i].isList()) {
            int k = 0;
            for (const c10::IValue& element : inputs[i].toListRef()) {
                if (element.isTensor() && element.toTensor().defined())
                    bindings.tensorArgs[arg.name + "." + std::to_string(k++)] =
                        reinterpret_cast<CUdeviceptr>(element.toTensor().data_ptr());
            }
        } else if (arg.kind == ArgKind::Value && (arg.value.is_number() || arg.value.is_boolean())) {
            bindings.cardValues[arg.name] =
                arg.value.is_boolean() ? (arg.value.get<bool>() ? 1.0 : 0.0) : arg.value.get<double>();
        }
    }
    for (const at::Tensor& view : outputs.views)
        bindings.outputs.push_back(reinterpret_cast<CUdeviceptr>(view.data_ptr()));
    if (mutated && !outputs.views.empty())
        bindings.tensorArgs[mutated->name] = bindings.outputs[0];
    for (const auto& [name, buffer] : scratch)
        bindings.scratch[name] = reinterpret_cast<CUdeviceptr>(buffer.data_ptr());
    return bindings;
}

std::map<std::string, at::Tensor> allocateScratch(const LaunchPlan& plan, c10::Device device)
{
    std::map<std::string, at::Tensor> scratch;
    for (const ScratchBuffer& spec : plan.scratch) {
        at::Tensor buffer = at::empty({spec.bytes}, at::TensorOptions().dtype(at::kByte).device(device));
        // Not zeroed unless asked: reading scratch before writing it shows up as garbage.
        buffer.fill_(spec.zeroed ? 0 : kGuardByte);
        scratch[spec.name] = buffer;
    }
    return scratch;
}

CUstream currentStream()
{
    return reinterpret_cast<CUstream>(at::cuda::getCurrentCUDAStream().stream());
}

// Runs the candidate once on `set`; returns its outputs or the reason it failed.
// The value output 0 starts from: the written argument's input value for an in-place operator.
const at::Tensor* initialOutput0(const InputSet& set, const std::optional<MutatedArgument>& mutated)
{
    if (!mutated || !mutated->startsFromInput || mutated->index >= set.inputs.size() ||
        !set.inputs[mutated->index].isTensor())
        return nullptr;
    return &set.inputs[mutated->index].toTensor();
}

Result<CandidateOutputs> runCandidate(const CubinModule& module, const LaunchPlan& plan, const OperatorCard& card,
                                      const InputSet& set, c10::Device device, bool secondPoison,
                                      const std::optional<MutatedArgument>& mutated)
{
    auto outputs = allocateOutputs(plan, device, secondPoison, initialOutput0(set, mutated));
    if (!outputs)
        return outputs.error();
    const auto scratch = allocateScratch(plan, device);
    auto launched =
        module.launch(plan, bindingsFor(card, set.inputs, outputs.value(), scratch, mutated), currentStream());
    if (!launched)
        return launched.error();
    synchronizeOrDie("candidate launch on " + set.name);
    return outputs;
}

json checkJson(const std::string& name, bool passed, const std::string& detail)
{
    return json{{"name", name}, {"passed", passed}, {"detail", detail}};
}

// The chain whose float64 run judges `card`'s outputs where they differ from eager's beyond the
// tolerance: a region card's own; for a single-op card whose eager kernel rounds every step (a
// scan) or accumulates in an order of its own (a reduction: sums of many terms whose rounding
// errors differ from eager's where the result cancels), its one-member chain (made into `opChain`
// once); none for any other card.
const RegionChain* float64Judge(const OperatorCard& card, std::optional<RegionChain>& opChain)
{
    if (card.region)
        return &*card.region;
    if (!eagerRoundsEveryStep(card.op) && opClassOf(card.op) != OpClass::Reduction)
        return nullptr;
    if (!opChain) {
        auto chainCard = makeOpChainCard(card);
        if (!chainCard || !chainCard->region)
            return nullptr;
        opChain = *chainCard->region;
    }
    return &*opChain;
}

// The dim a scan card (cumsum, cumprod) scans, in [0, rank): its "dim" argument; nullopt for any
// other card or an argument out of range.
std::optional<std::size_t> scannedDim(const OperatorCard& card, std::int64_t rank)
{
    if (!eagerRoundsEveryStep(card.op))
        return std::nullopt;
    const ArgSpec* dim = card.findArg("dim");
    if (!dim || dim->kind != ArgKind::Value || !dim->value.is_number_integer())
        return std::nullopt;
    std::int64_t d = dim->value.get<std::int64_t>();
    if (d < 0)
        d += rank;
    if (d < 0 || d >= rank)
        return std::nullopt;
    return static_cast<std::size_t>(d);
}

// A region's chain run in float64 on copies of `inputs`: the exact value its outputs approximate.
Result<std::vector<at::Tensor>> chainInFloat64(const RegionChain& chain, const std::vector<at::Tensor>& inputs)
{
    auto replay = ChainReplay::prepare(chain, ReplayPrecision::Float64);
    if (!replay)
        return replay.error();
    return replay.value().run(inputs);
}

struct Validation {
    bool passed = true;
    json checks = json::array();
    json failure;
};

void fail(Validation& v, const std::string& check, const std::string& message)
{
    v.checks.push_back(checkJson(check, false, message));
    if (v.passed)
        v.failure = json{{"check", check}, {"message", message}};
    v.passed = false;
}

Validation validate(const CubinModule& module, const LaunchPlan& plan, const OperatorCard& card,
                    const CardInputSets& sets, c10::Device device, const std::optional<MutatedArgument>& mutated)
{
    Validation v;
    const OpClass opClass = opClassOf(card);
    std::optional<RegionChain> opChain; // a single-op card's chain, made when a set first needs it
    // Resident sets stay alive while later ones run, so no two of them share input addresses; a
    // transient set may reuse the last one's, but with other values: a kernel that caches results
    // by pointer fails either way.
    for (std::size_t k = 0; k < sets.size(); ++k) {
        auto held = sets.at(k);
        if (!held) {
            fail(v, "input set " + std::to_string(k + 1), held.error().toString());
            return v;
        }
        const InputSet& set = *held.value();
        std::vector<at::Tensor> pristine;
        for (const at::Tensor& t : tensorsOf(set.inputs))
            pristine.push_back(torchinterop::cloneExact(t, t.device()));
        auto first = runCandidate(module, plan, card, set, device, false, mutated);
        if (!first) {
            fail(v, set.name + ": launch", first.error().toString());
            return v;
        }
        if (const std::string stray = strayWrites(first.value()); !stray.empty()) {
            fail(v, set.name + ": bounds", stray);
            return v;
        }
        Result<std::vector<at::Tensor>> golden = makeError(ErrorCode::Internal, "not run", "float64 chain");
        const std::vector<at::Tensor> inputsAfter = tensorsOf(set.inputs);
        for (size_t i = 0; i < inputsAfter.size(); ++i) {
            if (!bitwiseEqual(inputsAfter[i], pristine[i])) {
                fail(v, set.name + ": inputs", "input tensor " + std::to_string(i) + " was modified by the candidate");
                return v;
            }
        }
        for (size_t o = 0; o < first->views.size(); ++o) {
            const std::string check = set.name + ": output " + std::to_string(o);
            if (o >= set.expected.size()) {
                fail(v, check, "eager produced no output " + std::to_string(o));
                return v;
            }
            if (first->views[o].sizes() != set.expected[o].sizes()) {
                fail(v, check, "shape differs from eager's");
                return v;
            }
            const Tolerance tolerance = toleranceFor(card.outputs.at(o).dtype, opClass);
            double maxAbs = 0;
            if (allWithinTolerance(first->views[o], set.expected[o], tolerance, maxAbs)) {
                ComparisonResult passed;
                passed.elements = first->views[o].numel();
                passed.maxAbsError = maxAbs;
                v.checks.push_back(checkJson(check, true, passed.describe(tolerance)));
                continue;
            }
            const at::Tensor& got = first->views[o];
            const ComparisonResult result = compareInSlices(got, set.expected[o], tolerance);
            const RegionChain* judge = float64Judge(card, opChain);
            if (!judge || tolerance.exact) {
                fail(v, check, result.describe(tolerance));
                return v;
            }
            // A chain: eager rounds each member's output, the kernel may round once (OutputComparison.h);
            // a scan: eager rounds every step (Tolerance.h); a reduction: another summation order.
            if (!golden) {
                golden = chainInFloat64(*judge, tensorsOf(set.inputs));
                if (!golden) {
                    fail(v, check,
                         result.describe(tolerance) + "; no float64 run of the chain: " + golden.error().toString());
                    return v;
                }
            }
            const std::optional<std::size_t> scanned = card.region ? std::nullopt : scannedDim(card, got.dim());
            const ComparisonResult viaGolden = compareWithGoldenInSlices(got, set.expected[o], golden.value().at(o),
                                                                         tolerance, kGoldenMultiplier, scanned);
            const std::string verdict =
                describeGoldenComparison(viaGolden, tolerance, kGoldenMultiplier, scanned.has_value());
            if (!viaGolden.passed) {
                fail(v, check, result.describe(tolerance) + "; " + verdict);
                return v;
            }
            v.checks.push_back(checkJson(check, true, verdict));
        }
        // Determinism: a second run with a different poison (an in-place output starts from the
        // input again) must give the same bits.
        auto second = runCandidate(module, plan, card, set, device, true, mutated);
        if (!second) {
            fail(v, set.name + ": second launch", second.error().toString());
            return v;
        }
        for (size_t o = 0; o < second->views.size(); ++o) {
            if (!bitwiseEqual(second->views[o], first->views[o])) {
                fail(v, set.name + ": determinism",
                     "output " + std::to_string(o) +
                         " differs between two runs on the same inputs (a race, or elements left unwritten)");
                return v;
            }
        }
        v.checks.push_back(checkJson(set.name + ": determinism", true, "two runs bit-identical"));
    }
    return v;
}

EagerTiming summarize(std::vector<double> us, const std::string& method)
{
    return summarizeDurations(std::move(us), "", method);
}

json timingJson(const EagerTiming& t)
{
    return json{{"median_us", t.medianUs}, {"q1_us", t.q1Us}, {"q3_us", t.q3Us}, {"repetitions", t.repetitions}};
}

// Times candidate and eager on the same inputs, interleaved, each repetition a bracket.
Result<json> timeBoth(const CubinModule& module, const LaunchPlan& plan, const OperatorCard& card, const InputSet& set,
                      const EagerReference& eager, c10::Device device, const EvalOptions& options,
                      const std::optional<MutatedArgument>& mutated)
{
    static std::unique_ptr<GpuActivityTimer> cupti;
    static std::string cuptiProblem;
    if (!cupti && cuptiProblem.empty()) {
        auto created = GpuActivityTimer::create();
        if (created)
            cupti = std::move(created.value());
        else
            cuptiProblem = created.error().toString();
    }
    auto outputs = allocateOutputs(plan, device, false, initialOutput0(set, mutated));
    if (!outputs)
        return outputs.error();
    const auto scratch = allocateScratch(plan, device);
    const LaunchBindings bindings = bindingsFor(card, set.inputs, outputs.value(), scratch, mutated);
    // Eager writes into an in-place or out= operator's argument (or a region's chain into an input
    // in place): it runs on copies, so the cached inputs that later candidates validate against
    // keep their values.
    std::vector<c10::IValue> eagerInputs = set.inputs;
    if (mutated || card.isRegion())
        for (c10::IValue& value : eagerInputs)
            value = cloneWhereItIs(value);
    at::Tensor flush = at::empty({kL2FlushBytes}, at::TensorOptions().dtype(at::kByte).device(device));
    const CUstream stream = currentStream();

    for (int i = 0; i < options.warmup; ++i) {
        if (auto r = module.launch(plan, bindings, stream); !r)
            return r.error();
        eager(eagerInputs);
    }
    synchronizeOrDie("warm-up");

    std::vector<double> candidateCold, eagerCold, candidateWarm, eagerWarm;
    auto measure = [&](bool flushL2, int repetitions, std::vector<double>& cand,
                       std::vector<double>& eag) -> Result<void> {
        std::vector<cudaEvent_t> events;
        if (!cupti) {
            events.resize(4 * repetitions);
            for (cudaEvent_t& e : events)
                cudaEventCreate(&e);
        }
        for (int r = 0; r < repetitions; ++r) {
            for (int which = 0; which < 2; ++which) {
                if (flushL2)
                    flush.zero_();
                const std::uint64_t tag = 1 + 2 * static_cast<std::uint64_t>(r) + which;
                if (cupti)
                    cupti->begin(tag);
                else
                    cudaEventRecord(events[2 * (tag - 1)], reinterpret_cast<cudaStream_t>(stream));
                if (which == 0) {
                    if (auto launched = module.launch(plan, bindings, stream); !launched)
                        return launched.error();
                } else {
                    eager(eagerInputs);
                }
                if (cupti)
                    cupti->end();
                else
                    cudaEventRecord(events[2 * (tag - 1) + 1], reinterpret_cast<cudaStream_t>(stream));
            }
        }
        synchronizeOrDie("timing");
        if (cupti) {
            auto times = cupti->collect();
            if (!times)
                return times.error();
            // Every repetition must have recorded GPU work for both: a missing bracket is a timer
            // failure, never a zero.
            for (int r = 0; r < repetitions; ++r) {
                for (const std::uint64_t tag :
                     {1 + 2 * static_cast<std::uint64_t>(r), 2 + 2 * static_cast<std::uint64_t>(r)}) {
                    auto found = times->find(tag);
                    if (found == times->end() || found->second.activities == 0) {
                        const auto& stats = cupti->lastStats();
                        return makeError(ErrorCode::Internal,
                                         "CUPTI recorded no GPU work for repetition " + std::to_string(r) + " (" +
                                             std::to_string(stats.activities) + " activities, " +
                                             std::to_string(stats.correlations) + " correlations, " +
                                             std::to_string(stats.matched) + " matched)",
                                         "timing");
                    }
                }
                cand.push_back((*times)[1 + 2 * r].gpuNs / 1000.0);
                eag.push_back((*times)[2 + 2 * r].gpuNs / 1000.0);
            }
        } else {
            for (int r = 0; r < repetitions; ++r) {
                float ms = 0;
                cudaEventElapsedTime(&ms, events[4 * r], events[4 * r + 1]);
                cand.push_back(ms * 1000.0);
                cudaEventElapsedTime(&ms, events[4 * r + 2], events[4 * r + 3]);
                eag.push_back(ms * 1000.0);
            }
            for (cudaEvent_t e : events)
                cudaEventDestroy(e);
        }
        return {};
    };
    auto pairedRatios = [&] {
        std::vector<double> ratios;
        for (size_t i = 0; i < candidateCold.size(); ++i)
            ratios.push_back(candidateCold[i] > 0 ? eagerCold[i] / candidateCold[i] : 0);
        return ratios;
    };
    // A search tells the card's best speedup: a candidate clearly slower after the first brackets
    // is not timed further (docs/validation.md, "Stopping early").
    const int look =
        options.bestSpeedup > 0 ? std::min(kEarlyLookRepetitions, options.repetitions) : options.repetitions;
    if (auto r = measure(true, look, candidateCold, eagerCold); !r)
        return r.error();
    const bool stoppedEarly = look < options.repetitions && clearlySlowerThanBest(pairedRatios(), options.bestSpeedup);
    if (!stoppedEarly && options.repetitions > look)
        if (auto r = measure(true, options.repetitions - look, candidateCold, eagerCold); !r)
            return r.error();
    const int warmRepetitions =
        stoppedEarly ? std::min(kStoppedWarmRepetitions, options.warmRepetitions) : options.warmRepetitions;
    if (auto r = measure(false, warmRepetitions, candidateWarm, eagerWarm); !r)
        return r.error();

    const std::string method = cupti ? "cupti kernel activity, L2 flushed" : "cuda events, L2 flushed";
    const EagerTiming candidate = summarize(candidateCold, method);
    const EagerTiming eagerTiming = summarize(eagerCold, method);
    const std::vector<double> ratios = pairedRatios();

    const EagerTiming paired = summarizeDurations(ratios, "", "paired ratio"); // the ratios' median, quartiles
    json result{{"method", method},
                {"candidate", timingJson(candidate)},
                {"eager", timingJson(eagerTiming)},
                {"candidate_warm_l2", timingJson(summarize(candidateWarm, "warm L2"))},
                {"eager_warm_l2", timingJson(summarize(eagerWarm, "warm L2"))},
                {"speedup", paired.medianUs},
                {"speedup_q1", paired.q1Us},
                {"speedup_q3", paired.q3Us},
                {"speedup_of_medians", candidate.medianUs > 0 ? eagerTiming.medianUs / candidate.medianUs : 0}};
    if (stoppedEarly)
        result["stopped_early"] = json{
            {"after_repetitions", look}, {"best_speedup", options.bestSpeedup}, {"speedup_q3", thirdQuartile(ratios)}};
    if (!cupti)
        result["cupti_unavailable"] = cuptiProblem;
    return result;
}

// Device memory after an evaluation: PyTorch's live tensor bytes (which must return to the same
// value after every candidate: the card's inputs are all that stays), their peak during this
// evaluation and the driver's view.
json deviceMemory(c10::Device device)
{
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    const auto aggregate = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    size_t free = 0;
    size_t total = 0;
    cudaMemGetInfo(&free, &total);
    return json{{"allocated_bytes", stats.allocated_bytes[aggregate].current},
                {"peak_allocated_bytes", stats.allocated_bytes[aggregate].peak},
                {"reserved_bytes", stats.reserved_bytes[aggregate].current},
                {"device_used_bytes", total - free}};
}

} // namespace

Result<json> describeGpu()
{
    if (!torch::cuda::is_available())
        return makeError(ErrorCode::Unsupported, "no usable CUDA device", "worker");
    const cudaDeviceProp* props = at::cuda::getDeviceProperties(0);
    int driver = 0;
    cudaDriverGetVersion(&driver); // 0 when it cannot say: still a stable description
    // The versions are part of what a remembered sanitizer verdict depended on (SanitizerVerdictCache).
    return json{{"gpu", props->name},
                {"compute_capability", std::to_string(props->major) + "." + std::to_string(props->minor)},
                {"architecture", "sm_" + std::to_string(props->major) + std::to_string(props->minor)},
                {"sms", props->multiProcessorCount},
                {"l2_bytes", props->l2CacheSize},
                {"memory_bytes", props->totalGlobalMem},
                {"cuda_driver", driver},
                {"torch", TORCH_VERSION}};
}

namespace {

// evaluateCandidate's work; throws c10::OutOfMemoryError when the device runs out.
Result<json> runEvaluation(const json& request)
{
    for (const char* field : {"project_dir", "card", "plan", "cubin_base64"}) {
        if (!request.contains(field))
            return makeError(ErrorCode::InvalidArgument, std::string("missing field '") + field + "'", "evaluate");
    }
    auto card = cardFromJson(request.at("card"), "card");
    if (!card)
        return card.error();
    auto plan = parseLaunchPlan(request.at("plan"), card.value());
    if (!plan)
        return plan.error();
    if (auto valid = validateLaunchPlan(plan.value(), card.value()); !valid)
        return valid.error();
    if (card->samples.empty())
        return makeError(
            ErrorCode::InvalidArgument,
            "the card has no captured samples to validate against (" +
                (card->samplesNote.empty() ? std::string("capture with --samples 1 or more") : card->samplesNote) + ")",
            "card " + card->id);
    auto cubinText = base64Decode(request.at("cubin_base64").get<std::string>());
    if (!cubinText)
        return cubinText.error();
    const std::vector<std::uint8_t> cubin(cubinText->begin(), cubinText->end());
    if (!torch::cuda::is_available())
        return makeError(ErrorCode::Unsupported, "no usable CUDA device", "worker");
    const EvalOptions options = parseOptions(request);
    const c10::Device device(c10::kCUDA, 0);
    auto handle = EagerReference::of(card.value());
    if (!handle)
        return handle.error();
    // A region card's arguments are all read-only inputs: its kernel writes fresh outputs.
    auto mutated = handle->schema() ? mutatedArgumentOf(*handle->schema(), card.value(), plan.value())
                                    : Result<std::optional<MutatedArgument>>(std::optional<MutatedArgument>{});
    if (!mutated)
        return mutated.error();

    c10::InferenceMode inferenceMode;
    PhaseClock clock;
    // The caching allocator's statistics exist once CUDA is initialized: resetting them in a fresh
    // worker before anything touched the device throws "Invalid device argument".
    at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
    c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
    cudaFree(nullptr); // makes the primary context current for the driver API
    auto module = CubinModule::load(cubin, plan.value());
    if (!module)
        return module.error();

    const fs::path projectDir = request.at("project_dir").get<std::string>();
    InputSetOptions setOptions;
    setOptions.freshSets = options.freshInputSets;
    setOptions.seed = options.seed;
    setOptions.eagerWritesInputs = mutated->has_value() || card->isRegion();
    setOptions.residentBytes = options.residentBytes;
    auto inputs = cardInputs(projectDir, card.value(), *handle, setOptions, device);
    if (!inputs)
        return inputs.error();
    const CardInputSets& sets = *inputs.value();
    clock.lap("inputs_and_references");

    json report{{"card", card->id}, {"op", card->qualifiedName()}, {"device", describeGpu().value()}};
    const Validation validation = validate(module.value(), plan.value(), card.value(), sets, device, mutated.value());
    clock.lap("validation");
    report["phase_ms"] = clock.laps;
    report["checks"] = validation.checks;
    report["validated_input_sets"] = sets.size();
    report["input_sets"] = sets.describe();
    report["device_memory"] = deviceMemory(device);
    if (!validation.passed && validation.failure.value("check", std::string()).ends_with(": inputs"))
        forgetCardInputs(); // the candidate wrote into the cached inputs: `sets` is gone from here on
    if (!validation.passed) {
        report["status"] = "failed";
        report["failure"] = validation.failure;
        return report;
    }
    report["status"] = "passed";
    if (!options.time)
        return report;
    auto timing = timeBoth(module.value(), plan.value(), card.value(), sets.timingSet(), *handle, device, options,
                           mutated.value());
    if (!timing)
        return timing.error();
    report["timing"] = timing.value();
    clock.lap("timing");
    report["phase_ms"] = clock.laps;
    report["device_memory"] = deviceMemory(device);

    const std::int64_t bytes = minimumBytesMoved(card.value(), plan.value());
    const double medianUs = timing.value()["candidate"]["median_us"].get<double>();
    json bandwidth{{"bytes", bytes}};
    auto copy = deviceCopyBandwidth(0);
    if (copy && medianUs > 0) {
        const double achieved = static_cast<double>(bytes) / (medianUs * 1e-6); // bytes per second
        bandwidth["achieved_gb_per_s"] = achieved / 1e9;
        bandwidth["device_copy_gb_per_s"] = copy.value() / 1e9;
        bandwidth["fraction_of_copy"] = achieved / copy.value();
        if (achieved > 1.10 * copy.value()) {
            report["status"] = "failed";
            report["failure"] = json{{"check", "timing"},
                                     {"message",
                                      "timing rejected: the candidate would move " + std::to_string(bytes) +
                                          " bytes faster than the device's measured copy bandwidth allows "
                                          "(a measurement error, or outputs not written)"}};
        }
    } else if (!copy) {
        bandwidth["unavailable"] = copy.error().toString();
    }
    report["bandwidth"] = bandwidth;
    return report;
}

} // namespace

Result<json> evaluateCandidate(const json& request)
{
    try {
        return runEvaluation(request);
    } catch (const c10::OutOfMemoryError&) {
        // One line for the node instead of the allocator's paragraph; the cached sets and the
        // allocator's blocks go, so that the next candidate starts from an empty device.
        const c10::Device device(c10::kCUDA, 0);
        const json memory = deviceMemory(device);
        forgetCardInputs();
        c10::cuda::CUDACachingAllocator::emptyCache();
        const auto gib = [](std::int64_t bytes) {
            char text[32];
            std::snprintf(text, sizeof text, "%.1f", static_cast<double>(bytes) / (1 << 30));
            return std::string(text);
        };
        const std::int64_t total = at::cuda::getDeviceProperties(0)->totalGlobalMem;
        const std::int64_t others =
            memory["device_used_bytes"].get<std::int64_t>() - memory["reserved_bytes"].get<std::int64_t>();
        return makeError(ErrorCode::Unsupported,
                         "out of GPU memory: this evaluation held " +
                             gib(memory["peak_allocated_bytes"].get<std::int64_t>()) +
                             " GiB at its peak, other processes " + gib(std::max<std::int64_t>(others, 0)) +
                             " GiB, of the device's " + gib(total) + " GiB",
                         "evaluate");
    }
}

} // namespace kforge::core
