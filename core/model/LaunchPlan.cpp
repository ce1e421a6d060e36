#include "model/LaunchPlan.h"

#include <charconv>
#include <cmath>
#include <utility>

namespace kforge::core {
namespace {

using nlohmann::json;

Error planError(const std::string& where, const std::string& message)
{
    return makeError(ErrorCode::InvalidArgument, message, "launch plan " + where);
}

bool parseParamType(const std::string& text, ParamType& out)
{
    for (ParamType type : {ParamType::Pointer, ParamType::I32, ParamType::I64, ParamType::U32, ParamType::U64,
                           ParamType::F32, ParamType::F64}) {
        if (text == paramTypeName(type)) {
            out = type;
            return true;
        }
    }
    return false;
}

bool parseNumber(const std::string& text, double& out)
{
    if (text.empty())
        return false;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && ptr == text.data() + text.size();
}

bool parseIndex(const std::string& text, int& out)
{
    if (text.empty())
        return false;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && ptr == text.data() + text.size() && out >= 0;
}

Result<KernelParam> parseParam(const std::string& token, const std::string& where)
{
    KernelParam param;
    param.token = token;
    const size_t colon = token.find(':');
    if (colon == std::string::npos)
        return planError(where, "argument '" + token + "' must be TYPE:SOURCE, e.g. ptr:self or i32:4096");
    if (!parseParamType(token.substr(0, colon), param.type))
        return planError(where,
                         "unknown argument type '" + token.substr(0, colon) + "' (ptr, i32, i64, u32, u64, f32, f64)");
    const std::string source = token.substr(colon + 1);
    if (source.empty())
        return planError(where, "argument '" + token + "' has no source");
    if (param.type == ParamType::Pointer) {
        if (source.starts_with("out") && parseIndex(source.substr(3), param.index)) {
            param.source = ParamSource::Output;
        } else if (source.starts_with("scratch.")) {
            param.source = ParamSource::Scratch;
            param.name = source.substr(8);
        } else {
            param.source = ParamSource::TensorArg;
            const size_t dot = source.find('.');
            param.name = source.substr(0, dot);
            if (dot != std::string::npos && !parseIndex(source.substr(dot + 1), param.index))
                return planError(where, "'" + token + "': a list element is written name.K with K >= 0");
        }
        return param;
    }
    if (parseNumber(source, param.literal)) {
        param.source = ParamSource::Literal;
        const bool integral = param.type != ParamType::F32 && param.type != ParamType::F64;
        if (integral && param.literal != std::floor(param.literal))
            return planError(where, "'" + token + "': an integer type needs a whole number");
        if ((param.type == ParamType::U32 || param.type == ParamType::U64) && param.literal < 0)
            return planError(where, "'" + token + "': an unsigned type needs a number >= 0");
        return param;
    }
    param.source = ParamSource::CardValue;
    param.name = source;
    return param;
}

Result<std::array<std::uint32_t, 3>> parseDims(const json& j, const std::string& where)
{
    std::array<std::uint32_t, 3> dims{1, 1, 1};
    if (j.is_number_integer()) {
        if (j.get<std::int64_t>() < 1 || j.get<std::int64_t>() > 0xffffffffll)
            return planError(where, "must be at least 1");
        dims[0] = j.get<std::uint32_t>();
        return dims;
    }
    if (!j.is_array() || j.empty() || j.size() > 3)
        return planError(where, "must be a positive integer or an array of 1 to 3 positive integers");
    for (size_t i = 0; i < j.size(); ++i) {
        if (!j[i].is_number_integer() || j[i].get<std::int64_t>() < 1 || j[i].get<std::int64_t>() > 0xffffffffll)
            return planError(where + "[" + std::to_string(i) + "]", "must be an integer of at least 1");
        dims[i] = j[i].get<std::uint32_t>();
    }
    return dims;
}

std::string tensorArgNames(const OperatorCard& card)
{
    std::string names;
    for (const ArgSpec& arg : card.args) {
        if (arg.kind == ArgKind::Tensor || arg.kind == ArgKind::TensorList)
            names += (names.empty() ? "" : ", ") + arg.name;
    }
    return names.empty() ? std::string("none") : names;
}

Result<void> checkParam(const KernelParam& param, const LaunchPlan& plan, const OperatorCard& card,
                        const std::string& where)
{
    switch (param.source) {
    case ParamSource::Output:
        if (param.index >= static_cast<int>(plan.outputs.size()))
            return planError(
                where, "'" + param.token + "': the plan has " + std::to_string(plan.outputs.size()) + " output(s)");
        return {};
    case ParamSource::Scratch:
        for (const ScratchBuffer& buffer : plan.scratch) {
            if (buffer.name == param.name)
                return {};
        }
        return planError(where, "'" + param.token + "': no scratch buffer named '" + param.name + "'");
    case ParamSource::TensorArg: {
        const ArgSpec* arg = card.findArg(param.name);
        if (!arg)
            return planError(where,
                             "'" + param.token + "': the card has no argument '" + param.name +
                                 "' (tensor arguments: " + tensorArgNames(card) + ")");
        if (arg->kind == ArgKind::None)
            return planError(where, "'" + param.token + "': argument '" + param.name + "' is None in this card");
        if (arg->kind == ArgKind::Tensor && param.index < 0 && card.isHostNumberArg(*arg))
            return planError(
                where,
                "'" + param.token + "': '" + param.name +
                    "' is a number on the host (a 0-dim CPU tensor): pass its value, e.g. 'f64:" + param.name + "'");
        if (arg->kind == ArgKind::Tensor && param.index < 0)
            return {};
        if (arg->kind == ArgKind::TensorList && param.index >= 0 && param.index < static_cast<int>(arg->tensors.size()))
            return {};
        if (arg->kind == ArgKind::TensorList)
            return planError(where,
                             "'" + param.token + "': '" + param.name + "' is a list of " +
                                 std::to_string(arg->tensors.size()) + " tensors: write " + param.name +
                                 ".K with K in range");
        return planError(where, "'" + param.token + "': argument '" + param.name + "' is not a tensor");
    }
    case ParamSource::CardValue: {
        const ArgSpec* arg = card.findArg(param.name);
        if (!arg)
            return planError(
                where, "'" + param.token + "': '" + param.name + "' is neither a number nor an argument of the card");
        if (card.isHostNumberArg(*arg))
            return {};
        if (arg->kind != ArgKind::Value || !(arg->value.is_number() || arg->value.is_boolean()))
            return planError(where, "'" + param.token + "': argument '" + param.name + "' is not a number");
        return {};
    }
    case ParamSource::Literal:
        return {};
    }
    return {};
}

} // namespace

const char* paramTypeName(ParamType type)
{
    switch (type) {
    case ParamType::Pointer:
        return "ptr";
    case ParamType::I32:
        return "i32";
    case ParamType::I64:
        return "i64";
    case ParamType::U32:
        return "u32";
    case ParamType::U64:
        return "u64";
    case ParamType::F32:
        return "f32";
    case ParamType::F64:
        return "f64";
    }
    return "?";
}

Result<LaunchPlan> parseLaunchPlan(const json& j, const OperatorCard& card)
{
    if (!j.is_object())
        return planError("", "must be a JSON object");
    LaunchPlan plan;
    if (!j.contains("launches") || !j.at("launches").is_array() || j.at("launches").empty())
        return planError("launches", "must be a non-empty array");
    const json& launches = j.at("launches");
    for (size_t i = 0; i < launches.size(); ++i) {
        const std::string where = "launches[" + std::to_string(i) + "]";
        const json& l = launches[i];
        if (!l.is_object())
            return planError(where, "must be an object");
        KernelLaunch launch;
        if (!l.contains("kernel") || !l.at("kernel").is_string() || l.at("kernel").get<std::string>().empty())
            return planError(where + ".kernel", "must name the extern \"C\" __global__ function");
        launch.kernel = l.at("kernel").get<std::string>();
        for (const char* field : {"grid", "block"}) {
            if (!l.contains(field))
                return planError(where + "." + field, "is missing");
            auto dims = parseDims(l.at(field), where + "." + field);
            if (!dims)
                return dims.error();
            (std::string(field) == "grid" ? launch.grid : launch.block) = dims.value();
        }
        if (l.contains("shared_bytes")) {
            if (!l.at("shared_bytes").is_number_integer() || l.at("shared_bytes").get<std::int64_t>() < 0 ||
                l.at("shared_bytes").get<std::int64_t>() > 0xffffffffll)
                return planError(where + ".shared_bytes", "must be an integer from 0 to 4294967295 (bytes)");
            launch.sharedBytes = l.at("shared_bytes").get<std::uint32_t>();
        }
        if (!l.contains("args") || !l.at("args").is_array())
            return planError(where + ".args", "must be an array of argument tokens");
        for (size_t a = 0; a < l.at("args").size(); ++a) {
            const std::string argWhere = where + ".args[" + std::to_string(a) + "]";
            if (!l.at("args")[a].is_string())
                return planError(argWhere, "must be a string such as \"ptr:self\"");
            auto param = parseParam(l.at("args")[a].get<std::string>(), argWhere);
            if (!param)
                return param.error();
            launch.params.push_back(std::move(param.value()));
        }
        plan.launches.push_back(std::move(launch));
    }
    if (j.contains("scratch")) {
        if (!j.at("scratch").is_array())
            return planError("scratch", "must be an array");
        for (size_t i = 0; i < j.at("scratch").size(); ++i) {
            const std::string where = "scratch[" + std::to_string(i) + "]";
            const json& s = j.at("scratch")[i];
            if (!s.is_object() || !s.contains("name") || !s.at("name").is_string() || !s.contains("bytes") ||
                !s.at("bytes").is_number_integer())
                return planError(where, "must be {\"name\": \"...\", \"bytes\": N, \"zero\": true|false}");
            ScratchBuffer buffer{s.at("name").get<std::string>(), s.at("bytes").get<std::int64_t>(),
                                 s.value("zero", false)};
            for (const ScratchBuffer& other : plan.scratch) {
                if (other.name == buffer.name)
                    return planError(where, "duplicate scratch buffer '" + buffer.name + "'");
            }
            plan.scratch.push_back(std::move(buffer));
        }
    }
    if (j.contains("outputs")) {
        if (!j.at("outputs").is_array())
            return planError("outputs", "must be an array");
        for (size_t i = 0; i < j.at("outputs").size(); ++i) {
            const json& o = j.at("outputs")[i];
            try {
                TensorSpec spec;
                spec.dtype = o.at("dtype").get<std::string>();
                spec.sizes = o.at("sizes").get<std::vector<std::int64_t>>();
                spec.strides = o.at("strides").get<std::vector<std::int64_t>>();
                spec.device = o.value("device", card.outputs.size() > i ? card.outputs[i].device : std::string());
                plan.outputs.push_back(std::move(spec));
            } catch (const json::exception&) {
                return planError("outputs[" + std::to_string(i) + "]",
                                 "must be {\"dtype\": ..., \"sizes\": [...], \"strides\": [...]}");
            }
        }
    } else {
        plan.outputs = card.outputs;
    }
    return plan;
}

Result<void> validateLaunchPlan(const LaunchPlan& plan, const OperatorCard& card, const LaunchLimits& limits)
{
    if (plan.launches.empty())
        return planError("launches", "must hold at least one launch");
    if (static_cast<int>(plan.launches.size()) > limits.maxLaunches)
        return planError("launches",
                         "holds " + std::to_string(plan.launches.size()) + " launches; at most " +
                             std::to_string(limits.maxLaunches) + " are allowed");
    if (plan.outputs.size() != card.outputs.size())
        return planError("outputs",
                         "declares " + std::to_string(plan.outputs.size()) + " output(s); eager returns " +
                             std::to_string(card.outputs.size()));
    for (size_t i = 0; i < plan.outputs.size(); ++i) {
        const TensorSpec& mine = plan.outputs[i];
        const TensorSpec& eager = card.outputs[i];
        if (mine.dtype != eager.dtype || mine.sizes != eager.sizes || mine.strides != eager.strides)
            return planError("outputs[" + std::to_string(i) + "]",
                             "is " + mine.toShortString() + " but eager returns " + eager.toShortString() +
                                 " (dtype, sizes and strides must match)");
    }
    std::int64_t scratchTotal = 0;
    for (const ScratchBuffer& buffer : plan.scratch) {
        if (buffer.bytes <= 0)
            return planError("scratch '" + buffer.name + "'", "needs bytes > 0");
        scratchTotal += buffer.bytes;
    }
    if (scratchTotal > limits.maxScratchBytes)
        return planError("scratch",
                         "asks for " + std::to_string(scratchTotal) + " bytes; the limit is " +
                             std::to_string(limits.maxScratchBytes));
    for (size_t i = 0; i < plan.launches.size(); ++i) {
        const KernelLaunch& launch = plan.launches[i];
        const std::string where = "launches[" + std::to_string(i) + "]";
        std::uint64_t threads = 1;
        for (int d = 0; d < 3; ++d) {
            if (launch.block[d] == 0 || launch.block[d] > limits.maxBlock[d])
                return planError(where + ".block",
                                 "dimension " + std::to_string(d) + " is " + std::to_string(launch.block[d]) +
                                     "; allowed 1.." + std::to_string(limits.maxBlock[d]));
            if (launch.grid[d] == 0 || launch.grid[d] > limits.maxGrid[d])
                return planError(where + ".grid",
                                 "dimension " + std::to_string(d) + " is " + std::to_string(launch.grid[d]) +
                                     "; allowed 1.." + std::to_string(limits.maxGrid[d]));
            threads *= launch.block[d];
        }
        if (threads > limits.maxThreadsPerBlock)
            return planError(where + ".block",
                             "launches " + std::to_string(threads) + " threads per block; at most " +
                                 std::to_string(limits.maxThreadsPerBlock));
        if (launch.sharedBytes > limits.maxDynamicSharedBytes)
            return planError(where + ".shared_bytes",
                             std::to_string(launch.sharedBytes) + " bytes; at most " +
                                 std::to_string(limits.maxDynamicSharedBytes));
        for (size_t a = 0; a < launch.params.size(); ++a) {
            auto checked = checkParam(launch.params[a], plan, card, where + ".args[" + std::to_string(a) + "]");
            if (!checked)
                return checked;
        }
    }
    return {};
}

nlohmann::json toJson(const LaunchPlan& plan)
{
    json launches = json::array();
    for (const KernelLaunch& launch : plan.launches) {
        json args = json::array();
        for (const KernelParam& param : launch.params)
            args.push_back(param.token);
        launches.push_back(json{{"kernel", launch.kernel},
                                {"grid", launch.grid},
                                {"block", launch.block},
                                {"shared_bytes", launch.sharedBytes},
                                {"args", args}});
    }
    json outputs = json::array();
    for (const TensorSpec& spec : plan.outputs)
        outputs.push_back(json{{"dtype", spec.dtype}, {"sizes", spec.sizes}, {"strides", spec.strides}});
    json scratch = json::array();
    for (const ScratchBuffer& buffer : plan.scratch)
        scratch.push_back(json{{"name", buffer.name}, {"bytes", buffer.bytes}, {"zero", buffer.zeroed}});
    return json{{"launches", launches}, {"outputs", outputs}, {"scratch", scratch}};
}

std::optional<std::string> embeddedPlanText(const std::string& source)
{
    constexpr std::string_view marker = "/*kforge-plan";
    const size_t start = source.find(marker);
    if (start == std::string::npos)
        return std::nullopt;
    const size_t end = source.find("*/", start + marker.size());
    if (end == std::string::npos)
        return std::nullopt;
    return source.substr(start + marker.size(), end - start - marker.size());
}

} // namespace kforge::core
