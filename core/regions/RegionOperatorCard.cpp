#include "regions/RegionOperatorCard.h"

#include <string>

namespace kforge::core {
namespace {

std::string regionSchema(size_t inputs, size_t outputs)
{
    std::string schema = std::string(kRegionOp) + "(";
    for (size_t i = 0; i < inputs; ++i)
        schema += (i ? ", Tensor in" : "Tensor in") + std::to_string(i);
    schema += ") -> (";
    for (size_t o = 0; o < outputs; ++o)
        schema += o ? ", Tensor" : "Tensor";
    return schema + ")";
}

} // namespace

Result<OperatorCard> makeRegionCard(const RegionCard& region, const std::vector<OperatorCard>& cards)
{
    RegionChain chain;
    for (const RegionMember& member : region.members) {
        if (member.card < 0 || static_cast<size_t>(member.card) >= cards.size())
            return makeError(ErrorCode::InvalidArgument, "a member names no card", region.id);
        const OperatorCard& card = cards[static_cast<size_t>(member.card)];
        ChainMember m{card.op, card.overload, card.id, card.args, {}, card.outputs};
        for (const ArgSpec& arg : card.args)
            m.sources.emplace_back(arg.kind == ArgKind::Tensor || arg.kind == ArgKind::TensorList ? arg.tensors.size()
                                                                                                  : 0);
        chain.members.push_back(std::move(m));
    }
    const auto slot = [&](int member, int arg, int element) -> ChainSource* {
        if (member < 0 || static_cast<size_t>(member) >= chain.members.size())
            return nullptr;
        auto& sources = chain.members[static_cast<size_t>(member)].sources;
        if (arg < 0 || static_cast<size_t>(arg) >= sources.size() || element < 0 ||
            static_cast<size_t>(element) >= sources[static_cast<size_t>(arg)].size())
            return nullptr;
        return &sources[static_cast<size_t>(arg)][static_cast<size_t>(element)];
    };
    for (const RegionEdge& edge : region.edges) {
        ChainSource* source = slot(edge.to, edge.arg, edge.element);
        if (!source)
            return makeError(ErrorCode::InvalidArgument, "an edge names no member argument", region.id);
        *source = ChainSource{true, edge.from, edge.output};
    }
    OperatorCard card;
    std::vector<TensorSpec> inputSpecs;
    for (size_t i = 0; i < region.inputs.size(); ++i) {
        for (const RegionUse& use : region.inputs[i].uses) {
            ChainSource* source = slot(use.member, use.arg, use.element);
            if (!source)
                return makeError(ErrorCode::InvalidArgument, "an input use names no member argument", region.id);
            *source = ChainSource{false, static_cast<int>(i), 0};
        }
        ArgSpec arg;
        arg.name = "in" + std::to_string(i);
        arg.type = "Tensor";
        arg.kind = ArgKind::Tensor;
        arg.tensors = {region.inputs[i].spec};
        card.args.push_back(std::move(arg));
        inputSpecs.push_back(region.inputs[i].spec);
    }
    for (const RegionOutput& output : region.outputs) {
        // A later in-place member writing this value as its `self` leaves eager with the written
        // value where the region would hand on the earlier one.
        for (size_t later = static_cast<size_t>(output.member) + 1; later < chain.members.size(); ++later) {
            const ChainMember& m = chain.members[later];
            if (isInPlaceOpName(m.op) && !m.sources.empty() && !m.sources.front().empty() &&
                m.sources.front().front() == ChainSource{true, output.member, output.output})
                return makeError(ErrorCode::Unsupported,
                                 "member " + m.op + " overwrites in place a value the region hands on", region.id);
        }
        chain.outputs.push_back(ChainSource{true, output.member, output.output});
        card.outputs.push_back(output.spec);
    }
    chain.occurrences = region.occurrences;
    if (const std::string why = chain.problem(inputSpecs); !why.empty())
        return makeError(ErrorCode::InvalidArgument, why, region.id);

    card.id = region.id;
    card.key = region.key;
    card.op = kRegionOp;
    card.schema = regionSchema(region.inputs.size(), region.outputs.size());
    card.callCount = static_cast<std::int64_t>(region.occurrences.size());
    for (const auto& occurrence : region.occurrences)
        card.callPositions.push_back(occurrence.front());
    card.region = std::move(chain);
    return card;
}

Result<OperatorCard> makeOpChainCard(const OperatorCard& card)
{
    if (card.isRegion())
        return makeError(ErrorCode::InvalidArgument, "a region card is a chain already", card.id);
    RegionCard region;
    region.members.push_back(RegionMember{card.op, card.overload, card.id, 0});
    for (size_t a = 0; a < card.args.size(); ++a) {
        const ArgSpec& arg = card.args[a];
        if (arg.kind == ArgKind::TensorList)
            return makeError(ErrorCode::InvalidArgument, "argument " + arg.name + " is a tensor list", card.id);
        if (arg.kind == ArgKind::Tensor)
            for (size_t e = 0; e < arg.tensors.size(); ++e)
                region.inputs.push_back(
                    RegionInput{arg.tensors[e], {RegionUse{0, static_cast<int>(a), static_cast<int>(e)}}});
    }
    for (size_t o = 0; o < card.outputs.size(); ++o)
        region.outputs.push_back(RegionOutput{0, static_cast<int>(o), card.outputs[o]});
    auto chainCard = makeRegionCard(region, {card});
    if (!chainCard)
        return chainCard.error();
    chainCard->id = card.id;
    chainCard->key = card.key;
    return chainCard;
}

std::vector<std::string> opChainArgumentNames(const OperatorCard& chainCard)
{
    std::vector<std::string> names(chainCard.args.size());
    const ChainMember& member = chainCard.region->members.front();
    for (std::size_t a = 0; a < member.sources.size(); ++a)
        for (const ChainSource& source : member.sources[a])
            names.at(static_cast<std::size_t>(source.index)) = member.args[a].name;
    return names;
}

} // namespace kforge::core
