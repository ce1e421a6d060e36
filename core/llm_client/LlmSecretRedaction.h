#pragma once
// Keeps the API key out of everything an LLM client hands back (docs/llm-proposer.md, "The API
// key"): a provider, a proxy or a model may echo the key or a request header in a reply or an
// error, and whatever a client returns may end up stored (tree.json) or shown.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace kforge::core {

/// What replaces a secret.
inline constexpr std::string_view kRedactedSecret = "[redacted]";

/// Inside reply content (the generated text, the model name, the request id) a key is looked for
/// only when it has at least this many characters: local servers take placeholder keys such as
/// "EMPTY" or "x", and replacing every "x" of a kernel would corrupt it. Error texts redact every
/// non-empty key.
inline constexpr std::size_t kMinReplySecretChars = 8;

/// `text` with every occurrence of `secret` (when not empty) and the value of every
/// authentication header written out in it replaced by kRedactedSecret. Header forms recognised,
/// with the name in any case: `Authorization: Bearer VALUE` (also Basic, Token), `Authorization:
/// VALUE`, `x-api-key: VALUE`, the JSON forms `"authorization": "VALUE"`, `"x-api-key": "VALUE"`,
/// and `=` for `:`. The value ends at a blank, a quote, or one of `,;)]}<>`. Pure; any thread.
std::string redactSecretInText(std::string text, std::string_view secret);

/// A reply string: as redactSecretInText, except that `secret` is looked for only when it has at
/// least kMinReplySecretChars characters.
std::string redactSecretInReplyText(std::string text, std::string_view secret);

/// Every string of a parsed reply (values and object keys, at any depth) through
/// redactSecretInReplyText, so that whatever a client reads from it is clean, JSON escapes
/// (`\u0073k-...`) included.
void redactSecretInReply(nlohmann::json& reply, std::string_view secret);

} // namespace kforge::core
