// SPDX-License-Identifier: BSD-3-Clause
// The job's secret key and the message authentication built on it.
//
// Every process of a job holds the same 32-byte key, handed to it by
// mpiexec in HASHI_JOB_KEY (64 hex digits; derived from the federation's
// secret in a federated job, so every cluster has the same). Two endpoints
// accept each other only after each proved it holds the key (the handshake,
// path/handshake.cpp); the key itself never leaves the process.
//
// A process started without mpiexec (an MPI singleton) has no key: it draws
// a random one, so that nobody else can connect to it.
#pragma once

#include "transport/address.hpp"
#include "transport/wire/handshake.hpp"
#include "transport/wire/relay_route.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace hashi::fi {

// What both sides' handshake MACs cover: both addresses, both fresh nonces,
// the acceptor's verdict, the lane and the job id. A MAC made for one connection, one
// direction or one pair of addresses is worth nothing on another.
struct handshake_transcript {
    std::uint64_t job_id = 0;
    endpoint_address::bytes connector {};
    endpoint_address::bytes acceptor {};
    wire::nonce connector_nonce {};
    wire::nonce acceptor_nonce {};
    wire::hello_status status = wire::hello_status::ok;
    std::uint8_t lane = 0; // the hello's: which of the peer's paths this is
};

// What the two MACs of the relay route handshake cover (wire/relay_route.hpp):
// the job id, the rank's card, the card it wants, its nonce and the relay's.
using relay_route_transcript = wire::route_transcript;

class job_key {
public:
    static constexpr std::size_t size = 32;
    static constexpr const char* variable = "HASHI_JOB_KEY";

    // From HASHI_JOB_KEY; a random key when it is unset. A malformed value
    // is an error (in `error`, naming the variable and what is wrong).
    static std::optional<job_key> from_environment(std::string& error);
    // From 64 hex digits (either case); nullopt if that is not what `hex` is.
    static std::optional<job_key> from_hex(std::string_view hex);
    static job_key random();

    // True when no key was given (a process started without mpiexec).
    bool is_random() const noexcept { return random_; }

    // HMAC-SHA256 under the key of `label` (which says what is signed, so
    // a MAC for one purpose never passes for another) followed by `data`.
    wire::mac sign(std::string_view label, std::span<const std::uint8_t> data) const;

    wire::mac acceptor_mac(const handshake_transcript& t) const;
    wire::mac connector_mac(const handshake_transcript& t) const;

    // The relay route (path/relay_dial.cpp): the relay proves it holds the
    // key with relay_route_mac, then the rank with rank_route_mac; the two
    // labels differ, so neither MAC passes for the other.
    wire::mac relay_route_mac(const relay_route_transcript& t) const;
    wire::mac rank_route_mac(const relay_route_transcript& t) const;

    // The key itself, for the liveness thread's heartbeat MACs
    // (wire/heartbeat.hpp), which that thread computes on its own copy.
    const std::array<std::uint8_t, size>& material() const noexcept { return key_; }

private:
    std::array<std::uint8_t, size> key_ {};
    bool random_ = false;
};

// Compares two MACs in constant time.
bool same_mac(const wire::mac& a, const wire::mac& b) noexcept;

// A fresh random nonce (the kernel's random generator).
wire::nonce fresh_nonce();

} // namespace hashi::fi
