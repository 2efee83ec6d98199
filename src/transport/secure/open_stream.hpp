// SPDX-License-Identifier: BSD-3-Clause
// The one call the path makes once a connection's authenticated handshake
// is done: the byte stream for the protection asked for, with its secrets
// derived from the job key and what binds the connection.
//
//   auto s = secure::open_stream(fd, level, secure::stream_role::connector,
//                                key.material(), secure::transcript_binding(t), error);
//
// Relay trunks call it the same way with their own secret (any length) and
// binding bytes (what their handshake proved: both nonces, both names).
#pragma once

#include "transport/secure/byte_stream.hpp"
#include "transport/secure/protection.hpp"
#include "transport/secure/record_mac.hpp"
#include "transport/secure/tls_context.hpp"

#include <memory>
#include <span>
#include <string>

namespace hashi::secure {

// Defaults from bench/secure (bench/secure/README.md has the figures).
struct stream_options {
    mac_kind integrity_mac = mac_kind::gmac;
    tls_options tls {};
};

// nullptr with `error` saying why when OpenSSL cannot set the stream up.
// The contract of byte_stream.hpp applies (connected non-blocking fd with
// nothing past the handshake read; the stream never closes it).
std::unique_ptr<byte_stream> open_stream(int fd, protection level, stream_role role,
    std::span<const std::uint8_t> key, std::span<const std::uint8_t> binding, std::string& error,
    const stream_options& opt = {});

} // namespace hashi::secure
