#include "protocol/WorkerProtocol.h"

#include "util/FailureText.h"

namespace kforge::core {
namespace {

nlohmann::json idValue(std::optional<std::int64_t> id)
{
    return id ? nlohmann::json(*id) : nlohmann::json(nullptr);
}

Error badShape(const std::string& what, const char* context)
{
    return makeError(ErrorCode::InvalidArgument, what, context);
}

} // namespace

Result<nlohmann::json> makeWorkerRequest(std::int64_t id, std::string_view type, const nlohmann::json& payload)
{
    if (type.empty())
        return badShape("request type is empty", "worker request");
    if (!payload.is_null() && !payload.is_object())
        return badShape("payload of '" + std::string(type) + "' must be a JSON object, not " + payload.type_name(),
                        "worker request");
    if (payload.is_object() && (payload.contains("id") || payload.contains("type")))
        return badShape("payload of '" + std::string(type) + "' uses a reserved key (\"id\" or \"type\")",
                        "worker request");
    nlohmann::json request = payload.is_object() ? payload : nlohmann::json::object();
    request["id"] = id;
    request["type"] = std::string(type);
    return request;
}

nlohmann::json makeWorkerOkReply(std::optional<std::int64_t> id, nlohmann::json result)
{
    return nlohmann::json{{"id", idValue(id)}, {"ok", true}, {"result", std::move(result)}};
}

nlohmann::json makeWorkerErrorReply(std::optional<std::int64_t> id, std::string_view code, std::string_view message,
                                    std::string_view context)
{
    // The message is one line (an exception's backtrace never leaves the worker); whatever else
    // it said goes in "detail".
    const FailureText text = failureText(message);
    nlohmann::json error{{"code", std::string(code)}, {"message", text.line}};
    if (!context.empty())
        error["context"] = std::string(context);
    if (!text.detail.empty())
        error["detail"] = text.detail;
    return nlohmann::json{{"id", idValue(id)}, {"ok", false}, {"error", std::move(error)}};
}

std::optional<std::int64_t> workerRequestId(const nlohmann::json& message)
{
    if (!message.is_object())
        return std::nullopt;
    const auto it = message.find("id");
    if (it == message.end() || !it->is_number_integer())
        return std::nullopt;
    if (it->is_number_unsigned() && it->get<std::uint64_t>() > std::uint64_t(INT64_MAX))
        return std::nullopt;
    return it->get<std::int64_t>();
}

Result<WorkerRequest> parseWorkerRequest(const nlohmann::json& message)
{
    if (!message.is_object())
        return badShape(std::string("request must be a JSON object, not ") + message.type_name(), "worker request");
    const std::optional<std::int64_t> id = workerRequestId(message);
    if (!id)
        return badShape("request has no integer \"id\"", "worker request");
    const auto type = message.find("type");
    if (type == message.end() || !type->is_string() || type->get_ref<const std::string&>().empty())
        return badShape("request " + std::to_string(*id) + " has no \"type\" string", "worker request");
    return WorkerRequest{*id, type->get<std::string>(), message};
}

Result<WorkerReply> parseWorkerReply(const nlohmann::json& message)
{
    if (!message.is_object())
        return badShape(std::string("reply must be a JSON object, not ") + message.type_name(), "worker reply");
    WorkerReply reply;
    const auto id = message.find("id");
    if (id == message.end())
        return badShape("reply has no \"id\"", "worker reply");
    if (!id->is_null()) {
        reply.id = workerRequestId(message);
        if (!reply.id)
            return badShape("reply \"id\" is not an integer", "worker reply");
    }
    const auto ok = message.find("ok");
    if (ok == message.end() || !ok->is_boolean())
        return badShape("reply has no boolean \"ok\"", "worker reply");
    reply.ok = ok->get<bool>();
    if (reply.ok) {
        const auto result = message.find("result");
        if (result == message.end())
            return badShape("ok reply has no \"result\"", "worker reply");
        reply.result = *result;
        return reply;
    }
    const auto error = message.find("error");
    if (error == message.end() || !error->is_object())
        return badShape("error reply has no \"error\" object", "worker reply");
    const auto code = error->find("code");
    const auto text = error->find("message");
    if (code == error->end() || !code->is_string() || text == error->end() || !text->is_string())
        return badShape("error reply needs string \"code\" and \"message\"", "worker reply");
    reply.errorCode = code->get<std::string>();
    reply.errorMessage = text->get<std::string>();
    const auto context = error->find("context");
    if (context != error->end() && context->is_string())
        reply.errorContext = context->get<std::string>();
    const auto detail = error->find("detail");
    if (detail != error->end() && detail->is_string())
        reply.errorDetail = detail->get<std::string>();
    return reply;
}

nlohmann::json workerRequestPayload(const nlohmann::json& message)
{
    nlohmann::json payload = message.is_object() ? message : nlohmann::json::object();
    payload.erase("id");
    payload.erase("type");
    return payload;
}

} // namespace kforge::core
