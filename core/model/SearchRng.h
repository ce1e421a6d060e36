#pragma once
// The seeded RNG of a search run (tie-breaking in selection). Its state is saved in the tree file
// ("rng_state", the engine's standard text form) after every node, so a resumed run continues
// exactly where the saved run stopped, at once, whatever the number of draws. It also counts the
// values drawn ("rng_draws"): trees written before the state was saved are restored by replaying
// that many draws from SearchRng(seed), which the tree reader allows only up to kMaxReplayDraws
// (a larger count is a damaged file, not a search: see SearchTreeJson).
// Thread: not synchronized; owned by the thread that runs the search.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <sstream>
#include <string>

namespace kforge::core {

class SearchRng {
public:
    /// The most draws a restore by replay performs (about 0.1 s): far more than a search of
    /// thousands of nodes takes (at most one draw per tree level per selection).
    static constexpr std::uint64_t kMaxReplayDraws = 10'000'000;
    /// The length of the longest state text restore() accepts (a real one is about 6.5 KB).
    static constexpr std::size_t kMaxStateTextBytes = 16 * 1024;

    /// Starts from `seed` and discards `draws` values (callers keep draws <= kMaxReplayDraws).
    explicit SearchRng(std::uint64_t seed, std::uint64_t draws = 0) : m_engine(seed), m_draws(draws)
    {
        m_engine.discard(draws);
    }

    /// The generator whose state() was `state`, having drawn `draws` values; nullopt when `state`
    /// is not a generator state.
    static std::optional<SearchRng> restore(const std::string& state, std::uint64_t draws)
    {
        if (state.empty() || state.size() > kMaxStateTextBytes ||
            state.find_first_not_of("0123456789 ") != std::string::npos)
            return std::nullopt;
        SearchRng rng(0);
        std::istringstream in(state);
        in >> rng.m_engine;
        if (in.fail())
            return std::nullopt;
        in >> std::ws;
        if (!in.eof())
            return std::nullopt;
        rng.m_draws = draws;
        return rng;
    }

    std::uint64_t next()
    {
        ++m_draws;
        return m_engine();
    }

    /// An index in [0, count), count >= 1. Draws exactly one value when count > 1 and none when
    /// count == 1, so the draw count depends only on the choices made. (Modulo bias is irrelevant
    /// for tie-breaking among a handful of nodes.)
    std::size_t pick(std::size_t count) { return count <= 1 ? 0 : static_cast<std::size_t>(next() % count); }

    std::uint64_t draws() const { return m_draws; }

    /// The engine state as text (restore() reads it back).
    std::string state() const
    {
        std::ostringstream out;
        out << m_engine;
        return out.str();
    }

private:
    std::mt19937_64 m_engine;
    std::uint64_t m_draws = 0;
};

} // namespace kforge::core
