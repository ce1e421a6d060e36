#include "llm_proposer/LlmPrompt.h"

#include "model/NodeRanking.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace kforge::core {

const char* const kLlmCandidateContract = R"(CANDIDATE CONTRACT
A candidate is CUDA C++ source plus a launch plan.
Source:
- One translation unit compiled with NVRTC (--std=c++17 -default-device -lineinfo) for the target
  architecture. It may include only CUDA toolkit headers: cuda_fp16.h, cuda_bf16.h, cuda_fp8.h,
  cooperative_groups.h (and cooperative_groups/...), mma.h, cuda_pipeline.h, cuda_awbarrier.h,
  math_constants.h, and CUB / libcu++ from CCCL (#include <cub/block/block_reduce.cuh>, <cuda/std/...>),
  every #include before the first #define. Anything else is refused before compiling: other
  headers, ## token pasting, __has_include, #line, _Pragma, #pragma other than unroll / nounroll,
  device-side launches (<<<...>>>). No host code, no cuBLAS/cuDNN/cuFFT calls.
- Every kernel the plan launches is declared extern "C" __global__ (no name mangling).
- Kernels keep no state between launches (they run several times on several inputs).
- Tensors have exactly the sizes and strides the card lists (write for that layout).
Launch plan (JSON, embedded in the source as a block comment that starts with /*kforge-plan and
ends at the first */):
  {"launches": [{"kernel": "NAME", "grid": [X, Y, Z], "block": [X, Y, Z], "shared_bytes": 0,
                 "args": ["ptr:self", "ptr:out0", "i32:4096", "f32:eps"]}],
   "scratch": [{"name": "partials", "bytes": 16384, "zero": true}]}
- 1 to 16 launches, run in order on one stream. grid/block: a number or 1..3 numbers; threads per
  block 1..1024, block z <= 64, grid y,z <= 65535. shared_bytes: dynamic shared memory, up to
  227 KiB (above 48 KiB is opted in automatically).
- "outputs" may be omitted (means: exactly the card's outputs); if given it must equal them.
- One arg token per kernel parameter, in order, "TYPE:SOURCE":
  TYPE: ptr (device pointer), i32 (int), u32 (unsigned), i64 (long long), u64 (unsigned long
  long), f32 (float), f64 (double).
  SOURCE: a tensor argument's schema name (ptr: its data), NAME.K (element K of a Tensor[]
  argument), outN (output N), scratch.NAME (a declared scratch buffer), a non-tensor argument's
  schema name (its value as a number; bools are 0/1), or a literal number (i32:4096, f32:0.5).
- Scratch buffers with "zero": false are filled with a 0xA5 pattern: write before you read.
The result is compared against eager PyTorch with the dtype's usual tolerance, then timed.
)";

namespace {

std::string shapeText(const std::vector<std::int64_t>& values)
{
    std::string text = "[";
    for (std::size_t i = 0; i < values.size(); ++i)
        text += (i ? ", " : "") + std::to_string(values[i]);
    return text + "]";
}

std::string tensorText(const TensorSpec& tensor)
{
    std::string text = tensor.dtype + " sizes " + shapeText(tensor.sizes) + " strides " + shapeText(tensor.strides);
    text += tensor.isContiguous() ? " (contiguous" : " (NOT contiguous";
    text += ", " + std::to_string(tensor.numel()) + " elements";
    if (!tensor.device.empty())
        text += ", " + tensor.device;
    return text + ")";
}

std::string cut(const std::string& text, std::size_t chars)
{
    if (text.size() <= chars)
        return text;
    return text.substr(0, chars) + " ...[cut]";
}

std::string number(double value, const char* format)
{
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, value);
    return buffer;
}

std::string stepName(const SearchNode& node)
{
    const Provenance& p = node.provenance;
    std::string text = provenanceKindName(p.kind);
    if (!p.transformation.empty())
        text += " " + p.transformation;
    if (!p.model.empty())
        text += " (" + p.provider + " " + p.model + ")";
    return text;
}

