#pragma once
// The large texts of a node's provenance details, kept outside the tree file (docs/search.md,
// "Text blobs"): the LLM proposer's "system_prompt" and every call's "prompt" and "response"
// (docs/llm-proposer.md, "Audit record"). Stored, a text NAME becomes a reference
//     "NAME_sha256": "<digest of the stored copy>", "NAME_bytes": <length of the text>,
//     "NAME_truncated": true   (only when the stored copy was cut at kMaxStoredTextBytes)
// in the same object. Trees written before (with the text inline as "NAME") stay valid: readers
// go through provenanceText, which takes either form.
// Thread: pure functions over their arguments (plus the blob files); reentrant.

#include "search/TextBlobStore.h"
#include "util/Result.h"

#include <nlohmann/json.hpp>

#include <string>

namespace kforge::core {

/// Moves every inline system_prompt / calls[].prompt / calls[].response string of `details` into
/// `blobs` and leaves references in their place. Other members are left alone. Io when a blob
/// cannot be written (`details` is then partly converted, still consistent).
Result<void> storeProvenanceTexts(nlohmann::json& details, const TextBlobStore& blobs);

/// The text `name` of `holder` (the details object, or one of its calls): inline, or read from
/// `blobs` through its reference. NotFound when `holder` has neither; the blob store's errors
/// (missing or damaged blob) name the file.
Result<std::string> provenanceText(const nlohmann::json& holder, const std::string& name, const TextBlobStore& blobs);

/// Whether `holder` has the text `name`, inline or by reference.
bool hasProvenanceText(const nlohmann::json& holder, const std::string& name);

} // namespace kforge::core
