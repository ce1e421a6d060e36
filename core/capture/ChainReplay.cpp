#include "capture/ChainReplay.h"

#include "capture/TorchInterop.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <cmath>
#include <limits>

namespace kforge::core {
namespace {

// A double as describeValue wrote it: a number, or "nan" / "inf" / "-inf".
bool doubleOf(const nlohmann::json& j, double& out)
{
    if (j.is_number()) {
        out = j.get<double>();
        return true;
    }
    if (j.is_string()) {
        const std::string& s = j.get_ref<const std::string&>();
        if (s == "nan")
            out = std::numeric_limits<double>::quiet_NaN();
        else if (s == "inf")
            out = std::numeric_limits<double>::infinity();
        else if (s == "-inf")
            out = -std::numeric_limits<double>::infinity();
        else
            return false;
        return true;
    }
    return false;
}

// A Scalar keeps its captured kind: an integer stays an integer (type promotion depends on it).
std::optional<c10::IValue> scalarOf(const nlohmann::json& j)
{
    if (j.is_boolean())
        return c10::IValue(j.get<bool>());
    if (j.is_number_integer())
        return c10::IValue(j.get<std::int64_t>());
    double d = 0;
    if (doubleOf(j, d))
        return c10::IValue(d);
    return std::nullopt;
}

std::optional<c10::IValue> valueOfType(std::string type, const nlohmann::json& j)
{
    if (!type.empty() && type.back() == '?') {
        if (j.is_null())
            return c10::IValue();
        type.pop_back();
    }
    if ((type == "int" || type == "SymInt" || type == "ScalarType" || type == "MemoryFormat" || type == "Layout") &&
        j.is_number_integer())
        return c10::IValue(j.get<std::int64_t>());
    if (type == "bool" && j.is_boolean())
        return c10::IValue(j.get<bool>());
    if (type == "float") {
        double d = 0;
        if (doubleOf(j, d))
            return c10::IValue(d);
        return std::nullopt;
    }
    if (type == "Scalar")
        return scalarOf(j);
    if (type == "str" && j.is_string())
        return c10::IValue(j.get<std::string>());
    if (type == "Device" && j.is_string())
        return c10::IValue(c10::Device(j.get<std::string>()));
    if ((type == "int[]" || type == "SymInt[]" || type.rfind("int[", 0) == 0 || type.rfind("SymInt[", 0) == 0) &&
        j.is_array()) {
        std::vector<std::int64_t> values;
        for (const nlohmann::json& x : j) {
            if (!x.is_number_integer())
                return std::nullopt;
            values.push_back(x.get<std::int64_t>());
        }
        return c10::IValue(values);
    }
    if (type.rfind("float[", 0) == 0 && j.is_array()) {
        std::vector<double> values;
        for (const nlohmann::json& x : j) {
            double d = 0;
            if (!doubleOf(x, d))
                return std::nullopt;
            values.push_back(d);
        }
        return c10::IValue(values);
    }
    if (type.rfind("bool[", 0) == 0 && j.is_array()) {
        c10::List<bool> values;
        for (const nlohmann::json& x : j) {
            if (!x.is_boolean())
                return std::nullopt;
            values.push_back(x.get<bool>());
        }
        return c10::IValue(values);
    }
    return std::nullopt;
}

// A captured dtype argument ("ScalarType", "ScalarType?") naming a floating dtype, made float64.
void widenFloatingDtype(const ArgSpec& arg, c10::IValue& value)
{
    if (arg.type.rfind("ScalarType", 0) != 0 || !value.isInt())
        return;
    const auto type = static_cast<c10::ScalarType>(value.toInt());
    if (c10::isFloatingType(type))
        value = c10::IValue(static_cast<std::int64_t>(c10::ScalarType::Double));
}

} // namespace

Result<c10::IValue> capturedArgumentValue(const ArgSpec& arg)
{
    if (arg.kind == ArgKind::None)
        return c10::IValue();
    if (arg.kind == ArgKind::Value) {
        if (auto value = valueOfType(arg.type, arg.value))
            return *value;
    }
    return makeError(ErrorCode::Unsupported, "cannot rebuild a captured " + arg.type + " value",
                     "argument " + arg.name);
}

Result<ChainReplay> ChainReplay::prepare(const RegionChain& chain, ReplayPrecision precision)
{
    std::vector<Member> members;
    for (const ChainMember& m : chain.members) {
        const std::string name = m.overload.empty() ? m.op : m.op + "." + m.overload;
        auto handle = c10::Dispatcher::singleton().findSchema({m.op, m.overload});
        if (!handle)
            return makeError(ErrorCode::Unsupported, "operator not found in the dispatcher", name);
        Member member{*handle, name, {}};
        for (const ArgSpec& arg : m.args) {
            if (arg.kind == ArgKind::TensorList && !arg.value.is_null())
                return makeError(ErrorCode::Unsupported, "a tensor list with absent entries", name + ", " + arg.name);
            if (arg.kind == ArgKind::Tensor || arg.kind == ArgKind::TensorList) {
                member.fixed.emplace_back();
                continue;
            }
            auto value = capturedArgumentValue(arg);
            if (!value) {
                Error error = value.error();
                error.context = name + ", " + error.context;
                return error;
            }
            if (precision == ReplayPrecision::Float64)
                widenFloatingDtype(arg, value.value());
            member.fixed.emplace_back(std::move(value.value()));
        }
        members.push_back(std::move(member));
    }
    return ChainReplay(chain, std::move(members), precision);
}

Result<std::vector<at::Tensor>> ChainReplay::run(const std::vector<at::Tensor>& given) const
{
    std::vector<at::Tensor> widened;
    if (m_precision == ReplayPrecision::Float64) {
        try {
            c10::InferenceMode inferenceMode;
            for (const at::Tensor& t : given)
                widened.push_back(!t.defined()                              ? t
                                      : at::isFloatingType(t.scalar_type()) ? t.to(at::kDouble, false, true)
                                                                            : t.clone());
        } catch (const std::exception& e) {
            return makeError(ErrorCode::Internal, "float64 copies of the inputs: " + torchinterop::oneLineError(e),
                             "region chain");
        }
    }
    const std::vector<at::Tensor>& inputs = m_precision == ReplayPrecision::Float64 ? widened : given;
    std::vector<std::vector<at::Tensor>> produced(m_members.size());
    const auto tensorOf = [&](const ChainSource& source) -> const at::Tensor& {
        return source.fromMember ? produced[static_cast<size_t>(source.index)][static_cast<size_t>(source.output)]
                                 : inputs[static_cast<size_t>(source.index)];
    };
    for (size_t m = 0; m < m_members.size(); ++m) {
        const ChainMember& spec = m_chain.members[m];
        const Member& member = m_members[m];
        try {
            c10::InferenceMode inferenceMode;
            std::vector<c10::IValue> stack;
            for (size_t a = 0; a < spec.args.size(); ++a) {
                for (const ChainSource& source : spec.sources[a])
                    if (!source.fromMember && static_cast<size_t>(source.index) >= inputs.size())
                        return makeError(ErrorCode::InvalidArgument, "fewer inputs than the region reads", member.name);
                if (member.fixed[a]) {
                    stack.push_back(*member.fixed[a]);
                } else if (spec.args[a].kind == ArgKind::Tensor) {
                    stack.emplace_back(tensorOf(spec.sources[a].front()));
                } else {
                    std::vector<at::Tensor> list;
                    for (const ChainSource& source : spec.sources[a])
                        list.push_back(tensorOf(source));
                    stack.emplace_back(list);
                }
            }
            member.handle.callBoxed(stack);
            for (const c10::IValue& result : stack) {
                if (result.isTensor())
                    produced[m].push_back(result.toTensor());
                else if (result.isTensorList())
                    for (const at::Tensor& t : result.toTensorVector())
                        produced[m].push_back(t);
            }
            if (produced[m].size() != spec.outputs.size())
                return makeError(ErrorCode::Internal,
                                 "returned " + std::to_string(produced[m].size()) + " tensors where the capture saw " +
                                     std::to_string(spec.outputs.size()),
                                 member.name);
        } catch (const std::exception& e) {
            return makeError(ErrorCode::Internal, "replay failed: " + torchinterop::oneLineError(e), member.name);
        }
    }
    std::vector<at::Tensor> outputs;
    for (const ChainSource& source : m_chain.outputs)
        outputs.push_back(tensorOf(source));
    return outputs;
}

} // namespace kforge::core