std::string outcomeText(const SearchNode& node)
{
    std::string text = nodeStatusName(node.status);
    if (node.latency)
        text += ", " + number(node.latency->medianUs, "%.2f") + " us";
    if (const std::optional<double> speedup = nodeSpeedup(node))
        text += ", " + number(*speedup, "%.3f") + "x eager";
    return text;
}

std::string planText(const nlohmann::json& plan)
{
    return plan.is_null() || (plan.is_object() && plan.empty()) ? std::string("(embedded in the source)") : plan.dump();
}

const char* const kAnswerFormat =
    R"(Answer with exactly one ```cuda code block that holds the complete source, starting with the
/*kforge-plan {...} */ block (valid JSON for this card). Write custom CUDA kernels: no cuBLAS or
cuDNN calls; CUB / CCCL device primitives are allowed. A few sentences of reasoning before the
block are fine; nothing after it.)";

} // namespace

std::string llmSystemPrompt()
{
    std::string text =
        "You are an expert CUDA performance engineer. You write CUDA kernels that replace one PyTorch "
        "operator call (or a fused region: a chain of calls computed by one kernel) with exactly the shapes, dtypes "
        "and strides given, must produce the same result as "
        "eager PyTorch within tolerance, and should run as fast as possible on the given GPU. Constants of "
        "the card (sizes, strides, scalar arguments) may be baked into the source.\n\n";
    text += kLlmCandidateContract;
    text += "\nREPLY FORMAT\n";
    text += kAnswerFormat;
    text += "\n";
    return text;
}

std::string describeChainForPrompt(const RegionChain& chain)
{
    std::ostringstream out;
    out << "FUSED REGION: the kernel computes what these eager calls compute together, in this order, "
           "in one pass where it can (intermediates need not be written to memory; round each "
           "intermediate to its dtype as eager does where that changes the result):\n";
    for (std::size_t m = 0; m < chain.members.size(); ++m) {
        out << "  " << chain.memberText(m);
        const ChainMember& member = chain.members[m];
        for (std::size_t o = 0; o < member.outputs.size(); ++o)
            out << (o ? ", " : "  -> ") << tensorText(member.outputs[o]);
        out << "\n";
    }
    out << "  region outputs: " << chain.outputsText() << "\n";
    return out.str();
}

std::string describeCardForPrompt(const OperatorCard& card)
{
    std::ostringstream out;
    out << "OPERATOR CARD " << card.id << "\n";
    out << "op: " << card.qualifiedName() << "\n";
    out << "schema: " << card.schema << "\n";
    out << "arguments (schema order):\n";
    for (const ArgSpec& arg : card.args) {
        out << "- " << arg.name << " (" << arg.type << "): ";
        switch (arg.kind) {
        case ArgKind::Tensor:
            out << "tensor " << (arg.tensors.empty() ? std::string("?") : tensorText(arg.tensors.front()));
            break;
        case ArgKind::TensorList:
            out << "tensor list of " << arg.tensors.size();
            for (std::size_t i = 0; i < arg.tensors.size(); ++i)
                out << "\n    " << arg.name << "." << i << ": " << tensorText(arg.tensors[i]);
            break;
        case ArgKind::Value:
            out << "value " << arg.value.dump();
            break;
        case ArgKind::None:
            out << "None (not given)";
            break;
        case ArgKind::Opaque:
            out << "opaque " << arg.value.dump();
            break;
        }
        out << "\n";
    }
    if (card.region)
        out << describeChainForPrompt(*card.region);
    out << "outputs (what eager produces; out0 is the first):\n";
    if (card.outputs.empty())
        out << "- none\n";
    for (std::size_t i = 0; i < card.outputs.size(); ++i)
        out << "- out" << i << ": " << tensorText(card.outputs[i]) << "\n";
    if (card.eager)
        out << "eager latency: " << number(card.eager->medianUs, "%.2f") << " us median on " << card.eager->device
            << " (" << card.eager->method << ")\n";
    return out.str();
}

