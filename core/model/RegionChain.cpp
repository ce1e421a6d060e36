#include "model/RegionChain.h"

namespace kforge::core {

std::string RegionChain::text() const
{
    std::string text;
    for (const ChainMember& member : members) {
        if (!text.empty())
            text += " -> ";
        text += member.op.rfind("aten::", 0) == 0 ? member.op.substr(6) : member.op;
    }
    return text;
}

namespace {

std::string sourceText(const ChainSource& source)
{
    if (!source.fromMember)
        return "in" + std::to_string(source.index);
    return "m" + std::to_string(source.index) + (source.output ? "." + std::to_string(source.output) : "");
}

} // namespace

std::string RegionChain::memberText(size_t m) const
{
    const ChainMember& member = members.at(m);
    std::string text =
        "m" + std::to_string(m) + " = " + member.op + (member.overload.empty() ? "" : "." + member.overload) + "(";
    for (size_t a = 0; a < member.args.size(); ++a) {
        const ArgSpec& arg = member.args[a];
        text += (a ? ", " : "") + arg.name + "=";
        const auto& sources = a < member.sources.size() ? member.sources[a] : std::vector<ChainSource>{};
        if (arg.kind == ArgKind::Tensor && !sources.empty()) {
            text += sourceText(sources.front());
        } else if (arg.kind == ArgKind::TensorList) {
            text += "[";
            for (size_t e = 0; e < sources.size(); ++e)
                text += (e ? ", " : "") + sourceText(sources[e]);
            text += "]";
        } else if (arg.kind == ArgKind::None) {
            text += "None";
        } else {
            text += arg.value.dump();
        }
    }
    return text + ")";
}

std::string RegionChain::outputsText() const
{
    std::string text;
    for (size_t o = 0; o < outputs.size(); ++o)
        text += (o ? ", out" : "out") + std::to_string(o) + " = " + sourceText(outputs[o]);
    return text;
}

std::string RegionChain::problem(const std::vector<TensorSpec>& inputs) const
{
    if (members.empty())
        return "a region chain has no members";
    // The spec a source names, or null when it is out of range for a reader at member `reader`.
    const auto specOf = [&](const ChainSource& source, size_t reader) -> const TensorSpec* {
        if (!source.fromMember)
            return source.index >= 0 && static_cast<size_t>(source.index) < inputs.size()
                ? &inputs[static_cast<size_t>(source.index)]
                : nullptr;
        if (source.index < 0 || static_cast<size_t>(source.index) >= reader)
            return nullptr;
        const ChainMember& producer = members[static_cast<size_t>(source.index)];
        return source.output >= 0 && static_cast<size_t>(source.output) < producer.outputs.size()
            ? &producer.outputs[static_cast<size_t>(source.output)]
            : nullptr;
    };
    std::vector<char> inputRead(inputs.size(), 0);
    for (size_t m = 0; m < members.size(); ++m) {
        const ChainMember& member = members[m];
        const std::string where = "member " + std::to_string(m) + " (" + member.op + ")";
        if (member.sources.size() != member.args.size())
            return where + ": " + std::to_string(member.sources.size()) + " source lists for " +
                std::to_string(member.args.size()) + " arguments";
        for (size_t a = 0; a < member.args.size(); ++a) {
            const ArgSpec& arg = member.args[a];
            const bool tensorArg = arg.kind == ArgKind::Tensor || arg.kind == ArgKind::TensorList;
            const size_t expected = tensorArg ? arg.tensors.size() : 0;
            if (member.sources[a].size() != expected)
                return where + ", argument " + arg.name + ": " + std::to_string(member.sources[a].size()) +
                    " sources for " + std::to_string(expected) + " tensors";
            for (size_t e = 0; e < expected; ++e) {
                const ChainSource& source = member.sources[a][e];
                const TensorSpec* spec = specOf(source, m);
                if (!spec)
                    return where + ", argument " + arg.name + ": its source is out of range or not earlier";
                if (!(*spec == arg.tensors[e]))
                    return where + ", argument " + arg.name + ": the source is " + spec->toShortString() +
                        " but the argument is " + arg.tensors[e].toShortString();
                if (!source.fromMember)
                    inputRead[static_cast<size_t>(source.index)] = 1;
            }
        }
    }
    for (size_t i = 0; i < inputs.size(); ++i)
        if (!inputRead[i])
            return "region input in" + std::to_string(i) + " is read by no member";
    if (outputs.empty())
        return "a region chain has no outputs";
    for (const ChainSource& output : outputs)
        if (!output.fromMember || !specOf(output, members.size()))
            return "a region output does not name a member's output";
    for (const auto& occurrence : occurrences)
        if (occurrence.size() != members.size())
            return "an occurrence lists " + std::to_string(occurrence.size()) + " call positions for " +
                std::to_string(members.size()) + " members";
    return {};
}

} // namespace kforge::core
