#include "runtime/PackagedKernel.h"

#include "runtime/HostScalars.h"

#include "capture/TorchInterop.h"
#include "cast/GuardMatch.h"
#include "cast/HostNumbers.h"
#include "project/ProjectJson.h"

#include <ATen/cuda/CUDAContext.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/ScalarType.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <cmath>

namespace kforge::runtime {

using core::ArgKind;
using core::ErrorCode;
using core::makeError;
using nlohmann::json;

namespace {

// The 16- and 32-bit float dtypes a chain's members read or write: those eager computes them in.
std::vector<std::string> floatingDtypesOf(const core::RegionChain& chain)
{
    std::vector<std::string> dtypes;
    const auto note = [&](const core::TensorSpec& spec) {
        const bool floating = spec.dtype == "float32" || spec.dtype == "float16" || spec.dtype == "bfloat16";
        if (floating && std::find(dtypes.begin(), dtypes.end(), spec.dtype) == dtypes.end())
            dtypes.push_back(spec.dtype);
    };
    for (const core::ChainMember& member : chain.members) {
        for (const core::ArgSpec& arg : member.args)
            for (const core::TensorSpec& spec : arg.tensors)
                note(spec);
        for (const core::TensorSpec& spec : member.outputs)
            note(spec);
    }
    return dtypes;
}

} // namespace

core::Result<core::OperatorCard> manifestCard(const core::CastKernel& kernel)
{
    if (!kernel.launchPlan.is_object() || !kernel.launchPlan.contains("outputs"))
        return makeError(ErrorCode::InvalidArgument, "the launch plan does not list its outputs",
                         "kernel " + kernel.id);
    // The plan's outputs as tensor specs on the device (plans leave the device implicit).
    json outputs = kernel.launchPlan.at("outputs");
    if (!outputs.is_array())
        return makeError(ErrorCode::InvalidArgument, "the launch plan's outputs are not a list", "kernel " + kernel.id);
    for (json& output : outputs)
        if (output.is_object() && !output.contains("device"))
            output["device"] = "cuda";
    // Parsed with an empty key (and its id) so that the args and outputs are decoded exactly as
    // cards.json is; the real key and id are set afterwards.
    json card{{"id", core::cardIdForKey("")},
              {"key", ""},
              {"op", kernel.op},
              {"overload", kernel.overload},
              {"schema", ""},
              {"call_count", 0},
              {"call_positions", json::array()},
              {"vendor_backed", false},
              {"samples_note", ""},
              {"eager_note", ""},
              {"time_share", 0.0},
              {"args", kernel.args},
              {"outputs", outputs},
              {"samples", json::array()},
              {"eager", nullptr}};
    if (!kernel.region.is_null())
        card["region"] = kernel.region; // checked against the card by the reader of cards.json
    auto parsed = core::cardFromJson(card, "kernel " + kernel.id + " card");
    if (!parsed)
        return parsed.error();
    parsed->key = core::variantKey(parsed->op, parsed->overload, parsed->args);
    parsed->id = kernel.cardId;
    return parsed;
}

core::Result<std::unique_ptr<PackagedKernel>> PackagedKernel::load(const core::CastKernel& kernel,
                                                                   const std::string& arch, int device)
{
    std::unique_ptr<PackagedKernel> loaded(new PackagedKernel());
    loaded->m_id = kernel.id;
    loaded->m_guard = kernel.guard;
    loaded->m_device = device;
    auto card = manifestCard(kernel);
    if (!card)
        return card.error();
    loaded->m_card = std::move(card.value());
    auto plan = core::parseLaunchPlan(kernel.launchPlan, loaded->m_card);
    if (!plan)
        return plan.error();
    if (auto valid = core::validateLaunchPlan(plan.value(), loaded->m_card); !valid)
        return valid.error();
    loaded->m_plan = std::move(plan.value());
    if (loaded->m_card.op.ends_with("_") && loaded->m_card.findArg("self"))
        loaded->m_writtenArg = "self";
    for (const core::TensorGuard& g : loaded->m_guard.tensors) {
        c10::ScalarType type;
        if (!core::torchinterop::scalarTypeFromName(g.dtype, type))
            return makeError(ErrorCode::Unsupported, "guard dtype " + g.dtype + " of " + g.arg, "kernel " + kernel.id);
        loaded->m_guardTypes.push_back(type);
        const core::ArgSpec* arg = loaded->m_card.findArg(g.arg);
        loaded->m_hostNumbers.push_back(arg && loaded->m_card.isHostNumberArg(*arg));
    }
    if (loaded->m_card.isRegion())
        loaded->m_regionDtypes = floatingDtypesOf(*loaded->m_card.region);
    // Host numbers stand in for 0-dim device operands of single ops only: a chain's later members
    // would see the value at another precision than eager's.
    if (loaded->m_card.outputs.size() == 1 && !loaded->m_card.isRegion()) {
        std::vector<std::pair<std::string, bool>> guardDtypes;
        for (const core::TensorGuard& g : loaded->m_guard.tensors)
            guardDtypes.emplace_back(g.dtype, g.sizes.empty());
        loaded->m_hostScalarOutput = core::hostNumberOutputDtype(guardDtypes, loaded->m_card.outputs[0].dtype);
    }
    // The kernel serves one device, whose capability cannot change: checked once, here.
    const cudaDeviceProp* props = at::cuda::getDeviceProperties(device);
    core::CallSpec capability;
    capability.capabilityMajor = props->major;
    capability.capabilityMinor = props->minor;
    core::KernelGuard capabilityOnly = loaded->m_guard;
    capabilityOnly.tensors.clear();
    if (auto matched = core::matchGuard(capabilityOnly, capability); !matched.matched())
        loaded->m_capabilityMismatch = matched.reason;

    std::vector<std::uint8_t> image;
    if (auto cubin = kernel.cubins.find(arch); cubin != kernel.cubins.end()) {
        image.assign(cubin->second.begin(), cubin->second.end());
    } else if (kernel.ptx) {
        image.assign(kernel.ptx->begin(), kernel.ptx->end()); // the driver JIT-compiles PTX text
        image.push_back(0);
    } else {
        return makeError(ErrorCode::Unsupported, "no cubin for " + arch + " and no PTX", "kernel " + kernel.id);
    }
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
    cudaFree(nullptr); // the primary context current for the driver API
    auto module = core::CubinModule::load(image, loaded->m_plan);
    if (!module)
        return makeError(module.error().code, module.error().message, "kernel " + kernel.id);
    loaded->m_module = std::make_unique<core::CubinModule>(std::move(module.value()));
    return loaded;
}

bool PackagedKernel::valueMatches(const core::ArgSpec& expected, const c10::IValue& actual, std::int64_t rank) const
{
    if (expected.kind == ArgKind::None)
        return actual.isNone();
    if (expected.kind != ArgKind::Value)
        return false;
    const json& v = expected.value;
    auto wrap = [rank](std::int64_t d) { return d < 0 ? d + rank : d; };
    if (v.is_boolean())
        return actual.isBool() && actual.toBool() == v.get<bool>();
    if (v.is_number_integer() && expected.name == "dim" && actual.isInt())
        return wrap(actual.toInt()) == wrap(v.get<std::int64_t>());
    if (v.is_number_integer() && actual.isInt())
        return actual.toInt() == v.get<std::int64_t>();
    if (v.is_number()) {
        if (actual.isScalar())
            return actual.toScalar().toDouble() == v.get<double>();
        if (actual.isDouble())
            return actual.toDouble() == v.get<double>();
        if (actual.isInt())
            return static_cast<double>(actual.toInt()) == v.get<double>();
        return false;
    }
    if (v.is_string())
        return actual.isString() && actual.toStringRef() == v.get_ref<const std::string&>();
    if (v.is_array()) {
        if (!actual.isIntList())
            return false;
        const c10::List<std::int64_t> list = actual.toIntList(); // shares the list: no copy
        if (list.size() != v.size())
            return false;
        for (size_t i = 0; i < list.size(); ++i) {
            if (!v[i].is_number_integer())
                return false;
            const std::int64_t e = v[i].get<std::int64_t>();
            if (expected.name == "dim" ? wrap(list.get(i)) != wrap(e) : list.get(i) != e)
                return false;
        }
        return true;
    }
    return false;
}

const core::ArgSpec* PackagedKernel::findArg(const char* name) const
{
    for (const core::ArgSpec& arg : m_card.args)
        if (arg.name == name)
            return &arg;
    return nullptr;
}

bool PackagedKernel::valuesMatch(const HookCall& call, std::int64_t rank, std::string* why) const
{
    // The non-tensor arguments the kernel baked in (dim, eps, alpha, approximate, keepdim, ...).
    for (const auto& [name, value] : call.values) {
        const core::ArgSpec* expected = findArg(name);
        if (!expected) {
            // An argument of the hooked operator the card's operator does not have: only its
            // neutral value is what the card computed (_softmax's half_to_float false).
            if (value.isBool() && !value.toBool())
                continue;
            if (why)
                *why = std::string(name) + ": not what the kernel computes";
            return false;
        }
        if (expected->kind == ArgKind::Tensor || expected->kind == ArgKind::TensorList)
            continue;
        if (!valueMatches(*expected, value, rank)) {
            if (why)
                *why = std::string(name) + ": differs from the packaged call";
            return false;
        }
    }
    return true;
}

namespace {

// A hook's argument name as the launch plan writes it: a list element "tensors[1]" (the guard's
// name) is "tensors.1" there.
std::string planName(const char* name)
{
    std::string plan(name);
    if (const auto open = plan.find('['); open != std::string::npos && plan.back() == ']')
        plan = plan.substr(0, open) + "." + plan.substr(open + 1, plan.size() - open - 2);
    return plan;
}

} // namespace

bool PackagedKernel::servesHostScalar(std::size_t i, const at::Tensor& t) const
{
    if (!m_guard.tensors[i].sizes.empty() || !isHostScalarOf(t, m_guardTypes[i]))
        return false;
    // A region's input is a value of the graph (a traced constant that stayed on the host): a 0-dim
    // CPU tensor of the proven dtype computes in every member op as its device copy does. A wrapped
    // Python number does not (it promotes as a number), so it runs the chain.
    // Eager rounds a 0-dim device operand to each member's compute dtype but reads a host one
    // unrounded, so the value must survive rounding to every 16-bit dtype the chain computes in.
    if (m_card.isRegion()) {
        if (t.unsafeGetTensorImpl()->is_wrapped_number())
            return false;
        return std::all_of(m_regionDtypes.begin(), m_regionDtypes.end(),
                           [&](const std::string& dtype) { return hostScalarComputesAlike(t, dtype); });
    }
    return !m_hostScalarOutput.empty() && hostScalarComputesAlike(t, m_hostScalarOutput);
}

std::string PackagedKernel::hostNumberProblem(std::size_t i, const at::Tensor& t) const
{
    const core::TensorGuard& g = m_guard.tensors[i];
    if (!t.is_cpu() || t.dim() != 0)
        return g.arg + ": the kernel was proven with a number on the host here, and this is a tensor on " +
            t.device().str() + " of " + std::to_string(t.dim()) + " dims";
    if (t.scalar_type() != m_guardTypes[i])
        return g.arg + ": a " + std::string(c10::toString(t.scalar_type())) +
            " number where the kernel was proven on " + g.dtype;
    // The plan passes the value as a double: exact for every integer up to 2^53.
    if (c10::isIntegralType(t.scalar_type(), /*includeBool=*/false) &&
        std::abs(static_cast<double>(t.item<std::int64_t>())) > 9007199254740992.0)
        return g.arg + ": an integer beyond 2^53, which the kernel would read rounded";
    return {};
}

bool PackagedKernel::matches(const HookCall& call) const
{
    if (!m_capabilityMismatch.empty() || call.tensors.size() != m_guard.tensors.size())
        return false; // a tensor missing, or one where the card had none
    std::int64_t rank = 0;
    for (std::size_t i = 0; i < m_guard.tensors.size(); ++i) {
        const core::TensorGuard& g = m_guard.tensors[i];
        const at::Tensor* t = nullptr;
        for (const auto& [name, tensor] : call.tensors)
            if (g.arg == name)
                t = tensor;
        if (!t || !t->defined())
            return false;
        if (m_hostNumbers[i]) {
            if (!hostNumberProblem(i, *t).empty())
                return false;
            continue;
        }
        if (servesHostScalar(i, *t))
            continue; // served from its device copy (HostScalars.h)
        if (!t->is_cuda() || t->get_device() != m_device || t->scalar_type() != m_guardTypes[i] ||
            t->sizes() != c10::IntArrayRef(g.sizes) || t->strides() != c10::IntArrayRef(g.strides) ||
            reinterpret_cast<std::uintptr_t>(t->data_ptr()) % static_cast<std::uintptr_t>(g.alignmentBytes) != 0)
            return false;
        if (g.arg == "self" || g.arg == "input" || g.arg == "tensors[0]")
            rank = t->dim();
    }
    return valuesMatch(call, rank, nullptr);
}

std::string PackagedKernel::mismatch(const HookCall& call) const
{
    if (!m_capabilityMismatch.empty())
        return m_capabilityMismatch;
    // A tensor where the card had none (an optional weight the kernel was proven without).
    for (const auto& [name, tensor] : call.tensors) {
        bool guarded = false;
        for (const core::TensorGuard& g : m_guard.tensors)
            guarded = guarded || g.arg == name;
        if (!guarded)
            return std::string(name) + ": a tensor where the kernel was proven without one";
    }
    // Every tensor on this kernel's device, then the guard (dtype, sizes, strides, alignment).
    core::CallSpec spec;
    std::int64_t rank = 0;
    for (std::size_t i = 0; i < m_guard.tensors.size(); ++i) {
        const core::TensorGuard& g = m_guard.tensors[i];
        const at::Tensor* t = nullptr;
        for (const auto& [name, tensor] : call.tensors)
            if (name == g.arg)
                t = tensor;
        if (!t || !t->defined())
            return g.arg + ": missing";
        if (m_hostNumbers[i]) {
            if (std::string problem = hostNumberProblem(i, *t); !problem.empty())
                return problem;
            core::CallTensor c; // the guard's own 0-dim spec: the number is not in device memory
            c.dtype = g.dtype;
            spec.tensors.push_back(std::move(c));
            continue;
        }
        const bool hostScalar = g.sizes.empty() && t->is_cpu() && t->dim() == 0;
        if (hostScalar && t->scalar_type() == m_guardTypes[i] && !servesHostScalar(i, *t))
            return g.arg + ": a host number where the kernel was proven on a 0-dim device tensor, and eager " +
                (m_hostScalarOutput.empty() || m_card.isRegion() ? std::string("promotes the two differently here")
                                                                 : "rounds this value differently (" +
                         std::to_string(t->item<double>()) + " in " + m_hostScalarOutput + ")");
        if (!hostScalar && (!t->is_cuda() || t->get_device() != m_device))
            return g.arg + ": not on cuda:" + std::to_string(m_device);
        if (g.arg == "self" || g.arg == "input" || g.arg == "tensors[0]")
            rank = t->dim();
        core::CallTensor c;
        c.dtype = core::torchinterop::dtypeName(t->scalar_type()); // as cards name it
        c.sizes = t->sizes().vec();
        c.strides = t->strides().vec();
        c.dataPtr = hostScalar ? 0 : reinterpret_cast<std::uintptr_t>(t->data_ptr()); // a copy is aligned
        spec.tensors.push_back(std::move(c));
    }
    spec.capabilityMajor = m_guard.capabilityMajor; // checked at load
    spec.capabilityMinor = m_guard.capabilityMinor;
    if (auto matched = core::matchGuard(m_guard, spec); !matched.matched())
        return matched.reason;
    std::string why;
    valuesMatch(call, rank, &why);
    return why;
}

core::Result<std::vector<at::Tensor>> PackagedKernel::launch(const HookCall& call) const
{
    core::LaunchBindings bindings;
    const auto isHostNumber = [this](const char* name) {
        for (std::size_t i = 0; i < m_guard.tensors.size(); ++i)
            if (m_guard.tensors[i].arg == name)
                return static_cast<bool>(m_hostNumbers[i]);
        return false;
    };
    for (const auto& [name, tensor] : call.tensors) {
        if (isHostNumber(name)) { // its value, read on the host as eager reads it
            bindings.cardValues[planName(name)] = tensor->item<double>();
            continue;
        }
        const at::Tensor* onDevice = tensor;
        if (tensor->is_cpu()) { // a host scalar matches() let through
            onDevice = deviceCopyOfHostScalar(*tensor, m_device);
            if (!onDevice)
                return makeError(ErrorCode::Unsupported,
                                 std::string(name) +
                                     ": a host scalar with no device copy (graph capture, or too many values)",
                                 "kernel " + m_id);
        }
        bindings.tensorArgs[planName(name)] = reinterpret_cast<CUdeviceptr>(onDevice->data_ptr());
    }
    for (const core::ArgSpec& arg : m_card.args)
        if (arg.kind == ArgKind::Value && (arg.value.is_number() || arg.value.is_boolean()))
            bindings.cardValues[arg.name] =
                arg.value.is_boolean() ? (arg.value.get<bool>() ? 1.0 : 0.0) : arg.value.get<double>();
    std::vector<at::Tensor> outputs;
    for (size_t i = 0; i < m_plan.outputs.size(); ++i) {
        const core::TensorSpec& spec = m_plan.outputs[i];
        if (i == 0 && !m_writtenArg.empty()) {
            for (const auto& [name, tensor] : call.tensors)
                if (name == m_writtenArg)
                    outputs.push_back(*tensor);
            if (outputs.empty())
                return makeError(ErrorCode::Internal, "in-place argument missing", "kernel " + m_id);
            continue;
        }
        c10::ScalarType dtype;
        if (!core::torchinterop::scalarTypeFromName(spec.dtype, dtype))
            return makeError(ErrorCode::Unsupported, "output dtype " + spec.dtype, "kernel " + m_id);
        outputs.push_back(
            at::empty_strided(spec.sizes, spec.strides, at::TensorOptions().dtype(dtype).device(at::kCUDA, m_device)));
    }
    for (const at::Tensor& out : outputs)
        bindings.outputs.push_back(reinterpret_cast<CUdeviceptr>(out.data_ptr()));
    std::vector<at::Tensor> scratch;
    for (const core::ScratchBuffer& s : m_plan.scratch) {
        at::Tensor buffer = at::empty({s.bytes}, at::TensorOptions().dtype(at::kByte).device(at::kCUDA, m_device));
        if (s.zeroed)
            buffer.zero_();
        bindings.scratch[s.name] = reinterpret_cast<CUdeviceptr>(buffer.data_ptr());
        scratch.push_back(buffer); // freed after the launch is enqueued: the caching allocator
                                   // reuses it only for work ordered after it on this stream
    }
    const auto stream = reinterpret_cast<CUstream>(at::cuda::getCurrentCUDAStream(m_device).stream());
    if (auto launched = m_module->launch(m_plan, bindings, stream); !launched)
        return launched.error();
    return outputs;
}

} // namespace kforge::runtime
