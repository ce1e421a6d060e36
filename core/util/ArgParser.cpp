#include "util/ArgParser.h"

#include <cctype>

namespace kforge::core {

ArgParser& ArgParser::flag(const std::string& name)
{
    m_declared[name] = Kind::Flag;
    return *this;
}

ArgParser& ArgParser::option(const std::string& name)
{
    m_declared[name] = Kind::Single;
    return *this;
}

ArgParser& ArgParser::multiOption(const std::string& name)
{
    m_declared[name] = Kind::Multi;
    return *this;
}

ArgParser& ArgParser::alias(const std::string& shortName, const std::string& longName)
{
    m_aliases[shortName] = longName;
    return *this;
}

std::optional<std::string> ArgParser::parse(const std::vector<std::string>& args)
{
    for (size_t i = 0; i < args.size(); ++i) {
        std::string word = args[i];
        if (word.size() < 2 || word[0] != '-' || word == "--") {
            m_positionals.push_back(word);
            continue;
        }
        std::optional<std::string> inlineValue;
        if (const size_t eq = word.find('='); word.starts_with("--") && eq != std::string::npos) {
            inlineValue = word.substr(eq + 1);
            word = word.substr(0, eq);
        }
        if (auto a = m_aliases.find(word); a != m_aliases.end())
            word = a->second;
        auto declared = m_declared.find(word);
        if (declared == m_declared.end())
            return "unknown option '" + word + "'";
        m_seen.insert(word);
        auto& stored = m_values[word];
        switch (declared->second) {
        case Kind::Flag:
            if (inlineValue)
                return "option '" + word + "' takes no value";
            break;
        case Kind::Single:
            if (inlineValue) {
                stored = {*inlineValue};
            } else {
                if (i + 1 >= args.size())
                    return "option '" + word + "' needs a value";
                stored = {args[++i]};
            }
            break;
        case Kind::Multi:
            if (inlineValue)
                stored.push_back(*inlineValue);
            while (i + 1 < args.size() &&
                   !(args[i + 1].starts_with("-") && args[i + 1].size() > 1 &&
                     !std::isdigit(static_cast<unsigned char>(args[i + 1][1]))))
                stored.push_back(args[++i]);
            if (stored.empty())
                return "option '" + word + "' needs at least one value";
            break;
        }
    }
    return std::nullopt;
}

bool ArgParser::has(const std::string& name) const
{
    return m_seen.count(name) != 0;
}

std::optional<std::string> ArgParser::value(const std::string& name) const
{
    auto found = m_values.find(name);
    if (found == m_values.end() || found->second.empty())
        return std::nullopt;
    return found->second.back();
}

std::vector<std::string> ArgParser::values(const std::string& name) const
{
    auto found = m_values.find(name);
    return found == m_values.end() ? std::vector<std::string>{} : found->second;
}

} // namespace kforge::core
