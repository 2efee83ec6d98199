// SPDX-License-Identifier: BSD-3-Clause
// The receive-side matching contract of the hashi provider.
//
// MPI's matching rules live here and nowhere else: a posted receive takes the
// first message, in arrival order, whose source and tag it accepts; an
// arriving message takes the first receive, in posting order, that accepts
// it. The user-space engine (match_engine.hpp) implements this interface; the
// o2g kernel module does the same matching inside the TCP receive handler and
// is checked against the same test vectors (tests/unit/data/match-vectors.txt).
//
// The backend stores descriptors only. Payload bytes, buffers and completion
// queues belong to the provider, which refers to them through the opaque
// cookies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace hashi::match {

// A source address as libfabric numbers it (the fi_addr_t index in the AV).
using source_t = std::uint64_t;
// libfabric's FI_ADDR_UNSPEC: a receive that accepts any source. A message
// from a peer that is not (yet) in the AV carries the same value
// (FI_ADDR_NOTAVAIL), so only wildcard receives accept it.
inline constexpr source_t any_source = ~std::uint64_t{0};

// A receive the application posted (fi_trecv, fi_recv, fi_trecvmsg, ...).
struct posted_recv {
    std::uint64_t cookie = 0; // the provider's operation; also what cancel() names
    source_t source = any_source; // any_source accepts every source
    std::uint64_t tag = 0;
    std::uint64_t ignore = 0; // bits set here are not compared
    std::size_t capacity = 0; // bytes the buffer holds; longer messages truncate
    // A FI_MULTI_RECV buffer: it stays posted (in its place) after a match,
    // until the provider removes it with remove_posted().
    bool persistent = false;
};

// A message that arrived (its header: an eager message, or the request to
// send of a rendezvous).
struct arrived_msg {
    std::uint64_t cookie = 0; // the provider's buffered message
    source_t source = any_source;
    std::uint64_t tag = 0;
    std::uint64_t data = 0; // remote CQ data
    std::size_t length = 0; // full length, also for a rendezvous
};

// What post() or arrive() found.
struct match_result {
    posted_recv recv;
    arrived_msg msg;
    bool truncated = false; // msg.length > recv.capacity
};

// Is `msg` accepted by a receive for (source, tag, ignore)?
constexpr bool accepts(source_t want_source, std::uint64_t want_tag, std::uint64_t ignore, source_t msg_source,
    std::uint64_t msg_tag) noexcept
{
    return (want_source == any_source || want_source == msg_source) && ((want_tag ^ msg_tag) & ~ignore) == 0;
}

class match_backend {
public:
    virtual ~match_backend() = default;

    // A receive is posted. If a queued message (not claimed) matches, the
    // first one in arrival order is removed and returned with the receive
    // (a persistent receive is then also queued as posted). Otherwise the
    // receive is queued and nullopt returned.
    virtual std::optional<match_result> post(const posted_recv& recv) = 0;

    // A message arrives. If a posted receive matches, the first one in
    // posting order is returned (and removed unless persistent). Otherwise the
    // message is queued as unexpected and nullopt returned.
    virtual std::optional<match_result> arrive(const arrived_msg& msg) = 0;

    // FI_PEEK: the first unexpected, unclaimed message that matches, left in
    // the queue. With claim_cookie set (FI_PEEK|FI_CLAIM), that message is
    // reserved for the cookie: no post(), peek() or arrive() sees it again
    // until claim() takes it.
    virtual std::optional<arrived_msg> peek(source_t source, std::uint64_t tag, std::uint64_t ignore,
        std::optional<std::uint64_t> claim_cookie = std::nullopt)
        = 0;

    // FI_CLAIM: removes and returns the message that peek() reserved for
    // claim_cookie; nullopt if there is none.
    virtual std::optional<arrived_msg> claim(std::uint64_t claim_cookie) = 0;

    // fi_cancel: removes the posted receive with this cookie. False if it is
    // not posted (already matched, or never was).
    virtual bool cancel(std::uint64_t recv_cookie) = 0;

    // Removes a persistent (multi-receive) buffer once it is used up.
    virtual bool remove_posted(std::uint64_t recv_cookie) = 0;

    // A peer failed: removes and returns every posted receive directed at it
    // (the provider completes them with an error). Wildcard receives stay.
    virtual std::vector<posted_recv> fail_source(source_t source) = 0;

    // A peer that was unknown (any_source) is now in the AV as `source`:
    // queued messages that came over its connection are renumbered. The
    // provider identifies them by cookie.
    virtual void renumber_unexpected(const std::vector<std::uint64_t>& msg_cookies, source_t source) = 0;

    virtual std::size_t posted_depth() const noexcept = 0;
    virtual std::size_t unexpected_depth() const noexcept = 0;
};

} // namespace hashi::match
