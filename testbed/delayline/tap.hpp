// SPDX-License-Identifier: BSD-3-Clause
// Creating a tap device inside another network namespace.
#pragma once

#include "common/unique_fd.hpp"
#include "options.hpp"

namespace hashi::delayline {

// Creates the tap `end.ifname` in namespace `end.netns` and returns its
// non-blocking file descriptor; the device lives as long as the descriptor.
// Frames carry a virtio-net header, so GSO frames of up to 64 KiB pass
// unsegmented (the two taps of one delay line must agree on that).
// The calling thread ends up back in the namespace it started in.
// Throws std::system_error saying which step failed for which end.
UniqueFd open_tap(const TapEnd& end);

// Largest frame read() can return: a 64 KiB GSO frame plus headers.
inline constexpr std::size_t max_frame_bytes = 65536 + 256;

} // namespace hashi::delayline
