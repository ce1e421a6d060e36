#include "capture/CaptureJob.h"

#include "capture/DeviceWaits.h"

#include "capture/EagerReplay.h"
#include "capture/OpRecorder.h"
#include "capture/RegionCapture.h"
#include "capture/SampleBudget.h"
#include "capture/SampleIO.h"
#include "capture/TorchInterop.h"
#include "capture/TorchModel.h"
#include "model/InputSpec.h"
#include "project/ProjectStore.h"
#include "util/AtomicFile.h"
#include "util/Hash.h"
#include "util/UtcTime.h"
#include "util/Version.h"

#include <c10/core/InferenceMode.h>
#include <torch/headeronly/version.h>

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <optional>
#include <sstream>

namespace kforge::core {
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

bool stopRequested(const std::atomic<bool>* stop)
{
    return stop && stop->load(std::memory_order_relaxed);
}

void setPhase(CaptureProgress* progress, CapturePhase phase, int total = 0)
{
    if (!progress)
        return;
    progress->done = 0;
    progress->total = total;
    progress->phase = phase;
}

Error cancelled()
{
    return makeError(ErrorCode::Cancelled, "capture cancelled; no project was written");
}

// Everything after the output folder is reserved; any failure discards the staging folder. Its lock
// is held until then (a later capture removes a staging folder only when its lock is free).
class StagingGuard {
public:
    explicit StagingGuard(StagingDir staging) : m_staging(std::move(staging)) {}
    ~StagingGuard()
    {
        if (!m_committed)
            discardStaging(m_staging.path);
    }
    const fs::path& path() const { return m_staging.path; }
    void committed() { m_committed = true; }

private:
    StagingDir m_staging;
    bool m_committed = false;
};

Result<void> saveSamples(std::vector<RecordedVariant>& variants, const fs::path& projectDir, CaptureProgress* progress,
                         const std::atomic<bool>* stop)
{
    int done = 0;
    for (RecordedVariant& variant : variants) {
        if (stopRequested(stop))
            return cancelled();
        if (!variant.samples.empty()) {
            const fs::path relativeDir = fs::path(ProjectPaths::kSamplesDir) / variant.card.id;
            std::error_code ec;
            fs::create_directories(projectDir / relativeDir, ec);
            if (ec)
                return makeError(ErrorCode::Io, "cannot create sample folder: " + ec.message(),
                                 (projectDir / relativeDir).string());
            for (CapturedSample& sample : variant.samples) {
                const fs::path relative = relativeDir / ("call-" + std::to_string(sample.callPosition) + ".pt");
                auto saved = saveSampleFile(projectDir / relative, SampleTensors{sample.inputs, sample.outputs});
                if (!saved)
                    return saved.error();
                variant.card.samples.push_back(SampleRef{sample.callPosition, relative.string(), sample.bytes});
            }
            variant.samples.clear(); // free host memory early
        }
        if (progress)
            progress->done = ++done;
    }
    return {};
}

// When the sample budget ran out: how many cards it left without a sample (they cannot be
// validated, so no kernel can be proven for them), their share of the model's time, and the budget
// that would have sampled their first calls. `cards` are the variants' cards, in the same order.
std::optional<std::string> sampleBudgetNote(const std::vector<RecordedVariant>& variants,
                                            const std::vector<OperatorCard>& cards, std::int64_t budgetBytes,
                                            std::int64_t usedBytes)
{
    int unsampled = 0;
    double share = 0;
    std::int64_t missingBytes = 0;
    for (size_t i = 0; i < variants.size() && i < cards.size(); ++i) {
        if (!variants[i].budgetExhausted || !cards[i].samples.empty())
            continue;
        ++unsampled;
        share += cards[i].timeShare;
        missingBytes += variants[i].unsampledBytes;
    }
    if (unsampled == 0)
        return std::nullopt;
    constexpr std::int64_t kMiB = 1 << 20;
    const auto mib = [](std::int64_t bytes) { return std::to_string((bytes + kMiB - 1) / kMiB); };
    std::ostringstream text;
    text << "the sample budget (" << mib(budgetBytes) << " MB) ran out: " << unsampled << " card"
         << (unsampled == 1 ? "" : "s") << " (" << std::fixed << std::setprecision(1) << share * 100.0
         << "% of model time) have no sample, so no kernel can be validated for them; --sample-budget-mb "
         << mib(usedBytes + missingBytes) << " would sample their first calls";
    return text.str();
}

void describeMissingSamples(RecordedVariant& variant, const CaptureOptions& options)
{
    OperatorCard& card = variant.card;
    if (card.vendorBacked && !options.sampleVendorBacked)
        card.samplesNote = "vendor-backed (cuBLAS/cuDNN): not sampled; pass --sample-vendor to include";
    else if (variant.outputAliasesInput)
        card.samplesNote = kAliasOutputSamplesNote;
    else if (variant.budgetExhausted)
        card.samplesNote = "sample budget exhausted (raise --sample-budget-mb)";
    else if (options.samplesPerCard > 0 && static_cast<std::int64_t>(card.samples.size()) < card.callCount &&
             static_cast<int>(card.samples.size()) < options.samplesPerCard)
        card.samplesNote = "fewer calls than --samples";
}

} // namespace

