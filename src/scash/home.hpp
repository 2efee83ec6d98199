// SPDX-License-Identifier: BSD-3-Clause
// The home directory of one region: which process holds each page's master
// copy, the initial distribution, and the migration rule applied at
// barriers. Every process keeps an identical copy and applies the same
// deterministic rule to the same (allgathered) write notices, so a home
// move costs no directory messages.
#ifndef HASHI_SCASH_HOME_HPP
#define HASHI_SCASH_HOME_HPP

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hashi::scash {

struct MigrationPolicy {
    bool enabled = true;
    int hysteresis = 2; // consecutive written intervals with the same single writer before a move
};

class HomeDirectory {
public:
    HomeDirectory(std::size_t npages, int dist, int nprocs);

    int home(std::size_t page) const { return home_[page]; }

    // The decision for a page written in the last interval. writer is the
    // single writer, or -1 when several processes wrote it. Returns the new
    // home (possibly the old one).
    int decide(std::size_t page, int writer, const MigrationPolicy& policy);

private:
    std::vector<std::int32_t> home_;
    std::vector<std::int32_t> candidate_; // single writer seen in the last written intervals
    std::vector<std::uint16_t> streak_; // how many of them in a row
    std::vector<std::uint8_t> placed_; // first touch: the home is still provisional while 0
};

} // namespace hashi::scash
#endif
