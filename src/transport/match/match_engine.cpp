// SPDX-License-Identifier: BSD-3-Clause
#include "transport/match/match_engine.hpp"

#include <algorithm>
#include <bit>
#include <new>

namespace hashi::match {

using detail::chain;
using detail::links;
using detail::nil;

namespace {

// The lists link pool entries by index; `L` says which of a node's link
// pairs a list uses, so one node can be in two lists at once.
template <auto L, class Node> void push_back(std::vector<Node>& pool, chain& c, std::uint32_t i) noexcept
{
    links& l = pool[i].*L;
    l.prev = c.tail;
    l.next = nil;
    if (c.tail != nil) {
        (pool[c.tail].*L).next = i;
    } else {
        c.head = i;
    }
    c.tail = i;
}

// Puts `i` right after `pos`, or first when pos is nil.
template <auto L, class Node>
void insert_after(std::vector<Node>& pool, chain& c, std::uint32_t pos, std::uint32_t i) noexcept
{
    links& l = pool[i].*L;
    l.prev = pos;
    l.next = pos == nil ? c.head : (pool[pos].*L).next;
    if (l.next != nil) {
        (pool[l.next].*L).prev = i;
    } else {
        c.tail = i;
    }
    if (pos != nil) {
        (pool[pos].*L).next = i;
    } else {
        c.head = i;
    }
}

template <auto L, class Node> void unlink(std::vector<Node>& pool, chain& c, std::uint32_t i) noexcept
{
    links& l = pool[i].*L;
    if (l.prev != nil) {
        (pool[l.prev].*L).next = l.next;
    } else {
        c.head = l.next;
    }
    if (l.next != nil) {
        (pool[l.next].*L).prev = l.prev;
    } else {
        c.tail = l.prev;
    }
    l = links {};
}

// Takes an entry from a pool's free list (chained through `L`.next) or
// grows the pool. Indices must stay below nil.
template <auto L, class Node> std::uint32_t take_node(std::vector<Node>& pool, std::uint32_t& free_list)
{
    if (free_list != nil) {
        std::uint32_t i = free_list;
        free_list = (pool[i].*L).next;
        pool[i] = Node {};
        return i;
    }
    if (pool.size() >= nil) {
        throw std::bad_alloc();
    }
    pool.emplace_back();
    return static_cast<std::uint32_t>(pool.size() - 1);
}

template <auto L, class Node>
void give_node(std::vector<Node>& pool, std::uint32_t& free_list, std::uint32_t i) noexcept
{
    (pool[i].*L).next = free_list;
    free_list = i;
}

bool tag_accepted(const posted_recv& r, std::uint64_t tag) noexcept
{
    return ((r.tag ^ tag) & ~r.ignore) == 0;
}

} // namespace

// index_table ////////////////////////////////////////////////////////////////

// Fibonacci hashing: the top bits of key * 2^64/phi, so consecutive keys
// (AV indices, pointers 64 bytes apart) spread over the table.
std::size_t detail::index_table::home(std::uint64_t key) const noexcept
{
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
}

std::uint32_t detail::index_table::find(std::uint64_t key) const noexcept
{
    if (slots_.empty()) {
        return nil;
    }
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = home(key); slots_[i].value != nil; i = (i + 1) & mask) {
        if (slots_[i].key == key) {
            return slots_[i].value;
        }
    }
    return nil;
}

void detail::index_table::insert(std::uint64_t key, std::uint32_t value)
{
    if ((size_ + 1) * 2 > slots_.size()) {
        grow();
    }
    place(key, value);
}

void detail::index_table::place(std::uint64_t key, std::uint32_t value) noexcept
{
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = home(key);
    while (slots_[i].value != nil) {
        i = (i + 1) & mask;
    }
    slots_[i] = slot {key, value};
    ++size_;
}

void detail::index_table::erase(std::uint64_t key, std::uint32_t value) noexcept
{
    if (slots_.empty()) {
        return;
    }
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = home(key);
    while (slots_[i].value != nil && !(slots_[i].key == key && slots_[i].value == value)) {
        i = (i + 1) & mask;
    }
    if (slots_[i].value == nil) {
        return;
    }
    // Backward shift: every later entry of the probe run whose home is not
    // cyclically in (hole, its slot] moves into the hole, so lookups never
    // meet a gap before their key.
    for (std::size_t j = (i + 1) & mask; slots_[j].value != nil; j = (j + 1) & mask) {
        const std::size_t k = home(slots_[j].key);
        const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            slots_[i] = slots_[j];
            i = j;
        }
    }
    slots_[i] = slot {};
    --size_;
}

void detail::index_table::grow()
{
    const std::size_t capacity = slots_.empty() ? 16 : slots_.size() * 2;
    std::vector<slot> old(capacity);
    old.swap(slots_);
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(capacity));
    size_ = 0;
    for (const slot& s : old) {
        if (s.value != nil) {
            place(s.key, s.value);
        }
    }
}

// match_engine: helpers //////////////////////////////////////////////////////

