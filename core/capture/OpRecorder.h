#pragma once
// Records the top-level ATen operator calls of a model run through a thread-local RecordFunction
// callback, groups them into runtime variants (future operator cards) and keeps, per variant, the
// inputs of its first call on the capture device (for eager timing) and host copies of the inputs
// and outputs of up to N calls (the samples saved in the project). It also records the dataflow of
// the run (model/CallGraph.h): per call its variant and the value ids of its tensor inputs and
// outputs, a value being one tensor object's contents between writes.
//
// Internal to core (includes LibTorch). Thread: construct, start(), run the model and stop() on one
// thread; only ops on that thread are recorded. Nested calls (ops inside ops) are not recorded.

#include "model/CallGraph.h"
#include "model/OperatorCard.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/intrusive_ptr.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kforge::core {

/// What to copy to the host at one call: (argument, tensor element) inputs, before the call runs,
/// and tensor outputs by index (lists flattened), after it.
struct CallProbe {
    std::vector<std::pair<int, int>> inputs;
    std::vector<int> outputs;
};

/// The host copies a probe took, exact layouts.
struct ProbedValues {
    std::map<std::pair<int, int>, at::Tensor> inputs;
    std::map<int, at::Tensor> outputs;
};

struct RecorderOptions {
    c10::Device device = c10::Device(c10::kCPU);        // where timing inputs are kept
    int samplesPerCard = 2;                             // host samples kept per variant
    std::int64_t sampleBudgetBytes = 1ll << 30;         // total payload of all samples
    bool sampleVendorBacked = false;                    // vendor-backed variants are not searched by default
    bool keepTimingInputs = true;                       // keep each variant's first inputs on `device`
    std::unordered_map<std::int64_t, CallProbe> probes; // by call position
};

struct CapturedSample {
    std::int64_t callPosition = 0;
    std::vector<c10::IValue> inputs;  // host copies, exact layouts
    std::vector<c10::IValue> outputs; // host copies of the eager outputs
    std::int64_t bytes = 0;
};

struct RecordedVariant {
    OperatorCard card;                     // op, schema, args, key, id, positions, vendor flag, outputs
    std::vector<c10::IValue> timingInputs; // first call's inputs on the capture device
    std::vector<CapturedSample> samples;
    bool budgetExhausted = false;    // a sample was skipped for the memory budget
    std::int64_t unsampledBytes = 0; // inputs + outputs of the first call skipped for the budget
    // An output shares storage with an input of a call that writes no argument (a view, or the
    // input itself, like eval-mode dropout): no work a kernel could do, so no sample is kept.
    bool outputAliasesInput = false;
};

class OpRecorder {
public:
    explicit OpRecorder(RecorderOptions options);
    ~OpRecorder();
    OpRecorder(const OpRecorder&) = delete;
    OpRecorder& operator=(const OpRecorder&) = delete;

    /// Starts recording on the calling thread. Call positions restart at 0.
    void start();
    /// Stops recording (also done by the destructor).
    void stop();

    std::vector<RecordedVariant>& variants() { return m_variants; }
    std::int64_t totalCalls() const { return m_totalCalls; }
    std::int64_t ignoredCalls() const { return m_ignoredCalls; }
    std::int64_t sampleBytes() const { return m_sampleBytes; }
    /// The recorded dataflow; a call's card is its variant's index in variants().
    CallGraph& graph() { return m_graph; }
    /// Marks the tensors in `result` (the forward's return value: a tensor, or tuples, lists and
    /// dicts of them) as the graph's model outputs. Call after stop(), before the tensors are freed.
    void markModelOutputs(const c10::IValue& result);
    /// What the probes copied, by call position.
    const std::unordered_map<std::int64_t, ProbedValues>& probed() const { return m_probed; }
    /// The first error raised inside the callback (the model run itself is not interrupted).
    const std::optional<std::string>& callbackError() const { return m_callbackError; }

private:
    struct SchemaInfo {
        std::string schemaText;
        std::vector<std::pair<std::string, std::string>> arguments; // name, type
        size_t returns = 0;
        bool mutates = false; // an argument is written (in-place or out=): its output aliases it
        bool known = false;   // false: no schema, inputs and outputs are taken as given
    };
    struct CallContext;
    // A tensor object seen by the graph. The weak reference keeps the TensorImpl's memory (not its
    // storage) alive, so its address cannot be reused by a new tensor while the entry exists.
    struct ValueEntry {
        c10::weak_intrusive_ptr<c10::TensorImpl> impl;
        std::int32_t id = -1;
    };
    enum ValueFlag : std::uint8_t { kViewed = 1, kAliasProduced = 2 };

    static std::unique_ptr<at::ObserverContext> onStart(const at::RecordFunction& fn);
    static void onEnd(const at::RecordFunction& fn, at::ObserverContext* context);
    std::unique_ptr<CallContext> beginCall(const at::RecordFunction& fn);
    void endCall(const at::RecordFunction& fn, CallContext& context);
    const SchemaInfo& schemaFor(const at::RecordFunction& fn, const std::string& qualified);
    std::int32_t newValue(std::int32_t producer);
    std::int32_t inputValue(const at::Tensor& tensor); // its current value; unseen: a new external one
    void bindValue(const at::Tensor& tensor, std::int32_t id);
    void recordCallOutputs(CallContext& call, c10::ArrayRef<c10::IValue> outputs);
    void collectOutputValues(const c10::IValue& value, int depth);

    RecorderOptions m_options;
    std::optional<at::CallbackHandle> m_handle;
    std::vector<RecordedVariant> m_variants;
    std::unordered_map<std::string, size_t> m_variantByKey;
    std::unordered_map<std::string, SchemaInfo> m_schemas;
    std::int64_t m_totalCalls = 0;
    std::int64_t m_ignoredCalls = 0;
    std::int64_t m_sampleBytes = 0;
    std::optional<std::string> m_callbackError;
    CallGraph m_graph;
    std::unordered_map<const c10::TensorImpl*, ValueEntry> m_values;
    std::vector<std::uint8_t> m_valueFlags; // ValueFlag bits per value id
    std::unordered_map<std::int64_t, ProbedValues> m_probed;
};

} // namespace kforge::core
