// SPDX-License-Identifier: BSD-3-Clause
// How this gateway's WAN link (--wan-rate) is shared by the relay's trunks,
// one per other cluster: every trunk sending in bulk gets an equal part,
// and a trunk not sending is paced at the part it would get if it started.
// Contract: writing() before every write to a trunk's socket, expire() at
// least by next_expiry(), forget() when a trunk goes; whenever one of them
// returns true the split changed and every open trunk is paced at rate()
// again. Relay thread only.
//
// Why sending, not open: with three clusters a relay has two trunks, and
// split over the open ones a job whose traffic goes to one cluster only
// (a pair of ranks, one phase of a code) got half the link. Which trunks
// send is fi::sending_sockets' answer, as for a process's own WAN sockets
// (src/transport/send/sending_sockets.hpp): a trunk counts from its first
// bulk write until its bytes should have left at its part, and then for as
// long as it still has bytes to send (queued in the relay or unsent in the
// kernel).
//
// Why a write below bulk_write does not make a trunk count: pings, credits
// and small messages need no bandwidth, and counting the idle trunk's ping
// every second would halve the busy trunk's rate each time.
#pragma once

#include "transport/send/sending_sockets.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>

namespace hashi::relay {

class trunk_pacing {
public:
    // The writes that make a trunk count as sending, at least.
    static constexpr std::size_t bulk_write = 2048;

    // `wan_rate`: the link, bytes/s; 0: trunks unpaced (nothing counts).
    explicit trunk_pacing(std::uint64_t wan_rate) : wan_rate_(wan_rate) { }

    // Trunk `t` (socket `fd`) is about to hand `bytes` to the kernel at
    // `now_ns`. True when the split changed (it started counting).
    bool writing(const void* t, int fd, std::size_t bytes, std::uint64_t now_ns);
    // Drops the trunks whose bytes should have left by `now_ns` and that
    // `unsent` (bytes the trunk still has to send) says are done. True
    // when the split changed.
    bool expire(std::uint64_t now_ns, const std::function<std::size_t(const void* t, int fd)>& unsent);
    // The trunk closed. True when the split changed.
    bool forget(const void* t, int fd);

    // Each open trunk's pacing rate now (bytes/s of payload; 0: unpaced).
    [[nodiscard]] std::uint64_t rate() const;
    [[nodiscard]] std::size_t sending() const noexcept { return sending_.count(); }
    // When expire() has something to look at (0: nothing is sending).
    [[nodiscard]] std::uint64_t next_expiry() const noexcept { return sending_.next_expiry(); }

private:
    std::uint64_t wan_rate_;
    fi::sending_sockets sending_;
};

} // namespace hashi::relay
