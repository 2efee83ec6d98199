// SPDX-License-Identifier: BSD-3-Clause
// Twin/diff encoding of one page for the multiple-writer protocol. A diff is
// a sequence of runs, each {uint16 offset, uint16 length, length bytes}, of
// exactly the bytes that differ from the twin. Runs are byte-exact, never
// widened to words: two processes may write neighbouring bytes of one page,
// and a widened run would overwrite the other's bytes at the home.
#ifndef HASHI_SCASH_DIFF_HPP
#define HASHI_SCASH_DIFF_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace hashi::scash {

// Largest page the 16-bit run header can describe.
inline constexpr std::size_t kMaxDiffPage = 65536;

// Appends the runs where page differs from twin to out; returns the number of
// bytes appended (0: the page is unchanged).
std::size_t encode_diff(std::span<const std::byte> twin, std::span<const std::byte> page, std::vector<std::byte>& out);

// Applies runs to page. Returns false (page possibly partly written) if a run
// is truncated or falls outside the page: a corrupt message.
bool apply_diff(std::span<const std::byte> diff, std::span<std::byte> page);

} // namespace hashi::scash
#endif
