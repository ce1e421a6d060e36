#include "llm_proposer/LlmProposer.h"

#include "kernel/KernelSource.h"
#include "llm_proposer/LlmReplyParser.h"
#include "model/TextBounds.h"

#include <algorithm>
#include <utility>

namespace kforge::core {

using nlohmann::json;

namespace {

// The clients' errors already name the provider, model and URL ("openai gpt-x at https://..."):
// the provider is added only where the context does not start with it.
std::string providerContext(const std::string& provider, const Error& error)
{
    if (error.context.empty())
        return provider;
    if (error.context.rfind(provider + " ", 0) == 0 || error.context == provider)
        return error.context;
    return provider + " " + error.context;
}

} // namespace

namespace {

// The most of an unusable reply that a repair turn sends back as the assistant message: enough
// for any kernel the parser accepts (kMaxKernelSourceBytes) and its prose, never a 50 MB reply.
constexpr std::size_t kMaxEchoedReplyBytes = 2 * kMaxKernelSourceBytes;

} // namespace

LlmProposer::LlmProposer(OperatorCard card, std::shared_ptr<LlmClient> client, json hardware,
                         LlmProposerOptions options)
    : m_card(std::move(card)), m_client(std::move(client)), m_hardware(std::move(hardware)),
      m_options(std::move(options))
{
}

json LlmProposer::currentHardware() const
{
    if (m_options.hardwareSource) {
        json fresh = m_options.hardwareSource();
        if (fresh.is_object() && !fresh.empty())
            return fresh;
    }
    return m_hardware;
}

Result<Proposal> LlmProposer::proposeRoot(const SearchTree&, const std::atomic<bool>& stop)
{
    return converse(llmRootPrompt(m_card, currentHardware()), {}, stop);
}

Result<Proposal> LlmProposer::propose(const SearchTree& tree, const SearchNode& parent, const std::atomic<bool>& stop)
{
    return converse(llmRevisionPrompt(m_card, currentHardware(), tree, parent, m_options.limits), parent.id, stop);
}

Result<Proposal> LlmProposer::converse(std::string userPrompt, const std::string& parentId,
                                       const std::atomic<bool>& stop)
{
    if (!m_client)
        return makeError(ErrorCode::Internal, "no LLM client", "llm proposer");
    Proposal proposal;
    Provenance& provenance = proposal.provenance;
    provenance.kind = ProvenanceKind::Llm;
    provenance.provider = m_client->providerName();
    provenance.details = json::object();
    json& details = provenance.details;
    details["role"] = parentId.empty() ? "root" : "revision";
    if (!parentId.empty())
        details["parent"] = parentId;
    details["system_prompt"] = llmSystemPrompt();
    details["calls"] = json::array();

    LlmRequest request;
    request.systemPrompt = details["system_prompt"].get<std::string>();
    request.maxTokens = m_options.maxTokens;
    request.temperature = m_options.temperature;
    request.messages.push_back({LlmRole::User, std::move(userPrompt)});

    std::int64_t inputTokens = 0, outputTokens = 0, latencyMs = 0;
    double costUsd = 0;
    bool costKnown = true;
    auto recordSums = [&] {
        details["turns"] = details["calls"].size();
        details["input_tokens"] = inputTokens;
        details["output_tokens"] = outputTokens;
        details["cost_usd"] = costUsd;
        details["cost_known"] = costKnown;
        details["latency_ms"] = latencyMs;
    };

    const int maxCalls = 1 + std::max(0, m_options.maxRepairTurns);
    for (int turn = 0; turn < maxCalls; ++turn) {
        if (stop.load())
            return makeError(ErrorCode::Cancelled, "stopped before the model call", "llm proposer");
        auto reply = m_client->complete(request, &stop);
        if (!reply) {
            if (reply.error().code == ErrorCode::Cancelled || turn == 0)
                return makeError(reply.error().code, reply.error().message,
                                 providerContext(provenance.provider, reply.error()));
            // A repair turn failed: keep the calls already paid for, fail only this proposal.
            recordSums();
            proposal.failureReason = "repair turn failed: " + providerContext(provenance.provider, reply.error()) +
                ": " + reply.error().message;
            return proposal;
        }
        const LlmReply& r = reply.value();
        if (provenance.model.empty() || !r.model.empty())
            provenance.model = r.model;
        inputTokens += r.inputTokens;
        outputTokens += r.outputTokens;
        latencyMs += r.latencyMs;
        costUsd += r.costUsd;
        costKnown = costKnown && r.costKnown;

        json call = {{"turn", turn},
                     {"kind", turn == 0 ? "initial" : "repair"},
                     {"prompt", request.messages.back().text},
                     {"response", r.text},
                     {"model", r.model},
                     {"stop_reason", r.stopReason},
                     {"input_tokens", r.inputTokens},
                     {"output_tokens", r.outputTokens},
                     {"cost_usd", r.costUsd},
                     {"cost_known", r.costKnown},
                     {"latency_ms", r.latencyMs},
                     {"attempts", r.attempts},
                     {"request_id", r.requestId}};
        auto candidate = parseLlmReply(r.text, m_card);
        if (candidate) {
            details["calls"].push_back(std::move(call));
            recordSums();
            proposal.candidate = std::move(candidate.value());
            proposal.failureReason.clear(); // earlier turns' errors stay in their call records
            return proposal;
        }
        std::string error = candidate.error().message;
        if (r.stopReason == "length" || r.stopReason == "max_tokens")
            error += " (the reply was cut off at the token limit: write a shorter answer)";
        call["error"] = error;
        details["calls"].push_back(std::move(call));
        proposal.failureReason = error;
        request.messages.push_back({LlmRole::Assistant, boundedText(r.text, kMaxEchoedReplyBytes)});
        request.messages.push_back({LlmRole::User, llmRepairPrompt(error)});
    }
    recordSums();
    proposal.failureReason = "no usable reply after " + std::to_string(maxCalls) + " calls: " + proposal.failureReason;
    return proposal;
}

} // namespace kforge::core
