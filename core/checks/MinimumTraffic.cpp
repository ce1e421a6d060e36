#include "checks/MinimumTraffic.h"

#include <algorithm>
#include <set>

namespace kforge::core {

int dtypeElementBytes(const std::string& dtype)
{
    if (dtype == "float64" || dtype == "int64" || dtype == "complex64")
        return 8;
    if (dtype == "float32" || dtype == "int32")
        return 4;
    if (dtype == "float16" || dtype == "bfloat16" || dtype == "int16")
        return 2;
    if (dtype == "int8" || dtype == "uint8" || dtype == "bool" || dtype.starts_with("float8"))
        return 1;
    return 0;
}

std::int64_t distinctElements(const TensorSpec& tensor)
{
    std::int64_t elements = 1;
    for (std::size_t d = 0; d < tensor.sizes.size(); ++d) {
        if (tensor.sizes[d] == 0)
            return 0;
        if (d >= tensor.strides.size() || tensor.strides[d] != 0)
            elements *= tensor.sizes[d];
    }
    if (tensor.strides.size() != tensor.sizes.size())
        return elements;
    return std::min(elements, tensor.storageSpan());
}

bool readsArgumentOnlyInPart(const std::string& op, const std::string& arg)
{
    if (op == "aten::type_as")
        return arg == "other"; // only its dtype
    if (op == "aten::embedding" || op == "aten::embedding_bag" || op == "aten::_embedding_bag")
        return arg == "weight"; // the indexed rows
    if (op.starts_with("aten::index_select") || op.starts_with("aten::gather") || op.starts_with("aten::index.") ||
        op == "aten::index" || op == "aten::take")
        return arg == "self"; // the indexed elements
    return false;
}

std::int64_t minimumBytesMoved(const OperatorCard& card, const LaunchPlan& plan)
{
    // The tensor arguments the plan passes, as "self" or "tensors.2".
    std::set<std::string> passed;
    for (const KernelLaunch& launch : plan.launches)
        for (const KernelParam& param : launch.params)
            if (param.source == ParamSource::TensorArg)
                passed.insert(param.index >= 0 ? param.name + "." + std::to_string(param.index) : param.name);

    const std::string op = card.qualifiedName();
    const auto bytesOf = [](const TensorSpec& t) { return distinctElements(t) * dtypeElementBytes(t.dtype); };
    std::int64_t bytes = 0;
    for (const ArgSpec& arg : card.args) {
        if (readsArgumentOnlyInPart(op, arg.name))
            continue;
        if (arg.kind == ArgKind::Tensor && arg.tensors.size() == 1 && passed.contains(arg.name))
            bytes += bytesOf(arg.tensors[0]);
        else if (arg.kind == ArgKind::TensorList)
            for (std::size_t k = 0; k < arg.tensors.size(); ++k)
                if (passed.contains(arg.name + "." + std::to_string(k)))
                    bytes += bytesOf(arg.tensors[k]);
    }
    for (const TensorSpec& output : plan.outputs)
        bytes += bytesOf(output);
    return bytes;
}

} // namespace kforge::core
