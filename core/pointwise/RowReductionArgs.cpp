#include "pointwise/RowReductionArgs.h"

#include <algorithm>

namespace kforge::core::row_args {

const ArgSpec* named(const ChainMember& member, std::string_view name, std::size_t* index)
{
    for (std::size_t a = 0; a < member.args.size(); ++a)
        if (member.args[a].name == name) {
            if (index)
                *index = a;
            return &member.args[a];
        }
    return nullptr;
}

std::optional<double> number(const ChainMember& member, std::string_view name)
{
    const ArgSpec* arg = named(member, name);
    if (!arg || arg->kind != ArgKind::Value || !(arg->value.is_number() || arg->value.is_boolean()))
        return std::nullopt;
    return arg->value.is_boolean() ? (arg->value.get<bool>() ? 1.0 : 0.0) : arg->value.get<double>();
}

bool absent(const ChainMember& member, std::string_view name)
{
    const ArgSpec* arg = named(member, name);
    return !arg || arg->kind == ArgKind::None;
}

std::optional<std::vector<std::int64_t>> reducedDims(const ArgSpec* dim, std::int64_t rank)
{
    std::vector<std::int64_t> dims;
    if (!dim || dim->kind == ArgKind::None || (dim->value.is_array() && dim->value.empty())) {
        for (std::int64_t d = 0; d < std::max<std::int64_t>(rank, 1); ++d)
            dims.push_back(d);
        return dims;
    }
    const auto add = [&](const nlohmann::json& v) {
        if (!v.is_number_integer())
            return false;
        std::int64_t d = v.get<std::int64_t>();
        const std::int64_t wrap = std::max<std::int64_t>(rank, 1);
        if (d < -wrap || d >= wrap)
            return false;
        dims.push_back(d < 0 ? d + wrap : d);
        return true;
    };
    if (dim->kind != ArgKind::Value)
        return std::nullopt;
    if (dim->value.is_array()) {
        for (const nlohmann::json& v : dim->value)
            if (!add(v))
                return std::nullopt;
    } else if (!add(dim->value)) {
        return std::nullopt;
    }
    std::sort(dims.begin(), dims.end());
    dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
    return dims;
}

} // namespace kforge::core::row_args
