#include "llm_client/LlmSecretRedaction.h"

#include <array>
#include <cctype>
#include <vector>

namespace kforge::core {
namespace {

char lower(char c)
{
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool startsWithNoCase(std::string_view text, std::size_t pos, std::string_view word)
{
    if (pos + word.size() > text.size())
        return false;
    for (std::size_t i = 0; i < word.size(); ++i) {
        if (lower(text[pos + i]) != word[i])
            return false;
    }
    return true;
}

bool endsValue(char c)
{
    static constexpr std::string_view kEnds = "\"',;)]}<>";
    return std::isspace(static_cast<unsigned char>(c)) || kEnds.find(c) != std::string_view::npos;
}

void replaceAll(std::string& text, std::string_view secret)
{
    if (secret.empty())
        return;
    for (std::size_t pos = text.find(secret); pos != std::string::npos;
         pos = text.find(secret, pos + kRedactedSecret.size()))
        text.replace(pos, secret.size(), kRedactedSecret);
}

// The value after each "authorization" / "x-api-key" name followed by ':' or '='.
void redactHeaderValues(std::string& text)
{
    static constexpr std::array<std::string_view, 2> kNames = {"authorization", "x-api-key"};
    static constexpr std::array<std::string_view, 3> kSchemes = {"bearer", "basic", "token"};
    for (std::size_t pos = 0; pos < text.size(); ++pos) {
        std::size_t nameLength = 0;
        for (std::string_view name : kNames) {
            if (startsWithNoCase(text, pos, name))
                nameLength = name.size();
        }
        if (nameLength == 0)
            continue;
        std::size_t p = pos + nameLength;
        if (p < text.size() && (text[p] == '"' || text[p] == '\''))
            ++p; // the closing quote of a JSON key
        while (p < text.size() && (text[p] == ' ' || text[p] == '\t'))
            ++p;
        if (p >= text.size() || (text[p] != ':' && text[p] != '='))
            continue;
        ++p;
        while (p < text.size() && (text[p] == ' ' || text[p] == '\t' || text[p] == '"' || text[p] == '\''))
            ++p;
        for (std::string_view scheme : kSchemes) {
            if (startsWithNoCase(text, p, scheme) && p + scheme.size() < text.size() &&
                text[p + scheme.size()] == ' ') {
                p += scheme.size();
                while (p < text.size() && text[p] == ' ')
                    ++p;
                break;
            }
        }
        if (text.compare(p, kRedactedSecret.size(), kRedactedSecret) == 0) {
            pos = p + kRedactedSecret.size() - 1;
            continue;
        }
        std::size_t end = p;
        while (end < text.size() && !endsValue(text[end]))
            ++end;
        if (end == p) {
            pos = p;
            continue;
        }
        text.replace(p, end - p, kRedactedSecret);
        pos = p + kRedactedSecret.size();
    }
}

} // namespace

std::string redactSecretInText(std::string text, std::string_view secret)
{
    replaceAll(text, secret);
    redactHeaderValues(text);
    return text;
}

std::string redactSecretInReplyText(std::string text, std::string_view secret)
{
    return redactSecretInText(std::move(text), secret.size() >= kMinReplySecretChars ? secret : std::string_view());
}

void redactSecretInReply(nlohmann::json& reply, std::string_view secret)
{
    // Iterative: a reply may nest arrays millions deep within the size cap.
    std::vector<nlohmann::json*> pending = {&reply};
    while (!pending.empty()) {
        nlohmann::json& node = *pending.back();
        pending.pop_back();
        if (node.is_string()) {
            std::string& text = node.get_ref<std::string&>();
            text = redactSecretInReplyText(std::move(text), secret);
        } else if (node.is_array()) {
            for (nlohmann::json& element : node)
                pending.push_back(&element);
        } else if (node.is_object()) {
            bool keysChange = false;
            for (const auto& item : node.items())
                keysChange = keysChange || redactSecretInReplyText(item.key(), secret) != item.key();
            if (keysChange) {
                nlohmann::json cleaned = nlohmann::json::object();
                for (auto& item : node.items())
                    cleaned[redactSecretInReplyText(item.key(), secret)] = std::move(item.value());
                node = std::move(cleaned);
            }
            for (auto& item : node.items())
                pending.push_back(&item.value());
        }
    }
}

} // namespace kforge::core
