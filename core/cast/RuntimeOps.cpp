#include "cast/RuntimeOps.h"

#include <map>

namespace kforge::core {

std::optional<RuntimeHook> runtimeHookFor(const std::string& qualifiedOp, std::string& why)
{
    // softmax.int / log_softmax.int are composite (a dtype conversion, then _softmax): they are
    // hooked as themselves, so a kernel that converts while it reads replaces both steps. Cards of
    // _softmax / _log_softmax (called directly) are hooked at those.
    static const std::map<std::string, RuntimeHook> hooks = {
        // Fused-region kernels are no dispatcher override: a model's graph, rewritten where the
        // chain runs (core/region_rewrite), offers those calls through kforge::region_call.
        {"kforge::region", {"kforge::region", ""}},
        {"aten::softmax.int", {"aten::softmax", "int"}},
        {"aten::_softmax", {"aten::_softmax", ""}},
        {"aten::log_softmax.int", {"aten::log_softmax", "int"}},
        {"aten::_log_softmax", {"aten::_log_softmax", ""}},
        {"aten::relu", {"aten::relu", ""}},
        {"aten::relu_", {"aten::relu_", ""}},
        {"aten::silu_", {"aten::silu_", ""}},
        {"aten::gelu", {"aten::gelu", ""}},
        {"aten::silu", {"aten::silu", ""}},
        {"aten::sigmoid", {"aten::sigmoid", ""}},
        {"aten::tanh", {"aten::tanh", ""}},
        {"aten::neg", {"aten::neg", ""}},
        {"aten::rsqrt", {"aten::rsqrt", ""}},
        {"aten::cos", {"aten::cos", ""}},
        {"aten::sin", {"aten::sin", ""}},
        {"aten::pow.Tensor_Scalar", {"aten::pow", "Tensor_Scalar"}},
        {"aten::add.Tensor", {"aten::add", "Tensor"}},
        {"aten::sub.Tensor", {"aten::sub", "Tensor"}},
        {"aten::mul.Tensor", {"aten::mul", "Tensor"}},
        {"aten::div.Tensor", {"aten::div", "Tensor"}},
        {"aten::add_.Tensor", {"aten::add_", "Tensor"}},
        {"aten::sub_.Tensor", {"aten::sub_", "Tensor"}},
        {"aten::mul_.Tensor", {"aten::mul_", "Tensor"}},
        {"aten::div_.Tensor", {"aten::div_", "Tensor"}},
        {"aten::mean.dim", {"aten::mean", "dim"}},
        {"aten::sum.dim_IntList", {"aten::sum", "dim_IntList"}},
        {"aten::cat", {"aten::cat", ""}},
        {"aten::cumsum", {"aten::cumsum", ""}},
        {"aten::cumprod", {"aten::cumprod", ""}},
        {"aten::avg_pool2d", {"aten::avg_pool2d", ""}},
        {"aten::avg_pool3d", {"aten::avg_pool3d", ""}},
        // Statistics and index reductions (runtime/ReductionHooks.h): the `correction` overloads
        // and the others at their CUDA kernels, the `dim` overloads and instance_norm as themselves.
        {"aten::var.correction", {"aten::var", "correction"}},
        {"aten::std.correction", {"aten::std", "correction"}},
        {"aten::var_mean.correction", {"aten::var_mean", "correction"}},
        {"aten::std_mean.correction", {"aten::std_mean", "correction"}},
        {"aten::var.dim", {"aten::var", "dim"}},
        {"aten::std.dim", {"aten::std", "dim"}},
        {"aten::var_mean.dim", {"aten::var_mean", "dim"}},
        {"aten::std_mean.dim", {"aten::std_mean", "dim"}},
        {"aten::logsumexp", {"aten::logsumexp", ""}},
        {"aten::argmax", {"aten::argmax", ""}},
        {"aten::argmin", {"aten::argmin", ""}},
        {"aten::max.dim", {"aten::max", "dim"}},
        {"aten::min.dim", {"aten::min", "dim"}},
        {"aten::max", {"aten::max", ""}},
        {"aten::min", {"aten::min", ""}},
        {"aten::amax", {"aten::amax", ""}},
        {"aten::amin", {"aten::amin", ""}},
        {"aten::prod.dim_int", {"aten::prod", "dim_int"}},
        {"aten::linalg_vector_norm", {"aten::linalg_vector_norm", ""}},
        {"aten::instance_norm", {"aten::instance_norm", ""}},
        // Composite operators: overridden as themselves (at the CUDA key, and for the
        // CompositeImplicitAutograd ones also at AutogradCUDA; see runtime/CompositeHooks.h).
        {"aten::layer_norm", {"aten::layer_norm", ""}},
        {"aten::group_norm", {"aten::group_norm", ""}},
        {"aten::batch_norm", {"aten::batch_norm", ""}},
        {"aten::rms_norm", {"aten::rms_norm", ""}},
        {"aten::adaptive_avg_pool2d", {"aten::adaptive_avg_pool2d", ""}},
        {"aten::max_pool1d", {"aten::max_pool1d", ""}},
        {"aten::max_pool2d", {"aten::max_pool2d", ""}},
        {"aten::max_pool3d", {"aten::max_pool3d", ""}},
        {"aten::avg_pool1d", {"aten::avg_pool1d", ""}},
        {"aten::embedding", {"aten::embedding", ""}},
        {"aten::to.dtype", {"aten::to", "dtype"}},
        {"aten::type_as", {"aten::type_as", ""}},
        {"aten::contiguous", {"aten::contiguous", ""}},
        {"aten::reshape", {"aten::reshape", ""}},
        {"aten::flatten.using_ints", {"aten::flatten", "using_ints"}},
    };
    if (auto found = hooks.find(qualifiedOp); found != hooks.end())
        return found->second;
    why = "the runtime has no dispatch hook for " + qualifiedOp;
    return std::nullopt;
}

} // namespace kforge::core
