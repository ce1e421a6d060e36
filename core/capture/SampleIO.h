#pragma once
// Sample files: one captured call's inputs and eager outputs, written with LibTorch's pickler in
// the torch.save format, so Python reads them with `inputs, outputs = torch.load(path)` (two tuples; weights_only
// loading works for tensors, numbers, None and strings). Internal to core (includes LibTorch).

#include "util/Result.h"

#include <ATen/core/ivalue.h>

#include <filesystem>
#include <vector>

namespace kforge::core {

struct SampleTensors {
    std::vector<c10::IValue> inputs;
    std::vector<c10::IValue> outputs;
};

/// Writes the sample atomically (temp file + rename).
Result<void> saveSampleFile(const std::filesystem::path& path, const SampleTensors& sample);

/// Reads a sample written by saveSampleFile (or by Python's torch.save of the same dict).
Result<SampleTensors> loadSampleFile(const std::filesystem::path& path);

} // namespace kforge::core
