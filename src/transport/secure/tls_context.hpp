// SPDX-License-Identifier: BSD-3-Clause
// How a TLS stream's OpenSSL context is set up: TLS 1.3 only, no
// certificates, one external PSK per connection (derived from the job key
// and the handshake, key_schedule.hpp), no session tickets, no
// renegotiation, kTLS allowed.
//
// Key exchange: with forward_secrecy, psk_dhe_ke over X25519 (a recorded
// connection stays secret even if the job key leaks later); without, psk_ke.
// OpenSSL 3.0's client always offers psk_dhe_ke with a key share, and its
// server takes the key share whenever it supports the group; so without
// forward secrecy the server lists a group the client does not offer
// (ffdhe2048 against X25519), which leaves psk_ke as the only common mode
// (the server then neither uses the share nor asks for another).
#pragma once

#include "transport/secure/byte_stream.hpp"
#include "transport/secure/key_schedule.hpp"

#include <cstdint>
#include <string>

struct ssl_st;
struct ssl_ctx_st;

namespace hashi::secure {

struct tls_options {
    std::string ciphersuite = "TLS_AES_128_GCM_SHA256"; // a TLS 1.3 suite with SHA-256 (the PSK's hash)
    bool forward_secrecy = true;
    // A KeyUpdate after this many records sent (2^24 x 16 KiB = 256 GiB),
    // within the AES-GCM limit of RFC 8446 section 5.5.
    std::uint64_t key_update_records = std::uint64_t {1} << 24;
    // Let the kernel do the record crypto where it can (kTLS; OpenSSL 3.0:
    // sending only). Not measured here (no kTLS on the development host):
    // off if a kTLS host's figures say so (bench/secure, variant sockbio).
    bool kernel_tls = true;
    // For tests on kernels without kTLS: OpenSSL's socket BIO (and the
    // SIGPIPE guard) as with kTLS, the record crypto still in user space.
    bool openssl_socket_bio = false;
};

// The context for one role and set of options, made once and shared by all
// streams with the same (thread-safe); nullptr with `error` if OpenSSL
// refuses the options.
ssl_ctx_st* tls_context(stream_role role, const tls_options& opt, std::string& error);

// What the PSK callbacks need, attached to each SSL object with
// SSL_set_app_data; must outlive the handshake.
struct tls_psk {
    secret key {};
    std::string ciphersuite;
};

inline constexpr const char* tls_psk_identity = "hashi-stream-v1";

// The first error in OpenSSL's queue (which it then clears), or `fallback`.
std::string openssl_error(const char* fallback);

} // namespace hashi::secure
