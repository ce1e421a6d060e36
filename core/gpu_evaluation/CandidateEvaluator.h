#pragma once
// The worker's "evaluate" request: validate a compiled candidate against eager PyTorch on the
// card's captured samples and on fresh inputs, then time candidate and eager kernels the same way,
// interleaved, in this process (docs/validation.md). GPU worker only (CUDA build).
//
// Request:  {"project_dir", "card": CARD JSON, "plan": PLAN JSON, "cubin_base64", "options": {...}}
// Reply:    the evaluation report (docs/validation.md), or an Error for a request that cannot be
//           evaluated at all (bad plan, no samples, cubin that does not load).
// A kernel that faults leaves the CUDA context unusable: the evaluator then writes the CUDA error
// to stderr and ends the process (exit code 70), so that the engine records the failure with that
// reason and starts a new worker.

#include "util/Result.h"

#include <nlohmann/json.hpp>

namespace kforge::core {

/// {"gpu": name, "compute_capability": "9.0", "sms": 132, "l2_bytes": ..., "memory_bytes": ...}
/// or an Unsupported error when no CUDA device is usable.
Result<nlohmann::json> describeGpu();

Result<nlohmann::json> evaluateCandidate(const nlohmann::json& request);

} // namespace kforge::core
