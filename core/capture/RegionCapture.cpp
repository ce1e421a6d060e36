#include "capture/RegionCapture.h"

#include "capture/ChainReplay.h"
#include "capture/EagerReplay.h"
#include "capture/SampleIO.h"
#include "capture/TorchInterop.h"
#include "checks/MinimumTraffic.h"
#include "project/ProjectStore.h"
#include "regions/RegionFinder.h"
#include "regions/RegionOperatorCard.h"

#include <ATen/ATen.h>
#include <torch/cuda.h>

#include <algorithm>
#include <optional>

namespace kforge::core {
namespace fs = std::filesystem;
namespace {

// Where region input `input` is first read: (member, argument, element).
struct FirstUse {
    int member = -1;
    int arg = 0;
    int element = 0;
};

std::vector<FirstUse> firstUses(const RegionChain& chain, size_t inputs)
{
    std::vector<FirstUse> uses(inputs);
    for (size_t m = 0; m < chain.members.size(); ++m)
        for (size_t a = 0; a < chain.members[m].sources.size(); ++a)
            for (size_t e = 0; e < chain.members[m].sources[a].size(); ++e) {
                const ChainSource& s = chain.members[m].sources[a][e];
                if (!s.fromMember && uses[static_cast<size_t>(s.index)].member < 0)
                    uses[static_cast<size_t>(s.index)] = {static_cast<int>(m), static_cast<int>(a),
                                                          static_cast<int>(e)};
            }
    return uses;
}

std::int64_t specBytes(const TensorSpec& spec)
{
    return spec.storageSpan() * dtypeElementBytes(spec.dtype);
}

std::int64_t cardBytes(const OperatorCard& card)
{
    std::int64_t bytes = 0;
    for (const ArgSpec& arg : card.args)
        bytes += specBytes(arg.tensors.front());
    for (const TensorSpec& output : card.outputs)
        bytes += specBytes(output);
    return bytes;
}

// The replay reproduces the forward's values: same layouts, and numbers within a few roundings
// (the forward and the replay run the same kernels, but a kernel may pick another algorithm).
std::string replayMismatch(const std::vector<at::Tensor>& replayed, const std::vector<at::Tensor>& recorded)
{
    if (replayed.size() != recorded.size())
        return "the replay returns " + std::to_string(replayed.size()) + " values, the forward " +
            std::to_string(recorded.size());
    for (size_t o = 0; o < replayed.size(); ++o) {
        const at::Tensor r = replayed[o].to(c10::Device(c10::kCPU));
        const at::Tensor f = recorded[o];
        if (r.scalar_type() != f.scalar_type() || r.sizes() != f.sizes() || r.strides() != f.strides())
            return "output " + std::to_string(o) + " is " + torchinterop::tensorSpecOf(r).toShortString() +
                " in the replay, " + torchinterop::tensorSpecOf(f).toShortString() + " in the forward";
        if (r.is_floating_point()) {
            if (!at::allclose(r.to(at::kDouble), f.to(at::kDouble), 1e-3, 1e-5, /*equal_nan=*/true))
                return "output " + std::to_string(o) + " differs from the forward's";
        } else if (!at::equal(r, f)) {
            return "output " + std::to_string(o) + " differs from the forward's";
        }
    }
    return {};
}

// What the probe copied at `position`: input (arg, element), or output `output` when arg < 0.
const at::Tensor* probedTensor(const OpRecorder& recorder, std::int64_t position, int arg, int elementOrOutput)
{
    auto call = recorder.probed().find(position);
    if (call == recorder.probed().end())
        return nullptr;
    if (arg < 0) {
        auto found = call->second.outputs.find(elementOrOutput);
        return found == call->second.outputs.end() ? nullptr : &found->second;
    }
    auto found = call->second.inputs.find({arg, elementOrOutput});
    return found == call->second.inputs.end() ? nullptr : &found->second;
}

/// A region's share of model time: what its members' calls take (their op cards' medians, once
/// per occurrence) over the model's total. That is the part of the model a region kernel replaces,
/// measured like every other share, so it is never more than the whole (the chain timed alone is
/// another measurement, with its own noise: it stays the region's eager time). nullopt when a
/// member has no timing.
std::optional<double> memberShare(const RegionChain& chain, const std::vector<OperatorCard>& cards, double modelUs)
{
    if (modelUs <= 0)
        return std::nullopt;
    double us = 0;
    for (const ChainMember& member : chain.members) {
        const auto card =
            std::find_if(cards.begin(), cards.end(), [&](const OperatorCard& c) { return c.id == member.cardId; });
        if (card == cards.end() || !card->eager)
            return std::nullopt;
        us += card->eager->medianUs;
    }
    return us * static_cast<double>(chain.occurrences.size()) / modelUs;
}

} // namespace

Result<RegionCaptureResult> captureRegionCards(const CallGraph& graph, const std::vector<OperatorCard>& cards,
                                               const std::function<Result<void>(OpRecorder&)>& recordForward,
                                               const RegionCaptureOptions& options, const std::atomic<bool>* stop)
{
    RegionCaptureResult result;
    const std::vector<RegionCard> regions = findRegions(graph, cards);
    if (regions.empty())
        return result;
    int refused = 0;
    std::string firstRefusal;
    for (const RegionCard& region : regions) {
        auto card = makeRegionCard(region, cards);
        if (card) {
            result.cards.push_back(std::move(card.value()));
        } else if (++refused == 1) {
            firstRefusal = region.chainText() + ": " + card.error().message;
        }
    }
    if (refused)
        result.notes.push_back(std::to_string(refused) + " fused region" + (refused == 1 ? "" : "s") + " left out (" +
                               firstRefusal + (refused > 1 ? ", ..." : "") + ")");

    // Probes for the first occurrence of every card the budget has room for.
    RecorderOptions probing{options.device, 0, 0, false, false, {}};
    std::vector<char> sampled(result.cards.size(), 0);
    std::vector<std::vector<FirstUse>> uses(result.cards.size());
    std::int64_t budget = options.sampleBytesLeft;
    int overBudget = 0;
    for (size_t c = 0; c < result.cards.size(); ++c) {
        const OperatorCard& card = result.cards[c];
        const std::int64_t bytes = cardBytes(card);
        if (bytes > budget) {
            ++overBudget;
            continue;
        }
        budget -= bytes;
        sampled[c] = 1;
        const RegionChain& chain = *card.region;
        const std::vector<std::int64_t>& positions = chain.occurrences.front();
        uses[c] = firstUses(chain, card.args.size());
        for (const FirstUse& use : uses[c])
            probing.probes[positions[static_cast<size_t>(use.member)]].inputs.emplace_back(use.arg, use.element);
        for (const ChainSource& output : chain.outputs)
            probing.probes[positions[static_cast<size_t>(output.index)]].outputs.push_back(output.output);
    }
    if (overBudget)
        result.notes.push_back(std::to_string(overBudget) + " fused region" + (overBudget == 1 ? "" : "s") +
                               " without a sample: the op cards' samples used the budget (raise --sample-budget-mb)");
    if (probing.probes.empty())
        return result;

    if (stop && stop->load())
        return makeError(ErrorCode::Cancelled, "cancelled", "capture");
    OpRecorder recorder(probing);
    if (auto ran = recordForward(recorder); !ran) {
        result.notes.push_back("fused regions not sampled: the second forward failed (" + ran.error().message + ")");
        return result;
    }
    if (recorder.callbackError() || recorder.totalCalls() != options.expectedCalls) {
        result.notes.push_back("fused regions not sampled: the second forward ran other ops than the first");
        return result;
    }

    std::vector<OperatorCard> kept;
    int unfaithful = 0;
    std::string firstUnfaithful;
    for (size_t c = 0; c < result.cards.size(); ++c) {
        if (stop && stop->load())
            return makeError(ErrorCode::Cancelled, "cancelled", "capture");
        OperatorCard& card = result.cards[c];
        if (!sampled[c]) {
            card.samplesNote = "sample budget exhausted (raise --sample-budget-mb)";
            kept.push_back(std::move(card));
            continue;
        }
        const RegionChain& chain = *card.region;
        const std::vector<std::int64_t>& positions = chain.occurrences.front();
        std::vector<c10::IValue> inputs;
        std::vector<at::Tensor> deviceInputs;
        std::string why;
        for (size_t i = 0; i < uses[c].size() && why.empty(); ++i) {
            const FirstUse& use = uses[c][i];
            const at::Tensor* input =
                probedTensor(recorder, positions[static_cast<size_t>(use.member)], use.arg, use.element);
            // The probe's copy is on the host: the layout must be the one the first forward saw.
            TensorSpec seen = input ? torchinterop::tensorSpecOf(*input) : TensorSpec{};
            seen.device = card.args[i].tensors[0].device;
            if (!input || !(seen == card.args[i].tensors[0]))
                why = "input in" + std::to_string(i) + " was not seen where the first forward saw it";
            else
                inputs.emplace_back(*input);
        }
        std::vector<at::Tensor> recordedOutputs;
        for (size_t o = 0; o < chain.outputs.size() && why.empty(); ++o) {
            const ChainSource& output = chain.outputs[o];
            const at::Tensor* value =
                probedTensor(recorder, positions[static_cast<size_t>(output.index)], -1, output.output);
            if (!value)
                why = "output " + std::to_string(o) + " was not seen where the first forward saw it";
            else
                recordedOutputs.push_back(*value);
        }
        Result<ChainReplay> replay = why.empty() ? ChainReplay::prepare(chain)
                                                 : Result<ChainReplay>(makeError(ErrorCode::Internal, why, card.id));
        if (replay && why.empty()) {
            for (const c10::IValue& input : inputs)
                deviceInputs.push_back(torchinterop::cloneExact(input.toTensor(), options.device));
            auto replayed = replay->run(deviceInputs);
            if (options.device.is_cuda())
                torch::cuda::synchronize(options.device.index());
            why = replayed ? replayMismatch(replayed.value(), recordedOutputs) : replayed.error().message;
        } else if (!replay) {
            why = replay.error().message;
        }
        if (!why.empty()) {
            if (++unfaithful == 1)
                firstUnfaithful = chain.text() + ": " + why;
            continue;
        }

        if (options.saveSamples) {
            const fs::path relativeDir = fs::path(ProjectPaths::kSamplesDir) / card.id;
            std::error_code ec;
            fs::create_directories(options.projectDir / relativeDir, ec);
            if (ec)
                return makeError(ErrorCode::Io, "cannot create sample folder: " + ec.message(),
                                 (options.projectDir / relativeDir).string());
            const fs::path relative = relativeDir / ("call-" + std::to_string(positions.front()) + ".pt");
            std::vector<c10::IValue> outputs(recordedOutputs.begin(), recordedOutputs.end());
            if (auto saved = saveSampleFile(options.projectDir / relative, SampleTensors{inputs, outputs}); !saved)
                return saved.error();
            card.samples.push_back(SampleRef{positions.front(), relative.string(), cardBytes(card)});
        } else {
            card.samplesNote = "--samples 0";
        }

        // The chain alone, as eager runs it (in-place members rewrite their inputs between
        // repetitions, as the model's own values would be).
        const auto run = [&] { (void)replay->run(deviceInputs); };
        auto timing = timeEagerWork(run, chain.text(), options.device, options.deviceLabel, ReplayTimingOptions{});
        if (timing) {
            card.eager = timing.value();
            card.timeShare = memberShare(*card.region, cards, options.modelEagerUs)
                                 .value_or(options.modelEagerUs > 0 ? card.totalEagerUs() / options.modelEagerUs : 0);
        } else {
            card.eagerNote = timing.error().message;
        }
        kept.push_back(std::move(card));
    }
    if (unfaithful)
        result.notes.push_back(std::to_string(unfaithful) + " fused region" + (unfaithful == 1 ? "" : "s") +
                               " left out: replaying the chain does not give the forward's values (" + firstUnfaithful +
                               (unfaithful > 1 ? ", ..." : "") + ")");
    result.cards = std::move(kept);
    return result;
}

} // namespace kforge::core
