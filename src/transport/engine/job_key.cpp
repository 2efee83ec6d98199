// SPDX-License-Identifier: BSD-3-Clause
#include "transport/engine/job_key.hpp"

#include "transport/wire/byte_order.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <sys/random.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace hashi::fi {

namespace {

void random_bytes(std::uint8_t* p, std::size_t n)
{
    while (n > 0) {
        const ssize_t got = ::getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
        }
        p += got;
        n -= static_cast<std::size_t>(got);
    }
}

int hex_digit(char c) noexcept
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

std::vector<std::uint8_t> transcript_bytes(const handshake_transcript& t)
{
    std::vector<std::uint8_t> b(8 + 2 * t.connector.size() + 2 * wire::nonce_size + 4 + 1);
    std::uint8_t* p = b.data();
    wire::put(p, t.job_id, 8);
    p += 8;
    std::memcpy(p, t.connector.data(), t.connector.size());
    p += t.connector.size();
    std::memcpy(p, t.acceptor.data(), t.acceptor.size());
    p += t.acceptor.size();
    std::memcpy(p, t.connector_nonce.data(), wire::nonce_size);
    p += wire::nonce_size;
    std::memcpy(p, t.acceptor_nonce.data(), wire::nonce_size);
    p += wire::nonce_size;
    wire::put(p, static_cast<std::uint32_t>(t.status), 4);
    p += 4;
    *p = t.lane;
    return b;
}

} // namespace

std::optional<job_key> job_key::from_hex(std::string_view hex)
{
    if (hex.size() != 2 * size)
        return std::nullopt;
    job_key k;
    for (std::size_t i = 0; i < size; ++i) {
        const int hi = hex_digit(hex[2 * i]);
        const int lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return std::nullopt;
        k.key_[i] = static_cast<std::uint8_t>(hi << 4 | lo);
    }
    return k;
}

job_key job_key::random()
{
    job_key k;
    random_bytes(k.key_.data(), k.key_.size());
    k.random_ = true;
    return k;
}

std::optional<job_key> job_key::from_environment(std::string& error)
{
    const char* v = std::getenv(variable);
    if (v == nullptr)
        return random();
    auto k = from_hex(v);
    if (!k)
        // The value is a secret: say what is wrong with it, never echo it.
        error = std::string(variable) + " is set but is not 64 hexadecimal digits (" + std::to_string(std::strlen(v)) +
            " characters); it is the job's key, which Hashi's mpiexec sets: start the job with mpiexec, or unset it";
    return k;
}

wire::mac job_key::sign(std::string_view label, std::span<const std::uint8_t> data) const
{
    wire::mac out {};
    // HMAC over label || data without copying them together. Labels are
    // fixed strings and what follows each has a fixed length, so no two
    // (label, data) pairs give the same input.
    EVP_MAC* m = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    EVP_MAC_CTX* mc = m != nullptr ? EVP_MAC_CTX_new(m) : nullptr;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string("digest", const_cast<char*>("SHA256"), 0), OSSL_PARAM_construct_end()};
    std::size_t outl = 0;
    const bool ok = mc != nullptr && EVP_MAC_init(mc, key_.data(), key_.size(), params) == 1 &&
        EVP_MAC_update(mc, reinterpret_cast<const unsigned char*>(label.data()), label.size()) == 1 &&
        EVP_MAC_update(mc, data.data(), data.size()) == 1 && EVP_MAC_final(mc, out.data(), &outl, out.size()) == 1 &&
        outl == out.size();
    EVP_MAC_CTX_free(mc);
    EVP_MAC_free(m);
    if (!ok)
        throw std::runtime_error("HMAC-SHA256 failed in OpenSSL");
    return out;
}

wire::mac job_key::acceptor_mac(const handshake_transcript& t) const
{
    return sign("hashi handshake v3 acceptor", transcript_bytes(t));
}

wire::mac job_key::connector_mac(const handshake_transcript& t) const
{
    return sign("hashi handshake v3 connector", transcript_bytes(t));
}

wire::mac job_key::relay_route_mac(const relay_route_transcript& t) const
{
    return sign(wire::route_relay_mac_label, wire::route_mac_input(t));
}

wire::mac job_key::rank_route_mac(const relay_route_transcript& t) const
{
    return sign(wire::route_rank_mac_label, wire::route_mac_input(t));
}

bool same_mac(const wire::mac& a, const wire::mac& b) noexcept
{
    return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

wire::nonce fresh_nonce()
{
    wire::nonce n {};
    random_bytes(n.data(), n.size());
    return n;
}

} // namespace hashi::fi
