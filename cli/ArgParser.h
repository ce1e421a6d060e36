#pragma once
// A small command-line parser for kforge subcommands: declared options only, one clear error for
// anything else. Options take one value ("--samples 4" or "--samples=4") unless declared as flags;
// a multi-value option ("--inputs A B") takes every following word up to the next option.

#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kforge::cli {

class ArgParser {
public:
    ArgParser& flag(const std::string& name);
    ArgParser& option(const std::string& name);
    ArgParser& multiOption(const std::string& name);
    ArgParser& alias(const std::string& shortName, const std::string& longName);

    /// Parses `args` (without the program and subcommand names). Returns an error line or nullopt.
    std::optional<std::string> parse(const std::vector<std::string>& args);

    bool has(const std::string& name) const;
    std::optional<std::string> value(const std::string& name) const;
    std::vector<std::string> values(const std::string& name) const;
    const std::vector<std::string>& positionals() const { return m_positionals; }

private:
    enum class Kind { Flag, Single, Multi };
    std::map<std::string, Kind> m_declared;
    std::map<std::string, std::string> m_aliases;
    std::map<std::string, std::vector<std::string>> m_values;
    std::set<std::string> m_seen;
    std::vector<std::string> m_positionals;
};

/// Parses all of `text` as a number of type T; false when anything is left over or out of range.
template <class T>
bool parseNumber(const std::string& text, T& out)
{
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return !text.empty() && ec == std::errc() && ptr == text.data() + text.size();
}

} // namespace kforge::cli