const char* capturePhaseName(CapturePhase phase)
{
    switch (phase) {
    case CapturePhase::Starting:
        return "starting";
    case CapturePhase::Loading:
        return "loading model";
    case CapturePhase::Warmup:
        return "warm-up run";
    case CapturePhase::Recording:
        return "recording operators";
    case CapturePhase::SavingSamples:
        return "saving samples";
    case CapturePhase::TimingEager:
        return "timing eager operators";
    case CapturePhase::Regions:
        return "sampling fused regions";
    case CapturePhase::Writing:
        return "writing project";
    case CapturePhase::Done:
        return "done";
    }
    return "?";
}

Result<CaptureReport> runCapture(const CaptureOptions& options, CaptureProgress* progress,
                                 const std::atomic<bool>* stop)
{
    const auto captureStart = Clock::now();
    CaptureReport report;
    if (options.samplesPerCard < 0)
        return makeError(ErrorCode::InvalidArgument, "must be 0 or more", "--samples");
    std::int64_t sampleBudgetBytes = options.sampleBudgetBytes;
    std::optional<SampleBudget> automaticBudget;
    if (sampleBudgetBytes == kAutomaticSampleBudget) {
        auto resolved = resolveAutomaticSampleBudget(options.outputDir);
        if (!resolved)
            return resolved.error();
        automaticBudget = resolved.value();
        sampleBudgetBytes = automaticBudget->bytes;
    } else if (sampleBudgetBytes < 0) {
        return makeError(ErrorCode::InvalidArgument, "must be 0 or more", "--sample-budget-mb");
    }
    auto inputSpec = parseInputSpec(options.inputs);
    if (!inputSpec)
        return inputSpec.error();
    std::error_code ec;
    if (!fs::exists(options.modelPath, ec))
        return makeError(ErrorCode::NotFound, "no such model file", options.modelPath.string());
    auto device = resolveDevice(options.device);
    if (!device)
        return device.error();

    auto staging = beginStaging(options.outputDir);
    if (!staging)
        return staging.error();
    report.notes = staging->removedLeftovers;
    StagingGuard stagingGuard(std::move(staging.value()));

    // Load.
    setPhase(progress, CapturePhase::Loading);
    auto phaseStart = Clock::now();
    auto module = loadTorchScript(options.modelPath, device.value());
    if (!module)
        return module.error();
    auto modelBytes = readWholeFile(options.modelPath);
    if (!modelBytes)
        return modelBytes.error();
    auto inputs = makeInputs(inputSpec.value(), device.value(), options.seed);
    if (!inputs)
        return inputs.error();
    report.times.loadMs = msSince(phaseStart);
    if (stopRequested(stop))
        return cancelled();

    // Warm-up (this is where the model rejects bad inputs), then a plain forward as reference. Every
    // forward goes through runForward, op by op (forwardOpByOp: no fused NNC kernels the recording
    // would miss), so the reference and the recorded forward run the same ops.
    setPhase(progress, CapturePhase::Warmup);
    auto warm = runForward(module.value(), inputs.value(), device.value());
    if (!warm) {
        Error error = warm.error();
        error.context = options.modelPath.string();
        return error;
    }
    std::vector<double> plain;
    for (int i = 0; i < 3; ++i) {
        const auto start = Clock::now();
        auto again = runForward(module.value(), inputs.value(), device.value());
        if (!again)
            return again.error();
        plain.push_back(msSince(start));
    }
    std::sort(plain.begin(), plain.end());
    report.times.plainForwardMs = plain[1];
    if (stopRequested(stop))
        return cancelled();

    // The recorded run.
    setPhase(progress, CapturePhase::Recording);
    RecorderOptions recorderOptions;
    recorderOptions.device = device.value();
    recorderOptions.samplesPerCard = options.samplesPerCard;
    recorderOptions.sampleBudgetBytes = sampleBudgetBytes;
    recorderOptions.sampleVendorBacked = options.sampleVendorBacked;
    OpRecorder recorder(recorderOptions);
    phaseStart = Clock::now();
    recorder.start();
    auto recorded = runForward(module.value(), inputs.value(), device.value());
    recorder.stop();
    report.times.recordPassMs = msSince(phaseStart);
    if (!recorded)
        return recorded.error();
    if (recorder.callbackError())
        return makeError(ErrorCode::Internal, "recording failed: " + *recorder.callbackError(), "capture");
    if (recorder.totalCalls() == 0)
        return makeError(ErrorCode::BadModel, "the model ran no ATen operators", options.modelPath.string());
    recorder.markModelOutputs(recorded.value());
    std::vector<RecordedVariant>& variants = recorder.variants();

    // Samples.
    setPhase(progress, CapturePhase::SavingSamples, static_cast<int>(variants.size()));
    phaseStart = Clock::now();
    if (auto saved = saveSamples(variants, stagingGuard.path(), progress, stop); !saved)
        return saved.error();
    report.times.saveSamplesMs = msSince(phaseStart);

    // Eager timing by replay, on the capture device.
    setPhase(progress, CapturePhase::TimingEager, static_cast<int>(variants.size()));
    phaseStart = Clock::now();
    const std::string deviceLabel =
        device->is_cuda() ? device->str() + " (" + deviceDisplayName(device.value()) + ")" : std::string("cpu");
    int timed = 0;
    for (RecordedVariant& variant : variants) {
        if (stopRequested(stop))
            return cancelled();
        const bool replayable = std::none_of(variant.card.args.begin(), variant.card.args.end(),
                                             [](const ArgSpec& a) { return a.kind == ArgKind::Opaque; });
        if (!replayable) {
            variant.card.eagerNote = "not replayable (an argument cannot be captured)";
        } else {
            // A host op in a CUDA capture (its tensors are all on the CPU): CUDA events around it
            // would time the host between two event records, not GPU work; the wall clock says
            // what it costs, and the model's GPU time leaves it out (below).
            const bool hostOp = device->is_cuda() && variant.card.runsOnHost();
            auto timing = timeEagerReplay(variant.card.op, variant.card.overload, variant.timingInputs,
                                          hostOp ? c10::Device(c10::kCPU) : device.value(),
                                          hostOp ? std::string("cpu (host op)") : deviceLabel, ReplayTimingOptions{});
            if (timing)
                variant.card.eager = timing.value();
            else
                variant.card.eagerNote = timing.error().message;
        }
        variant.timingInputs.clear();
        describeMissingSamples(variant, options);
        if (progress)
            progress->done = ++timed;
    }
    report.times.eagerTimingMs = msSince(phaseStart);

    // Assemble and write the project.
    setPhase(progress, CapturePhase::Writing);
    Project& project = report.project;
    CaptureInfo& info = project.capture;
    info.modelPath = fs::absolute(options.modelPath, ec).string();
    info.modelSha = fnv1a64Hex(modelBytes.value());
    InputSpec recordedInputs = inputSpec.value();
    if (recordedInputs.file) // so that export's in-model check finds it from any directory
        recordedInputs.file = fs::absolute(*recordedInputs.file, ec).string();
    info.inputs = recordedInputs.toString();
    info.inputSeed = options.seed;
    info.device = device->str();
    info.deviceName = deviceDisplayName(device.value());
    info.torchVersion = TORCH_VERSION;
    info.kforgeVersion = kKforgeVersion;
    info.createdUtc = utcNowIso8601();
    info.totalCalls = recorder.totalCalls();
    info.ignoredCalls = recorder.ignoredCalls();
    info.samplesPerCard = options.samplesPerCard;
    info.sampleBudgetBytes = sampleBudgetBytes;
    const auto inGpuTime = [&](const OperatorCard& card) { return !device->is_cuda() || !card.runsOnHost(); };
    for (RecordedVariant& variant : variants) {
        if (inGpuTime(variant.card))
            info.totalEagerUs += variant.card.totalEagerUs();
        project.cards.push_back(std::move(variant.card));
    }
    // The graph's card indices are the variants' indices, the order of project.cards.
    project.graph = std::move(recorder.graph());
    if (const std::string why = project.graph.problem(project.cards); !why.empty()) {
        // Never write a graph the reader would refuse: the project opens, without regions.
        report.notes.push_back("the call graph was not saved (" + why + "): no fused regions for this project");
        project.graph = CallGraph{};
    }
    for (OperatorCard& card : project.cards)
        card.timeShare = info.totalEagerUs > 0 && inGpuTime(card) ? card.totalEagerUs() / info.totalEagerUs : 0;

    // Fused regions: cards after the op cards (the graph's card indices stay the op cards').
    if (stopRequested(stop))
        return cancelled();
    if (!project.graph.empty()) {
        setPhase(progress, CapturePhase::Regions);
        phaseStart = Clock::now();
        const auto recordForward = [&](OpRecorder& probe) -> Result<void> {
            probe.start();
            auto ran = runForward(module.value(), inputs.value(), device.value());
            probe.stop();
            if (!ran)
                return ran.error();
            return {};
        };
        RegionCaptureOptions regionOptions{device.value(),
                                           deviceLabel,
                                           std::max<std::int64_t>(0, sampleBudgetBytes - recorder.sampleBytes()),
                                           recorder.totalCalls(),
                                           info.totalEagerUs,
                                           stagingGuard.path(),
                                           options.samplesPerCard > 0};
        auto regions = captureRegionCards(project.graph, project.cards, recordForward, regionOptions, stop);
        if (!regions)
            return regions.error().code == ErrorCode::Cancelled ? cancelled() : regions.error();
        report.times.regionsMs = msSince(phaseStart);
        for (std::string& note : regions->notes)
            report.notes.push_back(std::move(note));
        for (OperatorCard& card : regions->cards)
            project.cards.push_back(std::move(card));
    }
    if (stopRequested(stop))
        return cancelled();
    if (!device->is_cuda())
        report.notes.push_back("captured on CPU: latencies are CPU wall-clock times, not GPU times");
    else if (auto note = deviceWaitsNote(project.cards))
        report.notes.push_back(*note);
    if (auto note = sampleBudgetNote(variants, project.cards, sampleBudgetBytes, recorder.sampleBytes()))
        report.notes.push_back(*note);
    if (automaticBudget) {
        std::int64_t used = 0;
        for (const OperatorCard& card : project.cards)
            for (const SampleRef& sample : card.samples)
                used += sample.bytes;
        report.notes.push_back("samples: " + sampleBytesText(used) + " of an automatic budget of " +
                               sampleBytesText(sampleBudgetBytes) + " (" + automaticBudget->basis +
                               "); --sample-budget-mb sets a fixed one");
    }

    if (auto saved = saveProject(stagingGuard.path(), project); !saved)
        return saved.error();
    if (auto committed = commitStaging(stagingGuard.path(), options.outputDir); !committed)
        return committed.error();
    stagingGuard.committed();
    report.times.totalMs = msSince(captureStart);
    setPhase(progress, CapturePhase::Done);
    return report;
}

} // namespace kforge::core
