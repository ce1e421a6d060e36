#pragma once
// Turns a model's reply text into a candidate (docs/llm-proposer.md, "Reply format"): the ```cuda
// (or ```cpp / ```c++ / ```cu) code block, its embedded /*kforge-plan {...} */ block, parsed and
// validated against the card. Pure function; no I/O.

#include "model/OperatorCard.h"
#include "model/SearchNode.h"
#include "util/Result.h"

#include <string>

namespace kforge::core {

/// The candidate (source = the code block, launchPlan = the embedded plan JSON as written), or
/// InvalidArgument with one line that a repair turn can quote:
///   "reply without a ```cuda block",
///   "the kernel source is N bytes, over the limit of 262144 bytes (256 KiB): ..." (kMaxKernelSourceBytes),
///   "the kernel source is not valid UTF-8 (byte N of the code block): ...",
///   "the ```cuda block has no /*kforge-plan {...} */ block",
///   "plan is not valid JSON: ...", "plan invalid: <parse or validation error>",
///   "plan launches kernel 'k' but the source defines no extern \"C\" kernel of that name".
Result<Candidate> parseLlmReply(const std::string& reply, const OperatorCard& card);

} // namespace kforge::core
