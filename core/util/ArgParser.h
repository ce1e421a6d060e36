#pragma once
// A small command-line parser for kforge subcommands (and kforge-cast-run): declared options only, one clear error for
// anything else. Options take one value ("--samples 4" or "--samples=4") unless declared as flags;
// a multi-value option ("--inputs A B") takes every following word up to the next option.

#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace kforge::core {

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

/// Parses all of `text` as a number of type T; false when anything is left over, out of range, or
/// (for floating types) not finite: from_chars reads "nan" and "inf", which no option means.
template <class T>
bool parseNumber(const std::string& text, T& out)
{
    T value{};
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
        return false;
    if constexpr (std::is_floating_point_v<T>) {
        if (!std::isfinite(value))
            return false;
    }
    out = value;
    return true;
}

/// The longest duration a seconds option accepts (a week): far above any real run, and small
/// enough that converting it to milliseconds or adding it to a clock cannot overflow.
inline constexpr double kMaxOptionSeconds = 7 * 24 * 3600.0;

/// Parses a duration option in seconds: finite, > 0 and at most kMaxOptionSeconds.
inline bool parseSeconds(const std::string& text, double& out)
{
    double value = 0;
    if (!parseNumber(text, value) || value <= 0 || value > kMaxOptionSeconds)
        return false;
    out = value;
    return true;
}

/// The error line of a seconds option that parseSeconds refused.
inline std::string secondsError(const std::string& flag, const std::string& text)
{
    return flag + ": expected seconds > 0 and at most " + std::to_string(static_cast<long long>(kMaxOptionSeconds)) +
        ", got '" + text + "'";
}

} // namespace kforge::core