std::uint32_t match_engine::find_bin(source_t source) const noexcept
{
    return bin_of_source_.find(source);
}

std::uint32_t match_engine::bin_for(source_t source)
{
    std::uint32_t b = find_bin(source);
    if (b != nil) {
        return b;
    }
    if (bins_.size() >= nil) {
        throw std::bad_alloc();
    }
    // The table insert may throw; an unused bin at the end is harmless.
    bins_.emplace_back();
    b = static_cast<std::uint32_t>(bins_.size() - 1);
    bin_of_source_.insert(source, b);
    return b;
}

std::uint32_t match_engine::new_posted()
{
    return take_node<&posted_node::order>(posted_, free_posted_);
}

std::uint32_t match_engine::new_unexpected()
{
    return take_node<&unexpected_node::in_bin>(unexpected_, free_unexpected_);
}

// The first unexpected, unclaimed message in arrival order that a receive for
// (source, tag, ignore) accepts. A directed receive only needs its source's
// bin: O(U(source)); a wildcard one walks everything: O(U).
std::uint32_t match_engine::first_unexpected(source_t source, std::uint64_t tag, std::uint64_t ignore) const noexcept
{
    if (source == any_source) {
        for (std::uint32_t i = arrival_.head; i != nil; i = unexpected_[i].in_arrival.next) {
            if (accepts(source, tag, ignore, unexpected_[i].msg.source, unexpected_[i].msg.tag)) {
                return i;
            }
        }
        return nil;
    }
    const std::uint32_t b = find_bin(source);
    if (b == nil) {
        return nil;
    }
    for (std::uint32_t i = bins_[b].unexpected.head; i != nil; i = unexpected_[i].in_bin.next) {
        if (accepts(source, tag, ignore, unexpected_[i].msg.source, unexpected_[i].msg.tag)) {
            return i;
        }
    }
    return nil;
}

// The first posted receive in posting order that accepts a message from
// `source` with `tag`: the first match in the source's bin, unless a wildcard
// receive posted earlier also matches. The wildcard scan stops at the bin
// match's sequence number: O(P(source) + W).
std::uint32_t match_engine::first_posted(source_t source, std::uint64_t tag) const noexcept
{
    std::uint32_t best = nil;
    std::uint64_t before = ~std::uint64_t {0};
    // A message from an unknown peer (any_source) only matches wildcards.
    if (source != any_source) {
        const std::uint32_t b = find_bin(source);
        if (b != nil) {
            for (std::uint32_t i = bins_[b].posted.head; i != nil; i = posted_[i].order.next) {
                if (tag_accepted(posted_[i].recv, tag)) {
                    best = i;
                    before = posted_[i].seq;
                    break;
                }
            }
        }
    }
    for (std::uint32_t i = wildcard_.head; i != nil && posted_[i].seq < before; i = posted_[i].order.next) {
        if (tag_accepted(posted_[i].recv, tag)) {
            return i;
        }
    }
    return best;
}

void match_engine::queue_posted(const posted_recv& recv)
{
    const std::uint32_t b = recv.source == any_source ? nil : bin_for(recv.source);
    const std::uint32_t i = new_posted();
    try {
        posted_by_cookie_.insert(recv.cookie, i);
    } catch (...) {
        give_node<&posted_node::order>(posted_, free_posted_, i);
        throw;
    }
    posted_node& n = posted_[i];
    n.recv = recv;
    n.seq = next_seq_++;
    n.bin = b;
    push_back<&posted_node::order>(posted_, b == nil ? wildcard_ : bins_[b].posted, i);
    ++posted_count_;
}

void match_engine::drop_posted(std::uint32_t i) noexcept
{
    posted_node& n = posted_[i];
    unlink<&posted_node::order>(posted_, n.bin == nil ? wildcard_ : bins_[n.bin].posted, i);
    posted_by_cookie_.erase(n.recv.cookie, i);
    give_node<&posted_node::order>(posted_, free_posted_, i);
    --posted_count_;
}

void match_engine::unlink_unexpected(std::uint32_t i) noexcept
{
    unexpected_node& n = unexpected_[i];
    if (n.claimed) {
        unlink<&unexpected_node::in_arrival>(unexpected_, claimed_, i);
        return;
    }
    unlink<&unexpected_node::in_bin>(unexpected_, bins_[n.bin].unexpected, i);
    unlink<&unexpected_node::in_arrival>(unexpected_, arrival_, i);
}

void match_engine::free_unexpected(std::uint32_t i) noexcept
{
    give_node<&unexpected_node::in_bin>(unexpected_, free_unexpected_, i);
    --unexpected_count_;
}

// match_engine: the contract /////////////////////////////////////////////////

std::optional<match_result> match_engine::post(const posted_recv& recv)
{
    const std::uint32_t i = first_unexpected(recv.source, recv.tag, recv.ignore);
    if (i == nil) {
        queue_posted(recv);
        return std::nullopt;
    }
    // Queue a persistent receive before taking the message, so that a
    // bad_alloc leaves the message where it was.
    if (recv.persistent) {
        queue_posted(recv);
    }
    const arrived_msg& msg = unexpected_[i].msg;
    match_result r {recv, msg, msg.length > recv.capacity};
    unlink_unexpected(i);
    free_unexpected(i);
    return r;
}

