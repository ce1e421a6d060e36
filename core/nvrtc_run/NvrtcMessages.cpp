#include "nvrtc_run/NvrtcMessages.h"

#include "protocol/Base64.h"

#include <array>
#include <cmath>
#include <utility>

namespace kforge::core {
namespace {

using nlohmann::json;

constexpr std::array<std::pair<NvrtcStatus, const char*>, 5> kStatusNames{{
    {NvrtcStatus::Compiled, "compiled"},
    {NvrtcStatus::CompileError, "compile-error"},
    {NvrtcStatus::InvalidOption, "invalid-option"},
    {NvrtcStatus::NvrtcFailed, "nvrtc-failed"},
    {NvrtcStatus::NotFinished, "not-finished"},
}};

Error malformed(const std::string& what)
{
    return makeError(ErrorCode::InvalidArgument, what, "NVRTC compile message");
}

// `field` of `object` as the bytes its base64 string encodes.
Result<std::string> bytesField(const json& object, const char* field)
{
    auto it = object.find(field);
    if (it == object.end() || !it->is_string())
        return malformed(std::string("\"") + field + "\" is missing or not a string");
    Result<std::string> bytes = base64Decode(it->get_ref<const std::string&>());
    if (!bytes)
        return malformed(std::string("\"") + field + "\": " + bytes.error().message);
    return bytes;
}

} // namespace

const char* nvrtcStatusName(NvrtcStatus status)
{
    for (const auto& [value, name] : kStatusNames) {
        if (value == status)
            return name;
    }
    return "unknown";
}

json toJson(const NvrtcCompileRequest& request)
{
    json options = json::array();
    for (const std::string& option : request.options)
        options.push_back(base64Encode(option));
    return json{{"source_base64", base64Encode(request.source)},
                {"source_name_base64", base64Encode(request.sourceName)},
                {"options_base64", std::move(options)},
                {"timeout_ms", request.timeout.count()}};
}

Result<NvrtcCompileRequest> nvrtcCompileRequestFromJson(const json& message)
{
    if (!message.is_object())
        return malformed("not a JSON object");
    NvrtcCompileRequest request;
    Result<std::string> source = bytesField(message, "source_base64");
    if (!source)
        return source.error();
    request.source = std::move(*source);
    Result<std::string> name = bytesField(message, "source_name_base64");
    if (!name)
        return name.error();
    request.sourceName = std::move(*name);
    auto options = message.find("options_base64");
    if (options == message.end() || !options->is_array())
        return malformed("\"options_base64\" is missing or not an array");
    for (const json& option : *options) {
        if (!option.is_string())
            return malformed("\"options_base64\" holds a non-string");
        Result<std::string> bytes = base64Decode(option.get_ref<const std::string&>());
        if (!bytes)
            return malformed("\"options_base64\": " + bytes.error().message);
        request.options.push_back(std::move(*bytes));
    }
    auto timeout = message.find("timeout_ms");
    if (timeout == message.end() || !timeout->is_number_integer() || timeout->get<std::int64_t>() < 0)
        return malformed("\"timeout_ms\" is missing or not a whole number >= 0");
    request.timeout = std::chrono::milliseconds(timeout->get<std::int64_t>());
    return request;
}

json toJson(const NvrtcCompileReply& reply)
{
    return json{{"status", nvrtcStatusName(reply.status)},
                {"log_base64", base64Encode(reply.log)},
                {"ptx_base64", base64Encode(reply.ptx)},
                {"cubin_base64",
                 base64Encode(std::string_view(reinterpret_cast<const char*>(reply.cubin.data()), reply.cubin.size()))},
                {"failure_base64", base64Encode(reply.failure)},
                {"compile_ms", reply.compileMs}};
}

Result<NvrtcCompileReply> nvrtcCompileReplyFromJson(const json& result)
{
    if (!result.is_object())
        return malformed("not a JSON object");
    NvrtcCompileReply reply;
    auto status = result.find("status");
    if (status == result.end() || !status->is_string())
        return malformed("\"status\" is missing or not a string");
    bool known = false;
    for (const auto& [value, name] : kStatusNames) {
        if (value != NvrtcStatus::NotFinished && *status == name) {
            reply.status = value;
            known = true;
        }
    }
    if (!known)
        return malformed("unknown status " + status->dump());
    for (auto [field, target] : {std::pair{"log_base64", &reply.log}, std::pair{"ptx_base64", &reply.ptx},
                                 std::pair{"failure_base64", &reply.failure}}) {
        Result<std::string> bytes = bytesField(result, field);
        if (!bytes)
            return bytes.error();
        *target = std::move(*bytes);
    }
    Result<std::string> cubin = bytesField(result, "cubin_base64");
    if (!cubin)
        return cubin.error();
    reply.cubin.assign(cubin->begin(), cubin->end());
    auto ms = result.find("compile_ms");
    if (ms == result.end() || !ms->is_number() || !std::isfinite(ms->get<double>()) || ms->get<double>() < 0)
        return malformed("\"compile_ms\" is missing or not a number >= 0");
    reply.compileMs = ms->get<double>();
    return reply;
}

} // namespace kforge::core
