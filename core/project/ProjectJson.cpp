#include "project/ProjectJson.h"

#include "model/TensorLayout.h"
#include "util/BoundedJson.h"

#include <algorithm>
#include <concepts>
#include <limits>
#include <type_traits>

namespace kforge::core {
namespace {

using nlohmann::json;

// Nesting allowed in a free-form argument value: copying, comparing and dumping a value recurse
// once per level (the same bound as the .cast reader's JSON).
constexpr int kMaxValueDepth = 64;

// Reads a required field of the expected JSON type; on mismatch records an error naming the path.
// Numbers are read exactly: an integer field takes only an integer that fits its type (never a
// fraction, which nlohmann would truncate, nor a value out of range, which it would wrap).
class FieldReader {
public:
    FieldReader(const json& object, std::string where) : m_object(object), m_where(std::move(where)) {}

    void get(const char* name, std::string& out)
    {
        if (const json* v = value(name, json::value_t::string, "a string"))
            out = v->get<std::string>();
    }

    void get(const char* name, bool& out)
    {
        if (const json* v = value(name, json::value_t::boolean, "true or false"))
            out = v->get<bool>();
    }

    void get(const char* name, double& out)
    {
        if (const json* v = present(name)) {
            if (!v->is_number())
                return wrongType(name, "a number");
            out = v->get<double>();
        }
    }

    template <std::integral T>
    void get(const char* name, T& out)
    {
        if (const json* v = present(name)) {
            if (!integerIn<T>(*v))
                return wrongType(name, integerName<T>());
            out = integerOf<T>(*v);
        }
    }

    void get(const char* name, std::vector<std::int64_t>& out)
    {
        if (const json* v = present(name)) {
            if (!v->is_array())
                return wrongType(name, "an array of integers");
            std::vector<std::int64_t> values;
            values.reserve(v->size());
            for (const json& x : *v) {
                if (!integerIn<std::int64_t>(x))
                    return wrongType(name, "an array of integers");
                values.push_back(integerOf<std::int64_t>(x));
            }
            out = std::move(values);
        }
    }

    const json* child(const char* name, json::value_t type)
    {
        if (m_error)
            return nullptr;
        if (!m_object.is_object() || !m_object.contains(name) || m_object.at(name).type() != type) {
            fail(std::string("missing or malformed field '") + name + "'");
            return nullptr;
        }
        return &m_object.at(name);
    }

    bool has(const char* name) const { return m_object.is_object() && m_object.contains(name); }
    std::string path(const std::string& suffix) const { return m_where + suffix; }
    void fail(const std::string& message)
    {
        if (!m_error)
            m_error = makeError(ErrorCode::InvalidArgument, message, m_where);
    }
    const std::optional<Error>& error() const { return m_error; }

private:
    template <std::integral T>
    static bool integerIn(const json& v)
    {
        if (v.is_number_unsigned())
            return v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max());
        if (v.is_number_integer()) {
            const auto x = v.get<std::int64_t>();
            if constexpr (std::is_signed_v<T>)
                return x >= std::numeric_limits<T>::min() && x <= std::numeric_limits<T>::max();
            else
                return x >= 0;
        }
        return false;
    }

    template <std::integral T>
    static T integerOf(const json& v)
    {
        return v.is_number_unsigned() ? static_cast<T>(v.get<std::uint64_t>()) : static_cast<T>(v.get<std::int64_t>());
    }

    template <std::integral T>
    static const char* integerName()
    {
        if constexpr (std::is_same_v<T, bool>)
            return "true or false";
        else if constexpr (std::is_signed_v<T>)
            return sizeof(T) == 8 ? "a 64-bit integer" : "a 32-bit integer";
        else
            return "an integer >= 0";
    }

    const json* present(const char* name)
    {
        if (m_error)
            return nullptr;
        if (!m_object.is_object() || !m_object.contains(name)) {
            fail(std::string("missing field '") + name + "'");
            return nullptr;
        }
        return &m_object.at(name);
    }

    const json* value(const char* name, json::value_t type, const char* expected)
    {
        const json* v = present(name);
        if (v && v->type() != type) {
            wrongType(name, expected);
            return nullptr;
        }
        return v;
    }

    void wrongType(const char* name, const char* expected)
    {
        fail(std::string("field '") + name + "' has the wrong type (expected " + expected + ")");
    }