std::optional<match_result> match_engine::arrive(const arrived_msg& msg)
{
    const std::uint32_t p = first_posted(msg.source, msg.tag);
    if (p != nil) {
        match_result r {posted_[p].recv, msg, msg.length > posted_[p].recv.capacity};
        if (!r.recv.persistent) {
            drop_posted(p);
        }
        return r;
    }
    const std::uint32_t b = bin_for(msg.source);
    const std::uint32_t i = new_unexpected();
    unexpected_node& n = unexpected_[i];
    n.msg = msg;
    n.seq = next_seq_++;
    n.bin = b;
    push_back<&unexpected_node::in_bin>(unexpected_, bins_[b].unexpected, i);
    push_back<&unexpected_node::in_arrival>(unexpected_, arrival_, i);
    ++unexpected_count_;
    return std::nullopt;
}

std::optional<arrived_msg> match_engine::peek(
    source_t source, std::uint64_t tag, std::uint64_t ignore, std::optional<std::uint64_t> claim_cookie)
{
    const std::uint32_t i = first_unexpected(source, tag, ignore);
    if (i == nil) {
        return std::nullopt;
    }
    if (claim_cookie && claimed_by_cookie_.find(*claim_cookie) == nil) {
        claimed_by_cookie_.insert(*claim_cookie, i);
        unlink_unexpected(i);
        unexpected_node& n = unexpected_[i];
        n.claimed = true;
        n.claim_cookie = *claim_cookie;
        push_back<&unexpected_node::in_arrival>(unexpected_, claimed_, i);
    }
    return unexpected_[i].msg;
}

std::optional<arrived_msg> match_engine::claim(std::uint64_t claim_cookie)
{
    const std::uint32_t i = claimed_by_cookie_.find(claim_cookie);
    if (i == nil) {
        return std::nullopt;
    }
    claimed_by_cookie_.erase(claim_cookie, i);
    const arrived_msg msg = unexpected_[i].msg;
    unlink_unexpected(i);
    free_unexpected(i);
    return msg;
}

bool match_engine::cancel(std::uint64_t recv_cookie)
{
    const std::uint32_t i = posted_by_cookie_.find(recv_cookie);
    if (i == nil) {
        return false;
    }
    drop_posted(i);
    return true;
}

bool match_engine::remove_posted(std::uint64_t recv_cookie)
{
    return cancel(recv_cookie);
}

std::vector<posted_recv> match_engine::fail_source(source_t source)
{
    std::vector<posted_recv> failed;
    const std::uint32_t b = source == any_source ? nil : find_bin(source);
    if (b == nil) {
        return failed;
    }
    // Size the answer first: once receives are dropped, nothing may throw.
    std::size_t n = 0;
    for (std::uint32_t i = bins_[b].posted.head; i != nil; i = posted_[i].order.next) {
        ++n;
    }
    failed.reserve(n);
    while (bins_[b].posted.head != nil) {
        const std::uint32_t i = bins_[b].posted.head;
        failed.push_back(posted_[i].recv);
        drop_posted(i);
    }
    return failed;
}

void match_engine::renumber_unexpected(const std::vector<std::uint64_t>& msg_cookies, source_t source)
{
    if (source == any_source || msg_cookies.empty()) {
        return;
    }
    const std::uint32_t from = find_bin(any_source);
    std::vector<std::uint64_t> wanted(msg_cookies);
    std::sort(wanted.begin(), wanted.end());
    auto is_wanted = [&](std::uint64_t cookie) { return std::binary_search(wanted.begin(), wanted.end(), cookie); };

    if (from != nil && bins_[from].unexpected.head != nil) {
        const std::uint32_t to = bin_for(source);
        for (std::uint32_t i = bins_[from].unexpected.head; i != nil;) {
            const std::uint32_t next = unexpected_[i].in_bin.next;
            if (is_wanted(unexpected_[i].msg.cookie)) {
                unlink<&unexpected_node::in_bin>(unexpected_, bins_[from].unexpected, i);
                unexpected_[i].msg.source = source;
                unexpected_[i].bin = to;
                // Messages that came after the peer was known may already
                // be in its bin: keep the bin in arrival order.
                std::uint32_t pos = bins_[to].unexpected.tail;
                while (pos != nil && unexpected_[pos].seq > unexpected_[i].seq) {
                    pos = unexpected_[pos].in_bin.prev;
                }
                insert_after<&unexpected_node::in_bin>(unexpected_, bins_[to].unexpected, pos, i);
            }
            i = next;
        }
    }
    for (std::uint32_t i = claimed_.head; i != nil; i = unexpected_[i].in_arrival.next) {
        if (unexpected_[i].msg.source == any_source && is_wanted(unexpected_[i].msg.cookie)) {
            unexpected_[i].msg.source = source;
        }
    }
}

} // namespace hashi::match
