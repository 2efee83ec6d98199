// SPDX-License-Identifier: BSD-3-Clause
// What impi-server lets connections that have not joined yet hold: a
// deadline to authenticate and join, a per-source limit, and a total
// bound where the newcomer evicts someone instead of being refused. Pure
// bookkeeping (no sockets), so the policy is unit-tested on its own; the
// server closes whatever this class tells it to.
//
// The policy, and what it means against a stranger who floods the port:
//
// - Deadline: a connection that has not joined within `deadline` (5 s by
//   default) is closed. A real mpiexec needs two round trips; anything
//   slower is an idle or trickling stranger (slowloris).
// - Per source address: at most `per_source` connections of one address
//   are unauthenticated at a time; a newer one from the same address
//   evicts that address's oldest. One address can therefore only churn its
//   own slots, never push out a connection of another address.
// - Total: at most `total` unauthenticated connections. When full, the
//   newcomer is admitted and the oldest unauthenticated connection of the
//   address holding the most of them, the newcomer included, is evicted
//   (oldest first among equals). Refusing the newcomer instead would let
//   a stranger who holds `total` idle connections lock out every real
//   client until they time out, and again after each refill.
// - Authenticated connections (Hashi's HMAC or the IMPI key proved) are
//   never evicted: only their deadline to join applies. With
//   -impi-auth-none anyone "authenticates", so those stay evictable.
//
// What an attacker can and cannot starve: to push out a real client's
// connection, it must make that client's address the busiest one, i.e.
// hold connections from `total` different addresses (one each, so that no
// address is busier than the client's), and open `total` new ones, each
// from an address that holds no other at that moment, within the one or
// two round trips the client needs to authenticate, again on every retry.
// A single host, or a few, cannot: they only evict their own connections.
// A client behind the same address as the attacker (NAT) shares that
// address's `per_source` slots and is evicted when the attacker opens
// `per_source` connections within its handshake; mpiexec retries with
// backoff until its -impi-timeout. What stays bounded regardless: file
// descriptors and memory (`total` connections, each allowed only an AUTH
// frame of at most 64 bytes before it authenticates) and the log (see
// log_limit.hpp). SYN floods are the kernel's (syncookies), before accept.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hashi::impi {

struct AdmissionLimits {
    std::chrono::milliseconds deadline {5000}; // to authenticate and join
    std::size_t per_source = 8; // unauthenticated connections of one address
    std::size_t total = 64; // unauthenticated connections in all
};

class Admission {
public:
    using Clock = std::chrono::steady_clock;
    using Id = std::uint64_t;

    explicit Admission(AdmissionLimits limits);

    // Why a connection has to go.
    enum class Reason { same_source, full, deadline };
    struct Eviction {
        Id id;
        Reason reason;
    };

    // A new connection from `source` (its address without the port) at
    // `now`: admits it and returns the connections to close to make room.
    [[nodiscard]] std::vector<Eviction> admit(Id id, const std::string& source, Clock::time_point now);
    // It proved it belongs to the job: no longer evictable, still bound by
    // its deadline to join.
    void authenticated(Id id);
    // It joined, or it is gone: forget it.
    void remove(Id id);
    // Connections past their deadline at `now` (forgotten here).
    [[nodiscard]] std::vector<Eviction> expired(Clock::time_point now);
    // The earliest deadline, if anyone is waiting (for the poll timeout).
    [[nodiscard]] Clock::time_point next_deadline() const;

    [[nodiscard]] std::size_t unauthenticated() const;
    [[nodiscard]] std::size_t unauthenticated_from(const std::string& source) const;
    [[nodiscard]] std::size_t tracked() const { return entries_.size(); }
    [[nodiscard]] const AdmissionLimits& limits() const { return limits_; }

private:
    struct Entry {
        Id id;
        std::string source;
        Clock::time_point deadline;
        bool authenticated = false;
    };
    // The oldest unauthenticated entry from `source` (all sources when
    // empty) or end().
    std::vector<Entry>::iterator oldest_unauthenticated(const std::string* source);
    std::vector<Entry>::iterator busiest_oldest();

    AdmissionLimits limits_;
    std::vector<Entry> entries_; // in order of arrival
};

[[nodiscard]] const char* reason_text(Admission::Reason r);

} // namespace hashi::impi
