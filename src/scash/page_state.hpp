// SPDX-License-Identifier: BSD-3-Clause
// The per-page state machine of one process's view of a shared page.
//
//   Invalid  --read fault: fetch from home-->  ReadOnly
//   ReadOnly --write fault: twin (non-home)--> Writable
//   Writable --release (diff sent to home)-->  ReadOnly
//   any      --barrier/acquire notice: someone else wrote it--> Invalid
//
// The home's copy is the master: the home never holds Invalid and never
// makes a twin; its writes go straight into the master and are announced by
// write notices. The protection of the application view always follows the
// state: Invalid = PROT_NONE, ReadOnly = PROT_READ, Writable = RW.
#ifndef HASHI_SCASH_PAGE_STATE_HPP
#define HASHI_SCASH_PAGE_STATE_HPP

#include <cstdint>

namespace hashi::scash {

enum class PageState : std::uint8_t { Invalid, ReadOnly, Writable };

// Flag bits kept next to the state.
inline constexpr std::uint8_t kTwinned = 1; // a twin holds the copy before this interval's writes
inline constexpr std::uint8_t kWrittenInterval = 2; // written since the last barrier (a write notice is due)
inline constexpr std::uint8_t kWrittenRelease = 4; // written since the last release (its diff is due)
// The local copy is still the region's initial zeros: never fetched, never
// written here, and not written by anybody in a barrier interval since (a
// home's copy changes by the diffs it applies). A first write then needs no
// twin copied: the twin is known to be zeros (kZeroTwin instead of a copy).
inline constexpr std::uint8_t kPristine = 8;
inline constexpr std::uint8_t kZeroTwin = 16; // with kTwinned: the twin is all zeros, not in the twin area

} // namespace hashi::scash
#endif
