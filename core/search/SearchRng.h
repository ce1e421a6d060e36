#pragma once
// The seeded RNG of a search run (tie-breaking in selection). It counts the values it has drawn so
// that a resumed run can restore the exact state: SearchRng(seed, draws) continues where a run that
// drew `draws` values from SearchRng(seed) stopped. The count is saved in the tree file.
// Thread: not synchronized; owned by the thread that runs the search.

#include <cstddef>
#include <cstdint>
#include <random>

namespace kforge::core {

class SearchRng {
public:
    explicit SearchRng(std::uint64_t seed, std::uint64_t draws = 0) : m_engine(seed), m_draws(draws)
    {
        m_engine.discard(draws);
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

private:
    std::mt19937_64 m_engine;
    std::uint64_t m_draws = 0;
};

} // namespace kforge::core
