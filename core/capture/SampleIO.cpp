#include "capture/SampleIO.h"

#include "capture/TorchInterop.h"
#include "util/AtomicFile.h"

#include <torch/serialize.h>

namespace kforge::core {
namespace {

// Lists and dicts would be pickled with TorchScript type tags, which Python's torch.load refuses
// under weights_only=True; tuples carry no tags.

} // namespace

Result<void> saveSampleFile(const std::filesystem::path& path, const SampleTensors& sample)
{
    std::vector<char> bytes;
    try {
        bytes = torch::pickle_save(c10::ivalue::Tuple::create(
            {c10::ivalue::Tuple::create(sample.inputs), c10::ivalue::Tuple::create(sample.outputs)}));
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Io, "cannot serialize sample: " + torchinterop::oneLineError(e), path.string());
    }
    return writeFileAtomically(path, std::string_view(bytes.data(), bytes.size()));
}

Result<SampleTensors> loadSampleFile(const std::filesystem::path& path)
{
    auto text = readWholeFile(path);
    if (!text)
        return text.error();
    try {
        const c10::IValue value = torch::pickle_load(std::vector<char>(text->begin(), text->end()));
        if (!value.isTuple() || value.toTupleRef().elements().size() != 2 ||
            !value.toTupleRef().elements()[0].isTuple() || !value.toTupleRef().elements()[1].isTuple())
            return makeError(ErrorCode::InvalidArgument, "not a sample file (expected (inputs, outputs))",
                             path.string());
        SampleTensors sample;
        sample.inputs = value.toTupleRef().elements()[0].toTupleRef().elements().vec();
        sample.outputs = value.toTupleRef().elements()[1].toTupleRef().elements().vec();
        return sample;
    } catch (const std::exception& e) {
        return makeError(ErrorCode::InvalidArgument, "damaged sample file: " + torchinterop::oneLineError(e),
                         path.string());
    }
}

} // namespace kforge::core
