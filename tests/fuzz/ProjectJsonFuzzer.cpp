// libFuzzer harness of the project readers (openProject: project.json and cards.json, with every
// card, argument and tensor layout) and of what the CLI does with a project they accept.
//
// Input: project.json, a NUL byte, cards.json. Without a NUL byte the whole input is cards.json and
// project.json is a fixed valid one.

#include "FuzzSupport.h"

#include "project/ProjectJson.h"
#include "project/ProjectStore.h"

#include <cstdint>
#include <string>

using namespace kforge::core;

namespace {

constexpr std::string_view kProjectJson = R"({"format": "kforge-project", "format_version": 1, "capture": {
"model_path": "/m.pt", "model_sha": "0123456789abcdef", "inputs": "2x8", "input_seed": 0, "device": "cpu",
"device_name": "cpu", "torch_version": "2.11.0", "kforge_version": "0.1.0", "created_utc": "2026-11-29T12:00:00Z",
"total_calls": 1, "ignored_calls": 0, "samples_per_card": 1, "sample_budget_bytes": 1048576, "total_eager_us": 1.5}})";

void useProject(const Project& project)
{
    (void)toJson(project.capture).dump();
    for (const OperatorCard& card : project.cards) {
        (void)card.qualifiedName();
        (void)card.displayName();
        if (card.region) { // a region card the reader accepted: its chain prints
            for (size_t m = 0; m < card.region->members.size(); ++m)
                (void)card.region->memberText(m);
            (void)card.region->outputsText();
        }
        (void)card.totalEagerUs();
        (void)card.runsOnHost();
        (void)variantKey(card.op, card.overload, card.args);
        for (const ArgSpec& arg : card.args) {
            (void)arg.toShortString();
            for (const TensorSpec& t : arg.tensors) {
                (void)t.numel();
                (void)t.storageSpan();
                (void)t.isContiguous();
                (void)t.toShortString();
            }
        }
        for (const TensorSpec& t : card.outputs) {
            (void)t.numel();
            (void)t.storageSpan();
            (void)t.toShortString();
        }
        // Whatever the reader accepts, it reads back the same after writing it.
        auto again = cardFromJson(toJson(card), "again");
        if (!again || !(again.value() == card))
            __builtin_trap();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const auto nul = input.find('\0');
    const std::string_view projectJson = nul == std::string_view::npos ? kProjectJson : input.substr(0, nul);
    const std::string_view cardsJson = nul == std::string_view::npos ? input : input.substr(nul + 1);
    const auto& dir = kforge::fuzz::scratchDir();
    kforge::fuzz::writeFile(dir / ProjectPaths::kProjectFile, projectJson);
    kforge::fuzz::writeFile(dir / ProjectPaths::kCardsFile, cardsJson);
    auto project = openProject(dir);
    if (project)
        useProject(project.value());
    else if (project.error().toString().find('\n') != std::string::npos)
        __builtin_trap(); // every refusal is one line
    return 0;
}