    const json& m_object;
    std::string m_where;
    std::optional<Error> m_error;
};

Result<TensorSpec> tensorSpecFromJson(const json& j, const std::string& where)
{
    FieldReader r(j, where);
    TensorSpec spec;
    r.get("dtype", spec.dtype);
    r.get("sizes", spec.sizes);
    r.get("strides", spec.strides);
    r.get("device", spec.device);
    if (!r.error()) {
        if (const std::string why = tensorLayoutProblem(spec.sizes, spec.strides); !why.empty())
            r.fail(why);
    }
    if (r.error())
        return *r.error();
    return spec;
}

Result<std::vector<TensorSpec>> tensorSpecsFromJson(const json* array, const std::string& where)
{
    std::vector<TensorSpec> specs;
    for (size_t i = 0; i < array->size(); ++i) {
        auto spec = tensorSpecFromJson((*array)[i], where + "[" + std::to_string(i) + "]");
        if (!spec)
            return spec.error();
        specs.push_back(std::move(spec.value()));
    }
    return specs;
}

// Reads an array of 32-bit integers; false (and a failure recorded on `r`) when it is not one.
bool int32Array(FieldReader& r, const json& v, const char* name, std::vector<std::int32_t>& out)
{
    if (!v.is_array()) {
        r.fail(std::string("field '") + name + "' has the wrong type (expected an array of integers)");
        return false;
    }
    out.clear();
    out.reserve(v.size());
    for (const json& x : v) {
        if (!x.is_number_integer() || x.get<std::int64_t>() < std::numeric_limits<std::int32_t>::min() ||
            x.get<std::int64_t>() > std::numeric_limits<std::int32_t>::max() ||
            (x.is_number_unsigned() && x.get<std::uint64_t>() > std::numeric_limits<std::int32_t>::max())) {
            r.fail(std::string("field '") + name + "' holds something other than a 32-bit integer");
            return false;
        }
        out.push_back(static_cast<std::int32_t>(x.get<std::int64_t>()));
    }
    return true;
}

Result<ArgSpec> argSpecFromJson(const json& j, const std::string& where)
{
    FieldReader r(j, where);
    ArgSpec arg;
    std::string kind;
    r.get("name", arg.name);
    r.get("type", arg.type);
    r.get("kind", kind);
    if (!r.error() && !argKindFromName(kind, arg.kind))
        r.fail("unknown argument kind '" + kind + "'");
    if (const json* tensors = r.child("tensors", json::value_t::array)) {
        auto specs = tensorSpecsFromJson(tensors, where + ".tensors");
        if (!specs)
            return specs.error();
        arg.tensors = std::move(specs.value());
    }
    if (!r.error() && r.has("value")) {
        if (jsonDepth(j.at("value"), kMaxValueDepth) > kMaxValueDepth)
            r.fail("field 'value' is nested deeper than " + std::to_string(kMaxValueDepth) + " levels");
        else
            arg.value = j.at("value");
    }
    if (r.error())
        return *r.error();
    return arg;
}

} // namespace

json toJson(const TensorSpec& spec)
{
    return json{{"dtype", spec.dtype}, {"sizes", spec.sizes}, {"strides", spec.strides}, {"device", spec.device}};
}

json toJson(const ArgSpec& spec)
{
    json tensors = json::array();
    for (const TensorSpec& t : spec.tensors)
        tensors.push_back(toJson(t));
    return json{{"name", spec.name},
                {"type", spec.type},
                {"kind", argKindName(spec.kind)},
                {"tensors", tensors},
                {"value", spec.value}};
}

static json sourceJson(const ChainSource& source)
{
    return source.fromMember ? json{{"member", source.index}, {"output", source.output}}
                             : json{{"input", source.index}};
}

json toJson(const RegionChain& chain)
{
    json members = json::array();
    for (const ChainMember& m : chain.members) {
        json args = json::array();
        for (const ArgSpec& a : m.args)
            args.push_back(toJson(a));
        json sources = json::array();
        for (const auto& argSources : m.sources) {
            json list = json::array();
            for (const ChainSource& s : argSources)
                list.push_back(sourceJson(s));
            sources.push_back(list);
        }
        json outputs = json::array();
        for (const TensorSpec& t : m.outputs)
            outputs.push_back(toJson(t));
        members.push_back(json{{"op", m.op},
                               {"overload", m.overload},
                               {"card_id", m.cardId},
                               {"args", args},
                               {"sources", sources},
                               {"outputs", outputs}});
    }
    json outputs = json::array();
    for (const ChainSource& s : chain.outputs)
        outputs.push_back(sourceJson(s));
    return json{
        {"chain", chain.text()}, {"members", members}, {"outputs", outputs}, {"occurrences", chain.occurrences}};
}