std::string describeHardwareForPrompt(const nlohmann::json& hardware)
{
    if (!hardware.is_object() || hardware.empty())
        return "HARDWARE\nunknown (no GPU visible to the engine); the kernel is compiled for sm_90 (NVIDIA H100/H200 "
               "class).\n";
    std::string text = "HARDWARE\n";
    for (const auto& [key, value] : hardware.items())
        text += key + ": " + (value.is_string() ? value.get<std::string>() : value.dump()) + "\n";
    return text;
}

std::string llmRootPrompt(const OperatorCard& card, const nlohmann::json& hardware)
{
    std::string text = describeCardForPrompt(card) + "\n" + describeHardwareForPrompt(hardware);
    text += "\nTASK\nWrite a first candidate for this card: correct first, and fast (coalesced memory access, "
            "enough blocks to fill every SM, fp32 accumulation for reduced-precision inputs).\n";
    text += kAnswerFormat;
    text += "\n";
    return text;
}

std::string llmRevisionPrompt(const OperatorCard& card, const nlohmann::json& hardware, const SearchTree& tree,
                              const SearchNode& parent, const LlmPromptLimits& limits)
{
    std::string text = describeCardForPrompt(card) + "\n" + describeHardwareForPrompt(hardware);

    text += "\nLINEAGE (root first; the last step is the parent you revise)\n";
    const std::vector<const SearchNode*> lineage = tree.lineage(parent.id);
    const std::size_t keep = static_cast<std::size_t>(std::max(1, limits.lineageSteps));
    const std::size_t first = lineage.size() > keep ? lineage.size() - keep : 0;
    if (first > 0)
        text += "(" + std::to_string(first) + " earlier steps omitted)\n";
    for (std::size_t i = first; i < lineage.size(); ++i)
        text += "- " + lineage[i]->id + ": " + stepName(*lineage[i]) + " -> " + outcomeText(*lineage[i]) + "\n";

    text += "\nPARENT " + parent.id + " (" + outcomeText(parent) + ")\n";
    text += "launch plan: " + planText(parent.candidate.launchPlan) + "\n";
    text += "source:\n```cuda\n" + parent.candidate.source;
    if (!parent.candidate.source.empty() && parent.candidate.source.back() != '\n')
        text += "\n";
    text += "```\n";

    std::vector<const SearchNode*> failed = tree.failedChildren(parent.id);
    const std::vector<const SearchNode*> siblings = tree.failedSiblings(parent.id);
    failed.insert(failed.end(), siblings.begin(), siblings.end());
    const std::size_t maxFailed = static_cast<std::size_t>(std::max(0, limits.failedNodes));
    if (failed.size() > maxFailed)
        failed.erase(failed.begin(), failed.end() - static_cast<std::ptrdiff_t>(maxFailed));
    if (!failed.empty()) {
        text += "\nFAILED ATTEMPTS NEAR THIS PARENT (do not repeat these mistakes)\n";
        for (const SearchNode* node : failed)
            text += "- " + node->id + " (" + stepName(*node) + "): " + nodeStatusName(node->status) + ": " +
                cut(node->failureReason, limits.reasonChars) + "\n";
    }

    text += "\nTASK\nWrite a revision of the parent that is faster on this GPU and still correct. Name the change "
            "you make in one sentence before the code block.\n";
    text += kAnswerFormat;
    text += "\n";
    return text;
}

std::string llmRepairPrompt(const std::string& error)
{
    std::string text = "Your reply could not be used: " + error +
        "\n\nFix exactly this problem and answer again with "
        "the complete source.\n";
    text += kAnswerFormat;
    text += "\n";
    return text;
}

} // namespace kforge::core
