// SPDX-License-Identifier: BSD-3-Clause
// What the COLL labels of the IMPI startup mean: the contributions a Hashi
// client sends, the size checks the server applies to each contribution,
// and the negotiation every client does on the server's concatenations
// (minimum of DATALEN, TAGUB, ACKMARK, HIWATER; agreement on COLL_XSIZE and
// COLL_MAXLINEAR; version 0.0 supported by all). Pure, no I/O.
#pragma once

#include "wire.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hashi::impi {

using Ipv6 = std::array<std::uint8_t, 16>;

// IPv4-mapped IPv6 (::ffff:a.b.c.d) from a host-order IPv4 address.
Ipv6 ipv4_mapped(std::uint32_t ipv4);

// One client as its own mpiexec sees it. Hosts are the nodes of the
// cluster; each proc names its host (placement may wrap round the hosts).
struct LocalClient {
    std::vector<Ipv6> host_addr;
    std::vector<int> host_of_proc;
    std::uint32_t datalen = 65536;
    std::uint32_t ackmark = 10;
    std::uint32_t hiwater = 20;
};

// The COLL messages of a Hashi client, in the order it sends them.
std::vector<CollIn> contributions(const LocalClient& c);

// What the server knows of a client's shape while its labels arrive.
struct ClientShape {
    std::uint32_t nhosts = 0; // 0: C_NHOSTS not seen yet
    std::uint32_t nprocs = 0;
};

// Checks one contribution's size and, for C_NHOSTS and C_NPROCS, its value,
// updating `shape`. Returns what is wrong, or empty. Unknown labels are
// opaque to the server and pass (the frame limit bounds them).
std::string check_contribution(std::uint32_t label, ByteView data, ClientShape& shape);

// The job as every client sees it after DONE.
struct RemoteClient {
    bool present = false;
    bool hashi = false; // announced the Hashi extension
    std::uint32_t nhosts = 0;
    std::uint32_t nprocs = 0;
    std::vector<int> host_of_proc;
};
struct Federation {
    std::vector<RemoteClient> clients; // by client rank
    std::uint32_t datalen = 0;
    std::uint32_t tagub = 0;
    std::uint32_t ackmark = 0;
    std::uint32_t hiwater = 0;
    std::int32_t coll_xsize = -1;
    std::int32_t coll_maxlinear = -1;

    [[nodiscard]] std::uint32_t total_procs() const;
    // First global rank of client `k`: lower clients' ranks come first.
    [[nodiscard]] std::uint32_t rank_offset(std::size_t k) const;
    [[nodiscard]] std::uint32_t host_offset(std::size_t k) const;
};

// Interprets the server's COLL answers (by label) for a job of `nclients`.
// Returns nullopt and sets `error` when a label is missing, a contribution
// has the wrong size, or the clients cannot agree.
std::optional<Federation> negotiate(
    const std::map<std::uint32_t, CollOut>& replies, std::uint32_t nclients, std::string& error);

} // namespace hashi::impi
