#include "llm_proposer/LlmReplyParser.h"

#include "kernel/KernelSource.h"
#include "model/LaunchPlan.h"
#include "model/TextBounds.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace kforge::core {
namespace {

struct CodeBlock {
    std::string info; // the fence's info string, lower-cased and trimmed
    std::string body;
};

std::string trim(const std::string& text)
{
    const auto begin = text.find_first_not_of(" \t\r");
    if (begin == std::string::npos)
        return {};
    const auto end = text.find_last_not_of(" \t\r");
    return text.substr(begin, end - begin + 1);
}

// Fenced blocks opened by a line starting with ``` and closed by the next line that starts with ```
// (an unterminated last block runs to the end of the reply: models cut off by the token limit
// produce those, and the plan check then says what is missing).
std::vector<CodeBlock> codeBlocks(const std::string& reply)
{
    std::vector<CodeBlock> blocks;
    std::optional<CodeBlock> open;
    std::size_t pos = 0;
    while (pos <= reply.size()) {
        std::size_t end = reply.find('\n', pos);
        if (end == std::string::npos)
            end = reply.size();
        const std::string line = reply.substr(pos, end - pos);
        const std::string trimmed = trim(line);
        if (trimmed.rfind("```", 0) == 0) {
            if (open) {
                blocks.push_back(std::move(*open));
                open.reset();
            } else {
                CodeBlock block;
                block.info = trim(trimmed.substr(3));
                std::transform(block.info.begin(), block.info.end(), block.info.begin(),
                               [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
                open = std::move(block);
            }
        } else if (open) {
            open->body += line + "\n";
        }
        pos = end + 1;
    }
    if (open)
        blocks.push_back(std::move(*open));
    return blocks;
}

bool isCudaTag(const std::string& info)
{
    const std::string word = info.substr(0, info.find_first_of(" \t{"));
    return word == "cuda" || word == "cpp" || word == "c++" || word == "cu" || word == "c";
}

bool isIdentifierChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// True when `name` occurs as a whole identifier followed by '(' (a declaration or definition).
bool declaresFunction(const std::string& source, const std::string& name)
{
    for (std::size_t pos = source.find(name); pos != std::string::npos; pos = source.find(name, pos + 1)) {
        if (pos > 0 && isIdentifierChar(source[pos - 1]))
            continue;
        std::size_t after = pos + name.size();
        while (after < source.size() && std::isspace(static_cast<unsigned char>(source[after])))
            ++after;
        if (after < source.size() && source[after] == '(')
            return true;
    }
    return false;
}

Error replyError(std::string message)
{
    return makeError(ErrorCode::InvalidArgument, std::move(message));
}

} // namespace

Result<Candidate> parseLlmReply(const std::string& reply, const OperatorCard& card)
{
    // The first CUDA-tagged block that carries a plan, else the first CUDA-tagged block; an untagged
    // block counts only when it defines a __global__ function.
    const std::vector<CodeBlock> blocks = codeBlocks(reply);
    const CodeBlock* chosen = nullptr;
    for (const CodeBlock& block : blocks) {
        const bool cuda =
            isCudaTag(block.info) || (block.info.empty() && block.body.find("__global__") != std::string::npos);
        if (!cuda)
            continue;
        if (embeddedPlanText(block.body)) {
            chosen = &block;
            break;
        }
        if (!chosen)
            chosen = &block;
    }
    if (!chosen)
        return replyError("reply without a ```cuda block");

    // Untrusted size and bytes are refused before anything is parsed or stored.
    if (chosen->body.size() > kMaxKernelSourceBytes)
        return replyError("the kernel source is " + std::to_string(chosen->body.size()) + " bytes, over the limit of " +
                          std::to_string(kMaxKernelSourceBytes) + " bytes (" +
                          std::to_string(kMaxKernelSourceBytes / 1024) + " KiB): write a shorter kernel");
    if (auto bad = firstInvalidUtf8(chosen->body))
        return replyError("the kernel source is not valid UTF-8 (byte " + std::to_string(*bad) +
                          " of the code block): write plain UTF-8 text");

    Candidate candidate;
    candidate.source = chosen->body;
    const std::optional<std::string> planText = embeddedPlanText(candidate.source);
    if (!planText)
        return replyError("the ```cuda block has no /*kforge-plan {...} */ block");
    try {
        candidate.launchPlan = nlohmann::json::parse(*planText);
    } catch (const nlohmann::json::exception& e) {
        return replyError(std::string("plan is not valid JSON: ") + e.what());
    }
    if (!candidate.launchPlan.is_object())
        return replyError("plan invalid: the /*kforge-plan*/ block must hold a JSON object");
    auto plan = parseLaunchPlan(candidate.launchPlan, card);
    if (!plan)
        return replyError("plan invalid: " + plan.error().toString());
    if (auto valid = validateLaunchPlan(plan.value(), card); !valid)
        return replyError("plan invalid: " + valid.error().toString());
    if (candidate.source.find("extern \"C\"") == std::string::npos)
        return replyError(
            "the source declares no extern \"C\" kernel (the plan launches kernels by their unmangled name)");
    for (const KernelLaunch& launch : plan->launches) {
        if (!declaresFunction(candidate.source, launch.kernel))
            return replyError("plan launches kernel '" + launch.kernel +
                              "' but the source defines no extern \"C\" kernel of that name");
    }
    return candidate;
}

} // namespace kforge::core