json toJson(const OperatorCard& card)
{
    json args = json::array();
    for (const ArgSpec& a : card.args)
        args.push_back(toJson(a));
    json outputs = json::array();
    for (const TensorSpec& t : card.outputs)
        outputs.push_back(toJson(t));
    json samples = json::array();
    for (const SampleRef& s : card.samples)
        samples.push_back(json{{"call_position", s.callPosition}, {"file", s.file}, {"bytes", s.bytes}});
    json eager = nullptr;
    if (card.eager) {
        eager = json{{"device", card.eager->device},      {"method", card.eager->method},
                     {"median_us", card.eager->medianUs}, {"q1_us", card.eager->q1Us},
                     {"q3_us", card.eager->q3Us},         {"repetitions", card.eager->repetitions}};
    }
    return json{{"id", card.id},
                {"key", card.key},
                {"op", card.op},
                {"overload", card.overload},
                {"schema", card.schema},
                {"args", args},
                {"outputs", outputs},
                {"call_count", card.callCount},
                {"call_positions", card.callPositions},
                {"vendor_backed", card.vendorBacked},
                {"samples", samples},
                {"samples_note", card.samplesNote},
                {"eager", eager},
                {"eager_note", card.eagerNote},
                {"time_share", card.timeShare},
                {"region", card.region ? toJson(*card.region) : json(nullptr)}};
}

json toJson(const CaptureInfo& info)
{
    return json{{"model_path", info.modelPath},
                {"model_sha", info.modelSha},
                {"inputs", info.inputs},
                {"input_seed", info.inputSeed},
                {"device", info.device},
                {"device_name", info.deviceName},
                {"torch_version", info.torchVersion},
                {"kforge_version", info.kforgeVersion},
                {"created_utc", info.createdUtc},
                {"total_calls", info.totalCalls},
                {"ignored_calls", info.ignoredCalls},
                {"samples_per_card", info.samplesPerCard},
                {"sample_budget_bytes", info.sampleBudgetBytes},
                {"total_eager_us", info.totalEagerUs}};
}

static Result<ChainSource> chainSourceFromJson(const json& j, const std::string& where)
{
    FieldReader r(j, where);
    ChainSource source;
    source.fromMember = r.has("member");
    if (source.fromMember) {
        r.get("member", source.index);
        r.get("output", source.output);
    } else {
        r.get("input", source.index);
    }
    if (r.error())
        return *r.error();
    return source;
}

// The chain's internal consistency is checked by the caller against the card (RegionChain::problem).
static Result<RegionChain> regionChainFromJson(const json& j, const std::string& where)
{
    FieldReader r(j, where);
    RegionChain chain;
    if (const json* members = r.child("members", json::value_t::array)) {
        for (size_t m = 0; m < members->size(); ++m) {
            const std::string at = where + ".members[" + std::to_string(m) + "]";
            FieldReader mr((*members)[m], at);
            ChainMember member;
            mr.get("op", member.op);
            mr.get("overload", member.overload);
            mr.get("card_id", member.cardId);
            if (const json* args = mr.child("args", json::value_t::array)) {
                for (size_t i = 0; i < args->size(); ++i) {
                    auto arg = argSpecFromJson((*args)[i], at + ".args[" + std::to_string(i) + "]");
                    if (!arg)
                        return arg.error();
                    member.args.push_back(std::move(arg.value()));
                }
            }
            if (const json* sources = mr.child("sources", json::value_t::array)) {
                for (size_t a = 0; a < sources->size() && !mr.error(); ++a) {
                    if (!(*sources)[a].is_array()) {
                        mr.fail("sources[" + std::to_string(a) + "] is not an array");
                        break;
                    }
                    member.sources.emplace_back();
                    for (size_t e = 0; e < (*sources)[a].size(); ++e) {
                        auto source = chainSourceFromJson(
                            (*sources)[a][e], at + ".sources[" + std::to_string(a) + "][" + std::to_string(e) + "]");
                        if (!source)
                            return source.error();
                        member.sources.back().push_back(source.value());
                    }
                }
            }
            if (const json* outputs = mr.child("outputs", json::value_t::array)) {
                auto specs = tensorSpecsFromJson(outputs, at + ".outputs");
                if (!specs)
                    return specs.error();
                member.outputs = std::move(specs.value());
            }
            if (mr.error())
                return *mr.error();
            chain.members.push_back(std::move(member));
        }
    }
    if (const json* outputs = r.child("outputs", json::value_t::array)) {
        for (size_t o = 0; o < outputs->size(); ++o) {
            auto source = chainSourceFromJson((*outputs)[o], where + ".outputs[" + std::to_string(o) + "]");
            if (!source)
                return source.error();
            chain.outputs.push_back(source.value());
        }
    }
    if (const json* occurrences = r.child("occurrences", json::value_t::array)) {
        for (const json& occurrence : *occurrences) {
            if (!occurrence.is_array() || !std::all_of(occurrence.begin(), occurrence.end(), [](const json& p) {
                    return p.is_number_integer();
                })) {
                r.fail("occurrences holds something other than a list of call positions");
                break;
            }
            chain.occurrences.push_back(occurrence.get<std::vector<std::int64_t>>());
        }
    }
    if (r.error())
        return *r.error();
    return chain;
}

