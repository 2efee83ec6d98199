// SPDX-License-Identifier: BSD-3-Clause
// Authentication of the IMPI startup (AUTH command). Three methods:
// IMPI_AUTH_NONE and IMPI_AUTH_KEY from the IMPI standard, which a user has
// to switch on explicitly because they prove nothing (KEY sends a 64-bit
// key in the clear), and Hashi's challenge-response: both sides prove they
// hold the job's secret with HMAC-SHA256 over two fresh nonces, so the
// secret never crosses the wire and a recorded exchange cannot be replayed.
// Where credentials come from (flags, environment, files) is decided here
// too, so impi-server and mpiexec read them the same way.
#pragma once

#include "wire.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

namespace hashi::impi {

namespace auth_method {
constexpr std::int32_t none = 0; // IMPI_AUTH_NONE
constexpr std::int32_t key = 1; // IMPI_AUTH_KEY
constexpr std::int32_t hashi_hmac = 16; // Hashi: bit 16 of the client's mask
} // namespace auth_method

std::string method_name(std::int32_t method);

constexpr std::size_t nonce_size = 32;
constexpr std::size_t mac_size = 32;
constexpr std::size_t min_secret_size = 16;
constexpr std::size_t max_secret_size = 4096;
using Nonce = std::array<std::uint8_t, nonce_size>;
using Mac = std::array<std::uint8_t, mac_size>;

struct Credentials {
    std::optional<std::string> secret; // enables the Hashi method
    std::optional<std::uint64_t> key; // enables IMPI_AUTH_KEY
    bool allow_none = false; // enables IMPI_AUTH_NONE
    // The client's AUTH mask: bit i set for method i.
    [[nodiscard]] std::uint32_t mask() const;
    [[nodiscard]] bool any() const { return secret || key || allow_none; }
};

// The strongest method in both the client's mask and the server's
// credentials: Hashi's, then KEY, then NONE.
std::optional<std::int32_t> choose_method(std::uint32_t client_mask, const Credentials& server);

// Methods named in a mask, for messages ("Hashi HMAC-SHA256, IMPI_AUTH_KEY").
std::string describe_mask(std::uint32_t mask);

Nonce random_nonce(); // from the kernel; throws std::runtime_error if it cannot
Mac client_proof(const std::string& secret, const Nonce& server_nonce, const Nonce& client_nonce);
Mac server_proof(const std::string& secret, const Nonce& server_nonce, const Nonce& client_nonce);
// Constant-time comparison, so a wrong guess learns nothing from timing.
bool same_mac(ByteView a, ByteView b);

class CredentialError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// What the command line said; the environment fills what it left out.
struct CredentialFlags {
    std::optional<std::string> secret; // -impi-secret S (visible in ps: discouraged)
    std::optional<std::string> secret_file; // -impi-secret-file FILE
    std::optional<std::string> key; // -impi-key N (decimal)
    bool enable_key = false; // -impi-auth-key
    bool enable_none = false; // -impi-auth-none
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// Secret: -impi-secret-file, -impi-secret, then HASHI_IMPI_SECRET_FILE,
// HASHI_IMPI_SECRET. Key (only with -impi-auth-key): -impi-key, then
// IMPI_AUTH_KEY as LAM and GridMPI read it. Throws CredentialError saying
// what is wrong and what to do, also when no method is left at all.
Credentials resolve_credentials(const CredentialFlags& flags, const EnvLookup& env);

// Reads a secret file: at most max_secret_size bytes, trailing newlines
// dropped, at least min_secret_size bytes left; refuses a file other users
// can read, as ssh does with keys.
std::string read_secret_file(const std::string& path);

} // namespace hashi::impi
