#include "capture/SampleIO.h"

#include "capture/TorchInterop.h"
#include "util/AtomicFile.h"

#include <torch/serialize.h>

namespace kforge::core {
namespace {

c10::impl::GenericList toList(const std::vector<c10::IValue>& values)
{
    c10::impl::GenericList list(c10::AnyType::get());
    for (const c10::IValue& value : values)
        list.push_back(value);
    return list;
}

} // namespace

Result<void> saveSampleFile(const std::filesystem::path& path, const SampleTensors& sample)
{
    std::vector<char> bytes;
    try {
        c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
        dict.insert("inputs", toList(sample.inputs));
        dict.insert("outputs", toList(sample.outputs));
        bytes = torch::pickle_save(dict);
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
        if (!value.isGenericDict())
            return makeError(ErrorCode::InvalidArgument, "not a sample file (expected a dict)", path.string());
        const auto dict = value.toGenericDict();
        SampleTensors sample;
        for (const char* field : {"inputs", "outputs"}) {
            auto entry = dict.find(field);
            if (entry == dict.end() || !entry->value().isList())
                return makeError(ErrorCode::InvalidArgument, std::string("sample has no '") + field + "' list",
                                 path.string());
            auto& target = std::string_view(field) == "inputs" ? sample.inputs : sample.outputs;
            target = entry->value().toListRef().vec();
        }
        return sample;
    } catch (const std::exception& e) {
        return makeError(ErrorCode::InvalidArgument, "damaged sample file: " + torchinterop::oneLineError(e),
                         path.string());
    }
}

} // namespace kforge::core
