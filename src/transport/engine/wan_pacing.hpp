// SPDX-License-Identifier: BSD-3-Clause
// Pacing and tuning of this process's connections to other clusters.
//
// The rate: when libhashi-coll is in the process it publishes how fast this
// process may send over the WAN in all (common/abi/wan_share_abi.h: the
// job's WAN budget / its concurrent WAN senders, a hint, or a collective's
// WAN phase). Every write on a socket that crosses the WAN itself (another
// cluster reached directly: router::sends_into_wan; a relay's trunk is
// paced by the relay), point-to-point included, then passes one token
// bucket at that rate shared by all the process's WAN paths (so four WAN peers at once still get one share), and each WAN
// socket's SO_MAX_PACING_RATE is set to the share divided by the WAN
// sockets sending at the time (send/sending_sockets.hpp), so the kernel
// spreads what the bucket lets through instead of bursting it at line rate
// (TCP paces by itself without fq since Linux 4.13), and the sockets of a
// process together never go faster than its share. A connection idle
// through a compute phase restarts at the paced rate too: no burst into the
// bottleneck.
//
// The tuning, once per WAN socket: TCP_NOTSENT_LOWAT (the kernel keeps at
// most that much unsent, so the bucket's decisions stay close to the wire)
// and the congestion control the user picks (FI_HASHI_WAN_CC, e.g. bbr).
// Socket buffers are left to the kernel's autotuning, whose ceiling
// (net.ipv4.tcp_wmem / tcp_rmem) the admin sizes to the bandwidth-delay
// product; see the README.
#pragma once

#include "transport/send/pacer.hpp"
#include "transport/send/sending_sockets.hpp"

#include <cstdint>
#include <optional>
#include <string>

struct hashi_wan_share;

namespace hashi::fi {

class wan_pacing {
public:
    // Finds the share record if libhashi-coll is loaded and reads
    // FI_HASHI_WAN_PACING (0 = off), FI_HASHI_WAN_CC and
    // FI_HASHI_WAN_NOTSENT_LOWAT; false with `error` naming what is wrong
    // (an unknown congestion control names the available ones).
    bool init(std::string& error);
    bool enabled() const { return share_ != nullptr; }
    // The pacer for a write to another cluster now (the share reread when
    // it changed), or nullptr when nothing limits it.
    pacer* wan_pacer(std::uint64_t now_ns);
    // Brings a WAN socket up to date: the tuning once (`tuned`), the rate
    // when it changed since `applied` (the socket's last generation): the
    // share over the sockets sending.
    void apply(int fd, bool& tuned, std::uint64_t& applied);
    // A WAN socket took `bytes` (sending_sockets::sent); true when the
    // sockets sending changed, so every one of them needs apply() again.
    bool sent(sending_sockets::key k, std::size_t bytes, std::uint64_t now_ns);
    // Sockets whose bytes have left stop counting (`unsent` as for
    // sending_sockets::expire); true as for sent().
    bool expire(std::uint64_t now_ns, const std::function<std::size_t(const sending_sockets::key&)>& unsent);
    bool forget(sending_sockets::key k);
    const sending_sockets& sending() const noexcept { return sending_; }
    // For the statistics: the share in force (bytes/s of the WAN link, 0 =
    // none) and why; the payload rate the pacers hold it to.
    std::uint64_t rate() const { return share_rate_; }
    std::uint64_t payload_rate() const { return rate_; }
    const char* reason() const;

private:
    void refresh(std::uint64_t now_ns);
    const hashi_wan_share* share_ = nullptr;
    std::uint64_t generation_ = 0; // of the share record, last read
    std::uint64_t socket_generation_ = 0; // of the sockets' rate: share or split changed
    sending_sockets sending_;
    std::uint64_t share_rate_ = 0; // the share published, of the link
    std::uint64_t rate_ = 0; // the payload the pacers let through for it
    std::uint64_t budget_ = 0;
    std::uint32_t senders_ = 0;
    std::uint32_t reason_ = 0;
    std::optional<token_bucket> bucket_;
    std::string congestion_control_; // empty: the system's default
    std::uint64_t notsent_lowat_ = 0; // 0: not set
};

} // namespace hashi::fi
