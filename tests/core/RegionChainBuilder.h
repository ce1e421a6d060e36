#pragma once
// Hand-made region cards for tests: region inputs, member calls with named arguments (tensors or
// Python scalars) and the region's outputs, written straight into a RegionChain (no call graph).

#include "model/OperatorCard.h"
#include "model/RegionChain.h"

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace kforge::core::test_regions {

inline std::vector<std::int64_t> contiguous(const std::vector<std::int64_t>& sizes)
{
    std::vector<std::int64_t> strides(sizes.size(), 1);
    for (std::size_t d = sizes.size(); d-- > 1;)
        strides[d - 1] = strides[d] * sizes[d];
    return strides;
}

inline TensorSpec spec(const std::string& dtype, std::vector<std::int64_t> sizes,
                       std::vector<std::int64_t> strides = {})
{
    if (strides.empty())
        strides = contiguous(sizes);
    return TensorSpec{dtype, std::move(sizes), std::move(strides), "cuda:0"};
}

/// A value of the chain: where it comes from and its spec.
struct Value {
    ChainSource source;
    TensorSpec spec;
};

/// One argument of a call: a tensor value, a Python scalar (JSON number / bool / string), None or
/// a Tensor[] of values.
struct Arg {
    std::string name;
    std::variant<Value, nlohmann::json, std::monostate, std::vector<Value>> what;
};

class RegionChainBuilder {
public:
    Value input(const TensorSpec& t)
    {
        ArgSpec arg;
        arg.name = "in" + std::to_string(m_card.args.size());
        arg.type = "Tensor";
        arg.kind = ArgKind::Tensor;
        arg.tensors = {t};
        m_card.args.push_back(arg);
        return Value{ChainSource{false, static_cast<int>(m_card.args.size()) - 1, 0}, t};
    }

    /// A member call of `op` ("aten::mul") returning one tensor of spec `out`.
    Value call(const std::string& op, const std::string& overload, const std::vector<Arg>& args, const TensorSpec& out)
    {
        ChainMember m;
        m.op = op;
        m.overload = overload;
        m.cardId = "card" + std::to_string(m_chain.members.size());
        for (const Arg& a : args) {
            ArgSpec spec;
            spec.name = a.name;
            std::vector<ChainSource> sources;
            if (const Value* v = std::get_if<Value>(&a.what)) {
                spec.type = "Tensor";
                spec.kind = ArgKind::Tensor;
                spec.tensors = {v->spec};
                sources.push_back(v->source);
            } else if (const auto* list = std::get_if<std::vector<Value>>(&a.what)) {
                spec.type = "Tensor[]";
                spec.kind = ArgKind::TensorList;
                for (const Value& v : *list) {
                    spec.tensors.push_back(v.spec);
                    sources.push_back(v.source);
                }
            } else if (const nlohmann::json* j = std::get_if<nlohmann::json>(&a.what)) {
                spec.type = "Scalar";
                spec.kind = ArgKind::Value;
                spec.value = *j;
            } else {
                spec.type = "Scalar?";
                spec.kind = ArgKind::None;
            }
            m.args.push_back(spec);
            m.sources.push_back(sources);
        }
        m.outputs = {out};
        m_chain.members.push_back(m);
        return Value{ChainSource{true, static_cast<int>(m_chain.members.size()) - 1, 0}, out};
    }
    /// A call with self (and other) of the first value's spec as output.
    Value unary(const std::string& op, const Value& x, const std::string& overload = "")
    {
        return call(op, overload, {{"self", x}}, x.spec);
    }
    Value binary(const std::string& op, const Value& x, const std::variant<Value, nlohmann::json>& y,
                 const TensorSpec& out)
    {
        std::vector<Arg> args{{"self", x}};
        if (const Value* v = std::get_if<Value>(&y))
            args.push_back({"other", *v});
        else
            args.push_back({"other", std::get<nlohmann::json>(y)});
        const bool scalar = std::holds_alternative<nlohmann::json>(y);
        if (op == "aten::add" || op == "aten::sub" || op == "aten::rsub")
            args.push_back({"alpha", nlohmann::json(1)});
        return call(op, scalar ? "Scalar" : "Tensor", args, out);
    }

    void output(const Value& v)
    {
        m_chain.outputs.push_back(v.source);
        m_card.outputs.push_back(v.spec);
    }

    OperatorCard card() const
    {
        OperatorCard card = m_card;
        card.op = kRegionOp;
        card.key = "test region " + m_chain.text();
        card.region = m_chain;
        std::vector<std::int64_t> occurrence;
        for (std::size_t m = 0; m < m_chain.members.size(); ++m)
            occurrence.push_back(static_cast<std::int64_t>(m));
        card.region->occurrences = {occurrence};
        return card;
    }

private:
    OperatorCard m_card;
    RegionChain m_chain;
};

} // namespace kforge::core::test_regions
