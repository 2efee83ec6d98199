// SPDX-License-Identifier: BSD-3-Clause
#include "transport/secure/tls_context.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

namespace hashi::secure {

namespace {

// A fresh session holding the PSK as its resumption master key, as
// SSL_set_psk_use_session_callback(3) describes for external PSKs.
SSL_SESSION* psk_session(SSL* ssl, const tls_psk& psk)
{
    const SSL_CIPHER* cipher = nullptr;
    STACK_OF(SSL_CIPHER)* all = SSL_get_ciphers(ssl);
    for (int i = 0; all != nullptr && i < sk_SSL_CIPHER_num(all); ++i)
        if (psk.ciphersuite == SSL_CIPHER_standard_name(sk_SSL_CIPHER_value(all, i)))
            cipher = sk_SSL_CIPHER_value(all, i);
    SSL_SESSION* s = cipher != nullptr ? SSL_SESSION_new() : nullptr;
    if (s == nullptr)
        return nullptr;
    if (SSL_SESSION_set1_master_key(s, psk.key.data(), psk.key.size()) != 1 || SSL_SESSION_set_cipher(s, cipher) != 1 ||
        SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION) != 1) {
        SSL_SESSION_free(s);
        return nullptr;
    }
    return s;
}

int use_session(SSL* ssl, const EVP_MD* md, const unsigned char** id, std::size_t* idlen, SSL_SESSION** sess)
{
    const auto* psk = static_cast<const tls_psk*>(SSL_get_app_data(ssl));
    *sess = psk != nullptr ? psk_session(ssl, *psk) : nullptr;
    if (*sess != nullptr && md != nullptr && md != SSL_CIPHER_get_handshake_digest(SSL_SESSION_get0_cipher(*sess))) {
        // A HelloRetryRequest chose another hash: this PSK cannot be used.
        SSL_SESSION_free(*sess);
        *sess = nullptr;
    }
    *id = reinterpret_cast<const unsigned char*>(tls_psk_identity);
    *idlen = std::strlen(tls_psk_identity);
    return 1;
}

int find_session(SSL* ssl, const unsigned char* id, std::size_t idlen, SSL_SESSION** sess)
{
    const auto* psk = static_cast<const tls_psk*>(SSL_get_app_data(ssl));
    const bool ours = idlen == std::strlen(tls_psk_identity) && std::memcmp(id, tls_psk_identity, idlen) == 0;
    // An unknown identity finds no session: with no certificate either, the
    // handshake fails.
    *sess = ours && psk != nullptr ? psk_session(ssl, *psk) : nullptr;
    return 1;
}

SSL_CTX* make_context(stream_role role, const tls_options& opt, std::string& error)
{
    SSL_CTX* ctx = SSL_CTX_new(role == stream_role::connector ? TLS_client_method() : TLS_server_method());
    if (ctx == nullptr) {
        error = openssl_error("SSL_CTX_new failed");
        return nullptr;
    }
    std::uint64_t options = SSL_OP_ENABLE_KTLS | SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION;
    if (!opt.forward_secrecy)
        options |= SSL_OP_ALLOW_NO_DHE_KEX;
    const char* groups = opt.forward_secrecy || role == stream_role::connector ? "X25519" : "ffdhe2048";
    const bool ok = SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) == 1 &&
        SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) == 1 &&
        SSL_CTX_set_ciphersuites(ctx, opt.ciphersuite.c_str()) == 1 && SSL_CTX_set1_groups_list(ctx, groups) == 1 &&
        SSL_CTX_set_num_tickets(ctx, 0) == 1;
    if (!ok) {
        error = "TLS cipher suite '" + opt.ciphersuite + "' or group '" + groups +
            "' not accepted by OpenSSL (TLS 1.3 suites: TLS_AES_128_GCM_SHA256, TLS_CHACHA20_POLY1305_SHA256): " +
            openssl_error("");
        SSL_CTX_free(ctx);
        return nullptr;
    }
    SSL_CTX_set_options(ctx, options);
    // One record per SSL_write, retried with the same bytes (at another
    // address once staged): see tls_stream::writev.
    SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    // Read ahead: one recv brings several records instead of two recvs
    // (header, body) per record; SSL_has_pending tells what is buffered.
    SSL_CTX_set_read_ahead(ctx, 1);
    SSL_CTX_set_default_read_buffer_len(ctx, 4 * (SSL3_RT_MAX_PLAIN_LENGTH + SSL3_RT_MAX_TLS13_ENCRYPTED_OVERHEAD));
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    if (role == stream_role::connector)
        SSL_CTX_set_psk_use_session_callback(ctx, use_session);
    else
        SSL_CTX_set_psk_find_session_callback(ctx, find_session);
    return ctx;
}

} // namespace

std::string openssl_error(const char* fallback)
{
    const unsigned long e = ERR_get_error();
    ERR_clear_error();
    if (e == 0)
        return fallback;
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    return buf;
}

SSL_CTX* tls_context(stream_role role, const tls_options& opt, std::string& error)
{
    static std::mutex lock;
    // Never destroyed: the contexts live as long as the process, and stay
    // reachable for leak checkers after static destructors have run.
    static auto* const made = new std::map<std::tuple<stream_role, std::string, bool>, SSL_CTX*>;
    const std::lock_guard<std::mutex> hold(lock);
    SSL_CTX*& ctx = (*made)[{role, opt.ciphersuite, opt.forward_secrecy}];
    if (ctx == nullptr)
        ctx = make_context(role, opt, error);
    return ctx;
}

} // namespace hashi::secure
