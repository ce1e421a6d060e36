#include "regions/RegionCard.h"

namespace kforge::core {
namespace {

nlohmann::json specJson(const TensorSpec& spec)
{
    return nlohmann::json{
        {"dtype", spec.dtype}, {"sizes", spec.sizes}, {"strides", spec.strides}, {"device", spec.device}};
}

} // namespace

std::string RegionCard::chainText() const
{
    std::string text;
    for (const RegionMember& member : members) {
        if (!text.empty())
            text += " -> ";
        text += member.op.rfind("aten::", 0) == 0 ? member.op.substr(6) : member.op;
    }
    return text;
}

nlohmann::json toJson(const RegionCard& region)
{
    using nlohmann::json;
    json members = json::array();
    for (const RegionMember& m : region.members)
        members.push_back(json{{"op", m.op}, {"overload", m.overload}, {"card_id", m.cardId}});
    json edges = json::array();
    for (const RegionEdge& e : region.edges)
        edges.push_back(
            json{{"from", e.from}, {"output", e.output}, {"to", e.to}, {"arg", e.arg}, {"element", e.element}});
    json inputs = json::array();
    for (const RegionInput& input : region.inputs) {
        json uses = json::array();
        for (const RegionUse& u : input.uses)
            uses.push_back(json{{"member", u.member}, {"arg", u.arg}, {"element", u.element}});
        json item = specJson(input.spec);
        item["uses"] = uses;
        inputs.push_back(item);
    }
    json outputs = json::array();
    for (const RegionOutput& output : region.outputs) {
        json item = specJson(output.spec);
        item["member"] = output.member;
        item["output"] = output.output;
        outputs.push_back(item);
    }
    return json{{"id", region.id},
                {"kind", "region"},
                {"chain", region.chainText()},
                {"key", region.key},
                {"members", members},
                {"edges", edges},
                {"inputs", inputs},
                {"outputs", outputs},
                {"occurrences", region.occurrences},
                {"eager_us_estimate", region.eagerUsEstimate},
                {"eager_estimate_complete", region.eagerEstimateComplete}};
}

} // namespace kforge::core