Result<OperatorCard> cardFromJson(const json& j, const std::string& where)
{
    FieldReader r(j, where);
    OperatorCard card;
    r.get("id", card.id);
    r.get("key", card.key);
    r.get("op", card.op);
    r.get("overload", card.overload);
    r.get("schema", card.schema);
    r.get("call_count", card.callCount);
    r.get("call_positions", card.callPositions);
    r.get("vendor_backed", card.vendorBacked);
    r.get("samples_note", card.samplesNote);
    r.get("eager_note", card.eagerNote);
    r.get("time_share", card.timeShare);
    if (const json* args = r.child("args", json::value_t::array)) {
        for (size_t i = 0; i < args->size(); ++i) {
            auto arg = argSpecFromJson((*args)[i], where + ".args[" + std::to_string(i) + "]");
            if (!arg)
                return arg.error();
            card.args.push_back(std::move(arg.value()));
        }
    }
    if (const json* outputs = r.child("outputs", json::value_t::array)) {
        auto specs = tensorSpecsFromJson(outputs, where + ".outputs");
        if (!specs)
            return specs.error();
        card.outputs = std::move(specs.value());
    }
    if (const json* samples = r.child("samples", json::value_t::array)) {
        for (size_t i = 0; i < samples->size(); ++i) {
            FieldReader s((*samples)[i], where + ".samples[" + std::to_string(i) + "]");
            SampleRef ref;
            s.get("call_position", ref.callPosition);
            s.get("file", ref.file);
            s.get("bytes", ref.bytes);
            if (!s.error() && ref.callPosition < 0)
                s.fail("call_position is " + std::to_string(ref.callPosition) + " (expected >= 0)");
            if (!s.error() && ref.bytes < 0)
                s.fail("bytes is " + std::to_string(ref.bytes) + " (expected >= 0)");
            if (s.error())
                return *s.error();
            card.samples.push_back(std::move(ref));
        }
    }
    if (!r.error() && r.has("eager") && !j.at("eager").is_null()) {
        FieldReader e(j.at("eager"), where + ".eager");
        EagerTiming t;
        e.get("device", t.device);
        e.get("method", t.method);
        e.get("median_us", t.medianUs);
        e.get("q1_us", t.q1Us);
        e.get("q3_us", t.q3Us);
        e.get("repetitions", t.repetitions);
        if (!e.error() && t.repetitions < 0)
            e.fail("repetitions is " + std::to_string(t.repetitions) + " (expected >= 0)");
        if (e.error())
            return *e.error();
        card.eager = t;
    }
    // "region" is absent in projects written before region cards: an operator card.
    if (!r.error() && r.has("region") && !j.at("region").is_null()) {
        auto chain = regionChainFromJson(j.at("region"), where + ".region");
        if (!chain)
            return chain.error();
        std::vector<TensorSpec> inputs;
        for (const ArgSpec& arg : card.args)
            if (arg.kind == ArgKind::Tensor && arg.tensors.size() == 1)
                inputs.push_back(arg.tensors.front());
        if (card.op != kRegionOp || inputs.size() != card.args.size())
            r.fail("a region card must be op " + std::string(kRegionOp) + " with one tensor per argument");
        else if (const std::string why = chain->problem(inputs); !why.empty())
            r.fail("region: " + why);
        else
            card.region = std::move(chain.value());
    } else if (!r.error() && card.op == kRegionOp) {
        r.fail(std::string("op ") + kRegionOp + " without its region chain");
    }
    if (!r.error() && card.id != cardIdForKey(card.key))
        r.fail("card id does not match its key");
    if (!r.error() && static_cast<std::int64_t>(card.callPositions.size()) != card.callCount)
        r.fail("call_count does not match call_positions");
    if (!r.error() &&
        std::any_of(card.callPositions.begin(), card.callPositions.end(), [](std::int64_t p) { return p < 0; }))
        r.fail("call_positions holds a negative position");
    if (r.error())
        return *r.error();
    return card;
}

