#include "search/ProvenanceTexts.h"

namespace kforge::core {
namespace {

using nlohmann::json;

Result<void> storeText(json& holder, const std::string& name, const TextBlobStore& blobs)
{
    if (!holder.is_object())
        return {};
    const auto it = holder.find(name);
    if (it == holder.end() || !it->is_string())
        return {};
    auto ref = blobs.put(it->get_ref<const std::string&>());
    if (!ref)
        return ref.error();
    holder.erase(name);
    holder[name + "_sha256"] = ref->sha256;
    holder[name + "_bytes"] = ref->bytes;
    if (ref->truncated)
        holder[name + "_truncated"] = true;
    return {};
}

} // namespace

Result<void> storeProvenanceTexts(json& details, const TextBlobStore& blobs)
{
    if (!details.is_object())
        return {};
    if (auto stored = storeText(details, "system_prompt", blobs); !stored)
        return stored;
    const auto calls = details.find("calls");
    if (calls == details.end() || !calls->is_array())
        return {};
    for (json& call : *calls) {
        for (const char* name : {"prompt", "response"}) {
            if (auto stored = storeText(call, name, blobs); !stored)
                return stored;
        }
    }
    return {};
}

bool hasProvenanceText(const json& holder, const std::string& name)
{
    if (!holder.is_object())
        return false;
    const auto inlineText = holder.find(name);
    if (inlineText != holder.end() && inlineText->is_string())
        return true;
    const auto ref = holder.find(name + "_sha256");
    return ref != holder.end() && ref->is_string();
}

Result<std::string> provenanceText(const json& holder, const std::string& name, const TextBlobStore& blobs)
{
    if (holder.is_object()) {
        const auto inlineText = holder.find(name);
        if (inlineText != holder.end() && inlineText->is_string())
            return inlineText->get<std::string>();
        const auto ref = holder.find(name + "_sha256");
        if (ref != holder.end() && ref->is_string())
            return blobs.get(ref->get<std::string>());
    }
    return makeError(ErrorCode::NotFound, "no " + name + " recorded");
}

} // namespace kforge::core
