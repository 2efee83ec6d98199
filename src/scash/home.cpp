// SPDX-License-Identifier: BSD-3-Clause
#include "scash/home.hpp"

#include "scash/scash.h"

namespace hashi::scash {

HomeDirectory::HomeDirectory(std::size_t npages, int dist, int nprocs)
    : home_(npages),
      candidate_(npages, -1),
      streak_(npages, 0),
      origin_(npages, dist == SCASH_FIRST_TOUCH ? kProvisional : kInitial)
{
    const std::size_t chunk = (npages + std::size_t(nprocs) - 1) / std::size_t(nprocs);
    for (std::size_t i = 0; i < npages; ++i) {
        if (dist == SCASH_CYCLIC)
            home_[i] = std::int32_t(i % std::size_t(nprocs));
        else // block; also the provisional home of a first-touch page
            home_[i] = std::int32_t(chunk ? i / chunk : 0);
    }
}

void HomeDirectory::place(std::size_t page, int proc)
{
    home_[page] = proc;
    origin_[page] = kChosen;
    candidate_[page] = -1;
    streak_[page] = 0;
}

int HomeDirectory::decide(std::size_t page, int writer, const MigrationPolicy& policy)
{
    if (origin_[page] == kProvisional) {
        // First touch: the first interval that writes the page places it.
        // With several writers the provisional home stays: only a single
        // writer is sure to hold a complete copy.
        origin_[page] = kChosen;
        if (writer >= 0)
            home_[page] = writer;
        return home_[page];
    }
    if (!policy.enabled)
        return home_[page];
    if (writer < 0 || writer == home_[page]) {
        // Several writers, or the home itself: no move, and the streak of a
        // would-be new home is broken (this avoids ping-pong).
        candidate_[page] = -1;
        streak_[page] = 0;
        return home_[page];
    }
    if (candidate_[page] == writer) {
        if (streak_[page] < 0xffff)
            ++streak_[page];
    } else {
        candidate_[page] = writer;
        streak_[page] = 1;
    }
    const int needed = origin_[page] == kInitial && policy.first_move_immediate ? 1 : policy.hysteresis;
    if (streak_[page] >= needed)
        place(page, writer);
    return home_[page];
}

} // namespace hashi::scash