json toJson(const CallGraph& graph)
{
    json calls = json::array();
    for (const GraphCall& call : graph.calls)
        calls.push_back(
            json{{"card", call.card}, {"inputs", call.inputs}, {"outputs", call.outputs}, {"aliasing", call.aliasing}});
    return json{{"format", "kforge-graph"},
                {"format_version", CallGraph::kFormatVersion},
                {"calls", calls},
                {"value_producers", graph.valueProducers},
                {"model_outputs", graph.modelOutputs}};
}

Result<CallGraph> callGraphFromJson(const json& j, const std::vector<OperatorCard>& cards, const std::string& where)
{
    FieldReader r(j, where);
    std::string format;
    int version = 0;
    r.get("format", format);
    r.get("format_version", version);
    if (!r.error() && format != "kforge-graph")
        r.fail("not a call graph (format '" + format + "')");
    if (!r.error() && (version < 1 || version > CallGraph::kFormatVersion))
        r.fail("format_version " + std::to_string(version) + " (this build reads 1 to " +
               std::to_string(CallGraph::kFormatVersion) + ")");
    CallGraph graph;
    if (const json* producers = r.child("value_producers", json::value_t::array))
        int32Array(r, *producers, "value_producers", graph.valueProducers);
    if (!r.error() && r.has("model_outputs"))
        int32Array(r, j.at("model_outputs"), "model_outputs", graph.modelOutputs);
    else
        r.child("model_outputs", json::value_t::array);
    if (const json* calls = r.child("calls", json::value_t::array)) {
        graph.calls.reserve(calls->size());
        for (size_t i = 0; i < calls->size() && !r.error(); ++i) {
            const json& c = (*calls)[i];
            FieldReader cr(c, where + ": calls[" + std::to_string(i) + "]");
            GraphCall call;
            cr.get("card", call.card);
            cr.get("aliasing", call.aliasing);
            if (const json* outputs = cr.child("outputs", json::value_t::array))
                int32Array(cr, *outputs, "outputs", call.outputs);
            if (const json* inputs = cr.child("inputs", json::value_t::array)) {
                for (const json& arg : *inputs) {
                    call.inputs.emplace_back();
                    if (!int32Array(cr, arg, "inputs", call.inputs.back()))
                        break;
                }
            }
            if (cr.error())
                return *cr.error();
            graph.calls.push_back(std::move(call));
        }
    }
    if (!r.error()) {
        if (const std::string why = graph.problem(cards); !why.empty())
            r.fail(why);
    }
    if (r.error())
        return *r.error();
    return graph;
}

Result<CaptureInfo> captureInfoFromJson(const json& j, const std::string& where)
{
    FieldReader r(j, where);
    CaptureInfo info;
    r.get("model_path", info.modelPath);
    r.get("model_sha", info.modelSha);
    r.get("inputs", info.inputs);
    if (j.contains("input_seed")) // absent in projects written before it was recorded: seed 0
        r.get("input_seed", info.inputSeed);
    r.get("device", info.device);
    r.get("device_name", info.deviceName);
    r.get("torch_version", info.torchVersion);
    r.get("kforge_version", info.kforgeVersion);
    r.get("created_utc", info.createdUtc);
    r.get("total_calls", info.totalCalls);
    r.get("ignored_calls", info.ignoredCalls);
    r.get("samples_per_card", info.samplesPerCard);
    r.get("sample_budget_bytes", info.sampleBudgetBytes);
    r.get("total_eager_us", info.totalEagerUs);
    const std::pair<const char*, std::int64_t> counts[] = {{"total_calls", info.totalCalls},
                                                           {"ignored_calls", info.ignoredCalls},
                                                           {"samples_per_card", info.samplesPerCard},
                                                           {"sample_budget_bytes", info.sampleBudgetBytes}};
    for (const auto& [name, count] : counts) {
        if (!r.error() && count < 0)
            r.fail(std::string(name) + " is " + std::to_string(count) + " (expected >= 0)");
    }
    if (r.error())
        return *r.error();
    return info;
}

} // namespace kforge::core
