#include "capture/OpRecorder.h"

#include "capture/TorchInterop.h"

#include <ATen/core/function_schema.h>

#include <c10/util/Exception.h>

#include <algorithm>
#include <limits>
#include <sstream>

namespace kforge::core {
namespace {

// The recorder active on this thread and the op nesting depth (0 = the next op is top-level).
thread_local OpRecorder* t_activeRecorder = nullptr;
thread_local int t_depth = 0;

void collectStorages(const c10::IValue& value, std::vector<const c10::StorageImpl*>& storages)
{
    if (value.isTensor()) {
        const at::Tensor& tensor = value.toTensor();
        if (tensor.defined() && tensor.has_storage())
            storages.push_back(tensor.storage().unsafeGetStorageImpl());
    } else if (value.isTensorList()) {
        for (const at::Tensor& tensor : value.toTensorVector())
            if (tensor.defined() && tensor.has_storage())
                storages.push_back(tensor.storage().unsafeGetStorageImpl());
    }
}

bool sharesStorage(c10::ArrayRef<c10::IValue> outputs, const std::vector<const c10::StorageImpl*>& inputStorages)
{
    std::vector<const c10::StorageImpl*> outputStorages;
    for (const c10::IValue& output : outputs)
        collectStorages(output, outputStorages);
    return std::any_of(outputStorages.begin(), outputStorages.end(), [&](const c10::StorageImpl* storage) {
        return std::find(inputStorages.begin(), inputStorages.end(), storage) != inputStorages.end();
    });
}

} // namespace

struct OpRecorder::CallContext : at::ObserverContext {
    bool topLevel = false;
    RecordedVariant* variant = nullptr;
    CapturedSample* sample = nullptr;                   // non-null: keep this call's outputs
    std::vector<const c10::StorageImpl*> inputStorages; // to spot aliasing outputs
    bool mutates = false;
    std::int32_t graphCall = -1; // index in the graph
    // The input tensor objects and the values they held when the call began (to spot in-place).
    std::vector<std::pair<const c10::TensorImpl*, std::int32_t>> inputValues;
    bool skippedForBudget = false; // the variant's first call without room in the budget: size its outputs
    bool wantOutputSpecs = false;
    std::optional<size_t> returns; // the schema's number of results, when known
    const CallProbe* probe = nullptr;
    std::int64_t position = 0;
};

OpRecorder::OpRecorder(RecorderOptions options) : m_options(std::move(options))
{
}

OpRecorder::~OpRecorder()
{
    stop();
}

void OpRecorder::start()
{
    stop();
    m_totalCalls = 0;
    t_activeRecorder = this;
    t_depth = 0;
    m_handle = at::addThreadLocalCallback(at::RecordFunctionCallback(&OpRecorder::onStart, &OpRecorder::onEnd)
                                              .needsInputs(true)
                                              .needsOutputs(true)
                                              .scopes({at::RecordScope::FUNCTION}));
}

void OpRecorder::stop()
{
    if (m_handle) {
        at::removeCallback(*m_handle);
        m_handle.reset();
    }
    if (t_activeRecorder == this)
        t_activeRecorder = nullptr;
}

std::unique_ptr<at::ObserverContext> OpRecorder::onStart(const at::RecordFunction& fn)
{
    OpRecorder* recorder = t_activeRecorder;
    const bool topLevel = t_depth == 0;
    ++t_depth;
    if (!recorder || !topLevel)
        return nullptr;
    try {
        return recorder->beginCall(fn);
    } catch (const std::exception& e) {
        if (!recorder->m_callbackError)
            recorder->m_callbackError = torchinterop::oneLineError(e);
    }
    return nullptr;
}

void OpRecorder::onEnd(const at::RecordFunction& fn, at::ObserverContext* context)
{
    --t_depth;
    OpRecorder* recorder = t_activeRecorder;
    auto* call = static_cast<CallContext*>(context);
    if (!recorder || !call || !call->topLevel)
        return;
    try {
        // Clones made here run nested ops; they must count as nested, not top-level.
        ++t_depth;
        recorder->endCall(fn, *call);
        --t_depth;
    } catch (const std::exception& e) {
        --t_depth;
        if (!recorder->m_callbackError)
            recorder->m_callbackError = torchinterop::oneLineError(e);
    }
}

const OpRecorder::SchemaInfo& OpRecorder::schemaFor(const at::RecordFunction& fn, const std::string& qualified)
{
    auto found = m_schemas.find(qualified);
    if (found != m_schemas.end())
        return found->second;
    SchemaInfo info;
    if (auto schema = fn.operator_schema()) {
        std::ostringstream text;
        text << *schema;
        info.schemaText = text.str();
        for (const c10::Argument& argument : schema->arguments())
            info.arguments.emplace_back(argument.name(), argument.type()->str());
        info.returns = schema->returns().size();
        info.mutates = schema->is_mutable();
        info.known = true;
    }
    return m_schemas.emplace(qualified, std::move(info)).first->second;
}

std::unique_ptr<OpRecorder::CallContext> OpRecorder::beginCall(const at::RecordFunction& fn)
{
    auto operatorName = fn.operator_name();
    if (!operatorName || !std::string_view(operatorName->name).starts_with("aten::")) {
        ++m_ignoredCalls;
        return nullptr;
    }
    const std::int64_t position = m_totalCalls++;
    const std::string qualified = operatorName->overload_name.empty()
        ? operatorName->name
        : operatorName->name + "." + operatorName->overload_name;
    const SchemaInfo& schema = schemaFor(fn, qualified);

    // A boxed call (the TorchScript interpreter's) hands the whole interpreter stack to the
    // callback: the operator's own arguments are its last schema.arguments.size() entries.
    auto inputs = fn.inputs();
    if (schema.known && inputs.size() > schema.arguments.size())
        inputs = inputs.slice(inputs.size() - schema.arguments.size());
    std::vector<ArgSpec> args;
    args.reserve(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
        std::string name = i < schema.arguments.size() ? schema.arguments[i].first : "arg" + std::to_string(i);
        std::string type = i < schema.arguments.size() ? schema.arguments[i].second : std::string("Any");
        args.push_back(torchinterop::argSpecOf(inputs[i], std::move(name), std::move(type)));
    }
    std::string key = variantKey(operatorName->name, operatorName->overload_name, args);

    auto call = std::make_unique<CallContext>();
    call->topLevel = true;
    call->returns = schema.known ? std::optional<size_t>(schema.returns) : std::nullopt;
    auto [slot, inserted] = m_variantByKey.try_emplace(key, m_variants.size());
    if (inserted) {
        RecordedVariant variant;
        OperatorCard& card = variant.card;
        card.id = cardIdForKey(key);
        card.key = std::move(key);
        card.op = operatorName->name;
        card.overload = operatorName->overload_name;
        card.schema = schema.schemaText;
        card.args = std::move(args);
        card.vendorBacked = isVendorBackedOp(card.op);
        // Inputs are copied before the op runs, so in-place ops keep their pre-call values.
        if (m_options.keepTimingInputs)
            for (const c10::IValue& input : inputs)
                variant.timingInputs.push_back(torchinterop::cloneValue(input, m_options.device));
        m_variants.push_back(std::move(variant));
        call->wantOutputSpecs = true;
    }
    RecordedVariant& variant = m_variants[slot->second];
    variant.card.callCount += 1;
    variant.card.callPositions.push_back(position);
    call->variant = &variant;
    call->mutates = schema.mutates;
    for (const c10::IValue& input : inputs)
        collectStorages(input, call->inputStorages);

    // The dataflow: one value id per tensor the card's argument specs list.
    GraphCall graphCall;
    graphCall.card = static_cast<std::int32_t>(slot->second);
    graphCall.inputs.resize(inputs.size());
    for (size_t i = 0; i < inputs.size() && i < variant.card.args.size(); ++i) {
        const ArgSpec& arg = variant.card.args[i];
        std::vector<std::int32_t>& ids = graphCall.inputs[i];
        const auto add = [&](const at::Tensor& tensor) {
            ids.push_back(inputValue(tensor));
            call->inputValues.emplace_back(tensor.unsafeGetTensorImpl(), ids.back());
        };
        if (arg.kind == ArgKind::Tensor) {
            add(inputs[i].toTensor());
        } else if (arg.kind == ArgKind::TensorList) {
            for (const c10::IValue& element : inputs[i].toListRef())
                if (element.isTensor() && element.toTensor().defined())
                    add(element.toTensor());
        }
    }
    call->graphCall = static_cast<std::int32_t>(m_graph.calls.size());
    m_graph.calls.push_back(std::move(graphCall));

    call->position = position;
    if (auto probe = m_options.probes.find(position); probe != m_options.probes.end()) {
        call->probe = &probe->second;
        ProbedValues& probed = m_probed[position];
        for (const auto& [a, e] : probe->second.inputs) {
            if (a < 0 || static_cast<size_t>(a) >= inputs.size())
                continue;
            const c10::IValue& input = inputs[static_cast<size_t>(a)];
            if (input.isTensor() && e == 0)
                probed.inputs[{a, e}] = torchinterop::cloneExact(input.toTensor(), c10::Device(c10::kCPU));
            else if (input.isList() && e >= 0 && static_cast<size_t>(e) < input.toListRef().size() &&
                     input.toListRef()[static_cast<size_t>(e)].isTensor())
                probed.inputs[{a, e}] = torchinterop::cloneExact(input.toListRef()[static_cast<size_t>(e)].toTensor(),
                                                                 c10::Device(c10::kCPU));
        }
    }

    const bool wantsSample = static_cast<int>(variant.samples.size()) < m_options.samplesPerCard &&
        (m_options.sampleVendorBacked || !variant.card.vendorBacked) && !variant.outputAliasesInput;
    if (wantsSample) {
        std::int64_t inputBytes = 0;
        for (const c10::IValue& input : inputs)
            inputBytes += torchinterop::payloadBytes(input);
        if (m_sampleBytes + inputBytes > m_options.sampleBudgetBytes) {
            if (!variant.budgetExhausted && variant.samples.empty()) {
                variant.unsampledBytes = inputBytes;
                call->skippedForBudget = true;
            }
            variant.budgetExhausted = true;
        } else {
            CapturedSample sample;
            sample.callPosition = position;
            for (const c10::IValue& input : inputs)
                sample.inputs.push_back(torchinterop::cloneValue(input, c10::Device(c10::kCPU)));
            sample.bytes = inputBytes;
            m_sampleBytes += inputBytes;
            variant.samples.push_back(std::move(sample));
            call->sample = &variant.samples.back();
        }
    }
    return call;
}

void OpRecorder::endCall(const at::RecordFunction& fn, CallContext& call)
{
    // Like the inputs, a boxed call reports the whole stack: the results are its last entries.
    c10::ArrayRef<c10::IValue> outputs = fn.outputs();
    if (call.returns && outputs.size() > *call.returns)
        outputs = outputs.slice(outputs.size() - *call.returns);
    if (call.wantOutputSpecs) {
        for (const c10::IValue& output : outputs) {
            if (output.isTensor() && output.toTensor().defined())
                call.variant->card.outputs.push_back(torchinterop::tensorSpecOf(output.toTensor()));
            else if (output.isTensorList())
                for (const at::Tensor& t : output.toTensorVector())
                    call.variant->card.outputs.push_back(torchinterop::tensorSpecOf(t));
        }
    }
    recordCallOutputs(call, outputs);
    if (call.probe) {
        std::vector<at::Tensor> tensors;
        for (const c10::IValue& output : outputs) {
            if (output.isTensor())
                tensors.push_back(output.toTensor());
            else if (output.isTensorList())
                for (const at::Tensor& t : output.toTensorVector())
                    tensors.push_back(t);
        }
        ProbedValues& probed = m_probed[call.position];
        for (int o : call.probe->outputs)
            if (o >= 0 && static_cast<size_t>(o) < tensors.size())
                probed.outputs[o] = torchinterop::cloneExact(tensors[static_cast<size_t>(o)], c10::Device(c10::kCPU));
    }
    if (call.skippedForBudget) {
        for (const c10::IValue& output : outputs)
            call.variant->unsampledBytes += torchinterop::payloadBytes(output);
    }
    if (call.sample && !call.mutates && sharesStorage(outputs, call.inputStorages)) {
        // Nothing computed: give the sample's bytes back to the budget and sample no later call.
        m_sampleBytes -= call.sample->bytes;
        call.variant->samples.pop_back();
        call.variant->outputAliasesInput = true;
        return;
    }
    if (call.sample) {
        for (const c10::IValue& output : outputs) {
            const std::int64_t bytes = torchinterop::payloadBytes(output);
            call.sample->outputs.push_back(torchinterop::cloneValue(output, c10::Device(c10::kCPU)));
            call.sample->bytes += bytes;
            m_sampleBytes += bytes;
        }
    }
}

std::int32_t OpRecorder::newValue(std::int32_t producer)
{
    if (m_graph.valueProducers.size() >= static_cast<size_t>(std::numeric_limits<std::int32_t>::max()))
        throw std::length_error("more tensor values than the call graph can number");
    m_graph.valueProducers.push_back(producer);
    m_valueFlags.push_back(0);
    return static_cast<std::int32_t>(m_graph.valueProducers.size() - 1);
}

std::int32_t OpRecorder::inputValue(const at::Tensor& tensor)
{
    auto found = m_values.find(tensor.unsafeGetTensorImpl());
    if (found != m_values.end() && !found->second.impl.expired())
        return found->second.id;
    const std::int32_t id = newValue(-1);
    bindValue(tensor, id);
    return id;
}

void OpRecorder::bindValue(const at::Tensor& tensor, std::int32_t id)
{
    ValueEntry entry{c10::weak_intrusive_ptr<c10::TensorImpl>(tensor.getIntrusivePtr()), id};
    auto [slot, inserted] = m_values.try_emplace(tensor.unsafeGetTensorImpl(), entry);
    if (!inserted)
        slot->second = std::move(entry);
}

void OpRecorder::recordCallOutputs(CallContext& call, c10::ArrayRef<c10::IValue> outputs)
{
    if (call.graphCall < 0)
        return;
    GraphCall& graphCall = m_graph.calls[static_cast<size_t>(call.graphCall)];
    const std::int32_t self = call.graphCall;
    bool inPlaceOnShared = false;
    const auto addOutput = [&](const at::Tensor& tensor) {
        const std::int32_t id = newValue(self);
        graphCall.outputs.push_back(id);
        if (!tensor.defined())
            return;
        // Writing in place into a value that other names may see (a view of it, a view itself, or
        // an external value such as a parameter) changes more than this call's output.
        for (const auto& [impl, value] : call.inputValues) {
            if (impl == tensor.unsafeGetTensorImpl() && call.mutates) {
                const std::uint8_t flags = m_valueFlags[static_cast<size_t>(value)];
                if (m_graph.valueProducers[static_cast<size_t>(value)] < 0 || (flags & (kViewed | kAliasProduced)))
                    inPlaceOnShared = true;
            }
        }
        bindValue(tensor, id);
    };
    for (const c10::IValue& output : outputs) {
        if (output.isTensor() && output.toTensor().defined())
            addOutput(output.toTensor());
        else if (output.isTensorList())
            for (const at::Tensor& t : output.toTensorVector())
                addOutput(t);
    }
    // A call that writes no argument but returns storage of an input: a view (or the input).
    const bool view = !call.mutates && sharesStorage(outputs, call.inputStorages);
    graphCall.aliasing = view || inPlaceOnShared;
    if (view) {
        for (const auto& [impl, value] : call.inputValues)
            m_valueFlags[static_cast<size_t>(value)] |= kViewed;
        for (std::int32_t id : graphCall.outputs)
            m_valueFlags[static_cast<size_t>(id)] |= kAliasProduced;
    }
}

void OpRecorder::collectOutputValues(const c10::IValue& value, int depth)
{
    if (depth > 64)
        return;
    if (value.isTensor()) {
        if (value.toTensor().defined())
            m_graph.modelOutputs.push_back(inputValue(value.toTensor()));
    } else if (value.isTensorList() || value.isList()) {
        for (const c10::IValue& element : value.toListRef())
            collectOutputValues(element, depth + 1);
    } else if (value.isTuple()) {
        for (const c10::IValue& element : value.toTupleRef().elements())
            collectOutputValues(element, depth + 1);
    } else if (value.isGenericDict()) {
        for (const auto& item : value.toGenericDict())
            collectOutputValues(item.value(), depth + 1);
    }
}

void OpRecorder::markModelOutputs(const c10::IValue& result)
{
    m_graph.modelOutputs.clear();
    collectOutputValues(result, 0);
}

} // namespace kforge::core
