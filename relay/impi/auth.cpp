// SPDX-License-Identifier: BSD-3-Clause
#include "auth.hpp"

#include "common/number_text.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace hashi::impi {
namespace {

constexpr std::string_view proof_context = "hashi-impi-auth-v1";

Mac proof(const std::string& secret, std::string_view role, const Nonce& server_nonce, const Nonce& client_nonce)
{
    // The role is part of the MAC so the server's proof can never be
    // reflected back as a client's, or the other way round.
    Bytes msg;
    msg.insert(msg.end(), proof_context.begin(), proof_context.end());
    msg.push_back(0);
    msg.insert(msg.end(), role.begin(), role.end());
    msg.push_back(0);
    msg.insert(msg.end(), server_nonce.begin(), server_nonce.end());
    msg.insert(msg.end(), client_nonce.begin(), client_nonce.end());
    Mac out {};
    unsigned int len = 0;
    if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), msg.data(), msg.size(), out.data(), &len) ==
            nullptr ||
        len != out.size()) {
        throw std::runtime_error("HMAC-SHA256 failed in OpenSSL");
    }
    return out;
}

} // namespace

std::string method_name(std::int32_t method)
{
    switch (method) {
    case auth_method::none:
        return "IMPI_AUTH_NONE";
    case auth_method::key:
        return "IMPI_AUTH_KEY";
    case auth_method::hashi_hmac:
        return "Hashi HMAC-SHA256 challenge-response";
    default:
        return "method " + std::to_string(method);
    }
}

std::uint32_t Credentials::mask() const
{
    std::uint32_t m = 0;
    if (allow_none) {
        m |= 1u << auth_method::none;
    }
    if (key) {
        m |= 1u << auth_method::key;
    }
    if (secret) {
        m |= 1u << auth_method::hashi_hmac;
    }
    return m;
}

std::optional<std::int32_t> choose_method(std::uint32_t client_mask, const Credentials& server)
{
    std::uint32_t common = client_mask & server.mask();
    for (auto m : {auth_method::hashi_hmac, auth_method::key, auth_method::none}) {
        if ((common & (1u << m)) != 0) {
            return m;
        }
    }
    return std::nullopt;
}

std::string describe_mask(std::uint32_t mask)
{
    std::string s;
    for (int m = 0; m < 32; ++m) {
        if ((mask & (1u << m)) != 0) {
            s += (s.empty() ? "" : ", ") + method_name(m);
        }
    }
    return s.empty() ? "no method" : s;
}

Nonce random_nonce()
{
    Nonce n {};
    std::size_t got = 0;
    while (got < n.size()) {
        ssize_t r = ::getrandom(n.data() + got, n.size() - got, 0);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            throw std::runtime_error(std::string("getrandom failed: ") + std::strerror(errno));
        }
        got += static_cast<std::size_t>(r);
    }
    return n;
}

Mac client_proof(const std::string& secret, const Nonce& server_nonce, const Nonce& client_nonce)
{
    return proof(secret, "client", server_nonce, client_nonce);
}

Mac server_proof(const std::string& secret, const Nonce& server_nonce, const Nonce& client_nonce)
{
    return proof(secret, "server", server_nonce, client_nonce);
}

bool same_mac(ByteView a, ByteView b)
{
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string read_secret_file(const std::string& path)
{
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        throw CredentialError("cannot read the secret file '" + path + "': " + std::strerror(errno));
    }
    struct stat st { };
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw CredentialError("the secret file '" + path + "' is not a regular file");
    }
    if ((st.st_mode & 077) != 0) {
        ::close(fd);
        throw CredentialError("the secret file '" + path + "' can be read by other users; run chmod 600 '" + path +
            "' (and choose a new secret if others may have read it)");
    }
    std::string s(max_secret_size + 1, '\0');
    std::size_t got = 0;
    while (got < s.size()) {
        ssize_t r = ::read(fd, s.data() + got, s.size() - got);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            break;
        }
        got += static_cast<std::size_t>(r);
    }
    ::close(fd);
    s.resize(got);
    if (s.size() > max_secret_size) {
        throw CredentialError("the secret file '" + path + "' is larger than " + std::to_string(max_secret_size) +
            " bytes; is it the right file?");
    }
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) {
        s.pop_back();
    }
    if (s.size() < min_secret_size) {
        throw CredentialError("the secret in '" + path + "' is shorter than " + std::to_string(min_secret_size) +
            " bytes; make one with: head -c 32 /dev/urandom | base64 > FILE");
    }
    return s;
}

Credentials resolve_credentials(const CredentialFlags& flags, const EnvLookup& env)
{
    Credentials c;
    auto check_secret = [](const std::string& s, const std::string& from) {
        if (s.size() < min_secret_size || s.size() > max_secret_size) {
            throw CredentialError("the secret from " + from + " must have " + std::to_string(min_secret_size) + " to " +
                std::to_string(max_secret_size) + " bytes");
        }
        return s;
    };
    if (flags.secret_file) {
        c.secret = read_secret_file(*flags.secret_file);
    } else if (flags.secret) {
        c.secret = check_secret(*flags.secret, "-impi-secret");
    } else if (auto f = env("HASHI_IMPI_SECRET_FILE"); f && !f->empty()) {
        c.secret = read_secret_file(*f);
    } else if (auto s = env("HASHI_IMPI_SECRET"); s && !s->empty()) {
        c.secret = check_secret(*s, "HASHI_IMPI_SECRET");
    }
    if (flags.enable_key) {
        auto text = flags.key ? flags.key : env("IMPI_AUTH_KEY");
        if (!text || text->empty()) {
            throw CredentialError("-impi-auth-key needs a key: -impi-key N or IMPI_AUTH_KEY=N in the environment");
        }
        std::string error;
        const auto k = parse_whole(flags.key ? "option -impi-key" : "IMPI_AUTH_KEY=", *text, {}, error);
        if (!k) {
            throw CredentialError(error);
        }
        c.key = *k;
    } else if (flags.key) {
        throw CredentialError("-impi-key given without -impi-auth-key, which enables the weak IMPI_AUTH_KEY method");
    }
    c.allow_none = flags.enable_none;
    if (!c.any()) {
        throw CredentialError("no authentication method: give the job's secret with -impi-secret-file FILE (or "
                              "HASHI_IMPI_SECRET_FILE), or enable a weak IMPI method with -impi-auth-none or "
                              "-impi-auth-key");
    }
    return c;
}

} // namespace hashi::impi
