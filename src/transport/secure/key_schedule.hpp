// SPDX-License-Identifier: BSD-3-Clause
// Per-connection secrets for the protected byte streams, derived from the
// job's key and what binds the connection (for ranks: the handshake's
// transcript, which holds both addresses and both sides' fresh nonces; for
// relay trunks: whatever their handshake proved, as bytes).
//
// HKDF-SHA256 (RFC 5869) with the job key as input keying material, a fixed
// salt, and info = label || 0 || binding. Both sides know the key and the
// binding after the handshake, so both derive the same secret without
// sending it; fresh nonces make every connection's secret new; a label per
// use makes the TLS PSK and the two integrity keys unrelated to each other
// and to the handshake MACs (which are HMACs of other labels).
#pragma once

#include "transport/engine/job_key.hpp"

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace hashi::secure {

inline constexpr std::size_t secret_size = 32;
using secret = std::array<std::uint8_t, secret_size>;

// One label per use of a derived secret. Changing a label changes the wire
// protocol: both sides must agree.
inline constexpr std::string_view tls_psk_label = "hashi stream v1 tls psk";
inline constexpr std::string_view connector_to_acceptor_label = "hashi stream v1 integrity connector->acceptor";
inline constexpr std::string_view acceptor_to_connector_label = "hashi stream v1 integrity acceptor->connector";

// The transcript as bytes for `binding`: job id, both addresses, both nonces
// and the acceptor's verdict, fixed-length fields in a fixed order.
std::vector<std::uint8_t> transcript_binding(const fi::handshake_transcript& t);

// HKDF-SHA256(key, binding, label) -> 32 bytes. `key` is the shared
// secret both sides proved they hold (the job key's 32 bytes for ranks; a
// trunk's secret of any length for relays). Throws std::runtime_error only
// if OpenSSL itself fails (no HKDF in the loaded provider).
secret derive_secret(std::span<const std::uint8_t> key, std::span<const std::uint8_t> binding,
    std::string_view label);

} // namespace hashi::secure
