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
    // A page still at its initial (block/cyclic) home moves at its first
    // single-writer interval: that home was a guess, not a choice, so there
    // is no ping-pong to guard against yet. Hysteresis applies to every
    // later move (and to pages placed by hand). false: hysteresis from the
    // start (SCASH_FIRST_MOVE=0).
    bool first_move_immediate = true;
};

class HomeDirectory {
public:
    HomeDirectory(std::size_t npages, int dist, int nprocs);

    int home(std::size_t page) const { return home_[page]; }

    // The decision for a page written in the last interval. writer is the
    // single writer, or -1 when several processes wrote it. Returns the new
    // home (possibly the old one).
    int decide(std::size_t page, int writer, const MigrationPolicy& policy);

    // Places a page's home by hand (scash_set_home): a choice, so later
    // moves wait for the hysteresis.
    void place(std::size_t page, int proc);

private:
    // How a page got its home.
    enum Origin : std::uint8_t {
        kProvisional, // first touch, no write yet
        kInitial, // the region's initial distribution
        kChosen, // a write pattern (migration, first touch) or the program (scash_set_home)
    };
    std::vector<std::int32_t> home_;
    std::vector<std::int32_t> candidate_; // single writer seen in the last written intervals
    std::vector<std::uint16_t> streak_; // how many of them in a row
    std::vector<std::uint8_t> origin_;
};

} // namespace hashi::scash
#endif
