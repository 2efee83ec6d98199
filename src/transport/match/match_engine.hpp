// SPDX-License-Identifier: BSD-3-Clause
// The user-space matching engine of the hashi provider (match_backend.hpp).
//
// Layout, in the spirit of MPICH's ch4 posted/unexpected queues:
//  * posted receives directed at one source sit in that source's bin, in
//    posting order; receives for any_source sit in one wildcard list, also in
//    posting order. Every posted receive carries a sequence number, so an
//    arriving message compares the first match of its source's bin with the
//    wildcard list only up to that number.
//  * unexpected messages sit in their source's bin (a message from an unknown
//    peer in the bin of any_source) and, at the same time, in one list in
//    arrival order that wildcard receives and peeks walk.
//  * a message reserved by peek(..., claim) leaves both lists: no post(),
//    peek() or arrive() can see it; it waits in a table keyed by the claim
//    cookie.
//
// Nodes live in pools (vectors with a free list) and the lists link them by
// index, so after the pools and tables have grown to the working set no
// operation on the message path allocates. Lookups by cookie (cancel,
// remove_posted, claim) and by source go through open-addressing tables.
//
// Costs, with P(s) the receives posted for source s, W the wildcard
// receives, U(s) the unexpected messages from s and U all of them; a scan
// stops at the first match:
//  * arrive(s):   O(P(s) + W) (the wildcard scan stops at the bin's match)
//  * post(s):     O(U(s));  post(any_source): O(U)
//  * peek:        as post; claim, cancel, remove_posted: O(1) expected
//  * fail_source(s): O(P(s));  renumber_unexpected: O(U(any_source) +
//    claimed + k log k + the insertion walk in the new bin), a rare event
//  * depths: O(1)
//
// Policies where the contract leaves room (the test vectors pin them):
//  * unexpected_depth() counts reserved (claimed) messages too: they still
//    hold the provider's buffers.
//  * peek() with a claim cookie that already reserves a message makes no
//    second reservation; it answers as a peek without claim.
//  * renumber_unexpected() renumbers only messages queued (or reserved) with
//    source any_source; other cookies are ignored, as is any_source as the
//    new source. A renumbered message keeps its place in arrival order.
//  * fail_source(any_source) removes nothing: wildcard receives stay.
//  * A source's bin, once made, lives as long as the engine (a few dozen
//    bytes a peer), so a peer that comes back finds it ready.
//  * A persistent receive is consumed by at most one queued message in
//    post(); if more queued messages fit, the provider takes them one by one
//    with peek(recv.source, recv.tag, recv.ignore, cookie) and claim(cookie)
//    before it lets new messages arrive, or a newer message would overtake
//    them. The engine checks truncation against the capacity given at post
//    time; the space left in a multi-receive buffer is the provider's.
//
// Not thread-safe: the provider serialises calls (one lock per receive
// context). May throw std::bad_alloc only.
#pragma once

#include "transport/match/match_backend.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace hashi::match {

namespace detail {

inline constexpr std::uint32_t nil = ~std::uint32_t {0};

// Links of a node in one doubly linked list, by pool index.
struct links {
    std::uint32_t prev = nil;
    std::uint32_t next = nil;
};

struct chain {
    std::uint32_t head = nil;
    std::uint32_t tail = nil;
};

// An open-addressing hash table from a 64-bit key to a pool index, with
// linear probing and backward-shift deletion (no tombstones, so a table
// that sees endless insert/erase cycles never needs a rebuild). The
// same key may be present more than once; erase() names the exact entry.
// Expected O(1) per operation at a load factor of at most 1/2.
class index_table {
public:
    [[nodiscard]] std::uint32_t find(std::uint64_t key) const noexcept;
    void insert(std::uint64_t key, std::uint32_t value);
    void erase(std::uint64_t key, std::uint32_t value) noexcept;
    [[nodiscard]] std::size_t size() const noexcept { return size_; }

private:
    struct slot {
        std::uint64_t key = 0;
        std::uint32_t value = nil; // nil: the slot is empty
    };
    [[nodiscard]] std::size_t home(std::uint64_t key) const noexcept;
    void place(std::uint64_t key, std::uint32_t value) noexcept; // the caller made room
    void grow();

    std::vector<slot> slots_;
    std::size_t size_ = 0;
    unsigned shift_ = 64;
};

} // namespace detail

class match_engine final : public match_backend {
public:
    std::optional<match_result> post(const posted_recv& recv) override;
    std::optional<match_result> arrive(const arrived_msg& msg) override;
    std::optional<arrived_msg> peek(source_t source, std::uint64_t tag, std::uint64_t ignore,
        std::optional<std::uint64_t> claim_cookie = std::nullopt) override;
    std::optional<arrived_msg> claim(std::uint64_t claim_cookie) override;
    bool cancel(std::uint64_t recv_cookie) override;
    bool remove_posted(std::uint64_t recv_cookie) override;
    std::vector<posted_recv> fail_source(source_t source) override;
    void renumber_unexpected(const std::vector<std::uint64_t>& msg_cookies, source_t source) override;
    [[nodiscard]] std::size_t posted_depth() const noexcept override { return posted_count_; }
    [[nodiscard]] std::size_t unexpected_depth() const noexcept override { return unexpected_count_; }

private:
    struct posted_node {
        posted_recv recv;
        std::uint64_t seq = 0; // posting order
        detail::links order; // in its bin's posted list or the wildcard list; next chains the free list
        std::uint32_t bin = detail::nil; // nil: the wildcard list
    };
    struct unexpected_node {
        arrived_msg msg;
        std::uint64_t seq = 0; // arrival order
        detail::links in_bin; // next chains the free list
        detail::links in_arrival; // the arrival list, or the claimed list once reserved
        std::uint32_t bin = detail::nil;
        std::uint64_t claim_cookie = 0;
        bool claimed = false;
    };
    // What one source has queued on both sides.
    struct source_bin {
        detail::chain posted;
        detail::chain unexpected;
    };

    [[nodiscard]] std::uint32_t find_bin(source_t source) const noexcept;
    std::uint32_t bin_for(source_t source);
    [[nodiscard]] std::uint32_t first_unexpected(
        source_t source, std::uint64_t tag, std::uint64_t ignore) const noexcept;
    [[nodiscard]] std::uint32_t first_posted(source_t source, std::uint64_t tag) const noexcept;
    void queue_posted(const posted_recv& recv);
    void drop_posted(std::uint32_t i) noexcept;
    void unlink_unexpected(std::uint32_t i) noexcept;
    void free_unexpected(std::uint32_t i) noexcept;
    std::uint32_t new_posted();
    std::uint32_t new_unexpected();

    std::vector<posted_node> posted_;
    std::vector<unexpected_node> unexpected_;
    std::uint32_t free_posted_ = detail::nil;
    std::uint32_t free_unexpected_ = detail::nil;

    std::vector<source_bin> bins_;
    detail::index_table bin_of_source_;
    detail::chain wildcard_; // posted receives for any_source
    detail::chain arrival_; // unexpected, unclaimed messages of every source
    detail::chain claimed_; // reserved messages, in the order they were reserved
    detail::index_table posted_by_cookie_;
    detail::index_table claimed_by_cookie_;

    std::uint64_t next_seq_ = 0;
    std::size_t posted_count_ = 0;
    std::size_t unexpected_count_ = 0;
};

} // namespace hashi::match
