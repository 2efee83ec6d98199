// SPDX-License-Identifier: BSD-3-Clause
// Authentication: method choice, the HMAC proofs, and where credentials
// come from (flags, environment, files with safe permissions).
#include "relay/impi/auth.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <fstream>
#include <map>

using namespace hashi::impi;

namespace {

EnvLookup env_of(std::map<std::string, std::string> vars)
{
    return [vars](const std::string& k) -> std::optional<std::string> {
        auto it = vars.find(k);
        return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
}

std::string temp_file(const std::string& content, mode_t mode)
{
    char name[] = "/tmp/impi-unit-XXXXXX";
    int fd = ::mkstemp(name);
    BOOST_REQUIRE(fd >= 0);
    BOOST_REQUIRE(::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()));
    ::fchmod(fd, mode);
    ::close(fd);
    return name;
}

CredentialFlags flags(void (*set)(CredentialFlags&))
{
    CredentialFlags f;
    set(f);
    return f;
}

} // namespace

BOOST_AUTO_TEST_SUITE(impi_auth)

BOOST_AUTO_TEST_CASE(strongest_common_method_wins)
{
    Credentials server {.secret = "0123456789abcdef", .key = 42, .allow_none = true};
    BOOST_TEST(server.mask() == ((1u << 16) | 3u));
    BOOST_TEST(*choose_method(server.mask(), server) == auth_method::hashi_hmac);
    BOOST_TEST(*choose_method(0x3, server) == auth_method::key);
    BOOST_TEST(*choose_method(0x1, server) == auth_method::none);
    Credentials strict {.secret = "0123456789abcdef", .key = {}, .allow_none = false};
    BOOST_TEST(!choose_method(0x3, strict)); // weak methods only when enabled
    BOOST_TEST(describe_mask(0x2) == "IMPI_AUTH_KEY");
}

BOOST_AUTO_TEST_CASE(proofs_depend_on_secret_role_and_nonces)
{
    auto ns = random_nonce();
    auto nc = random_nonce();
    BOOST_TEST(!same_mac(ns, nc));
    auto a = client_proof("secret-one-0123456", ns, nc);
    BOOST_TEST(same_mac(a, client_proof("secret-one-0123456", ns, nc)));
    BOOST_TEST(!same_mac(a, client_proof("secret-two-0123456", ns, nc)));
    BOOST_TEST(!same_mac(a, server_proof("secret-one-0123456", ns, nc)));
    BOOST_TEST(!same_mac(a, client_proof("secret-one-0123456", nc, ns)));
    BOOST_TEST(!same_mac(a, ByteView(a).first(31)));
}

BOOST_AUTO_TEST_CASE(credentials_from_flags_env_and_files)
{
    // Nothing at all: a clear error naming the secret file option.
    BOOST_CHECK_EXCEPTION(resolve_credentials({}, env_of({})), CredentialError,
        [](const CredentialError& e) { return std::string(e.what()).find("-impi-secret-file") != std::string::npos; });
    // The environment's secret.
    auto c = resolve_credentials({}, env_of({{"HASHI_IMPI_SECRET", "from-the-environment"}}));
    BOOST_TEST(*c.secret == "from-the-environment");
    BOOST_TEST(!c.key);
    // IMPI_AUTH_KEY alone does not enable the weak method...
    BOOST_CHECK_THROW(resolve_credentials({}, env_of({{"IMPI_AUTH_KEY", "12"}})), CredentialError);
    // ...the flag does.
    c = resolve_credentials(flags([](CredentialFlags& f) { f.enable_key = true; }), env_of({{"IMPI_AUTH_KEY", "12"}}));
    BOOST_TEST(*c.key == 12u);
    BOOST_CHECK_THROW(
        resolve_credentials(flags([](CredentialFlags& f) { f.enable_key = true; }), env_of({{"IMPI_AUTH_KEY", "x1"}})),
        CredentialError);
    c = resolve_credentials(flags([](CredentialFlags& f) { f.enable_none = true; }), env_of({}));
    BOOST_TEST(c.allow_none);
    BOOST_CHECK_THROW(
        resolve_credentials(flags([](CredentialFlags& f) { f.secret = "short"; }), env_of({})), CredentialError);
}

BOOST_AUTO_TEST_CASE(secret_files)
{
    auto good = temp_file("a-secret-of-enough-length\n", 0600);
    BOOST_TEST(read_secret_file(good) == "a-secret-of-enough-length");
    CredentialFlags from_file;
    from_file.secret_file = good;
    auto c = resolve_credentials(from_file, env_of({{"HASHI_IMPI_SECRET", "ignored-because-flag"}}));
    BOOST_TEST(*c.secret == "a-secret-of-enough-length");
    auto open_to_all = temp_file("a-secret-of-enough-length\n", 0644);
    BOOST_CHECK_EXCEPTION(read_secret_file(open_to_all), CredentialError,
        [](const CredentialError& e) { return std::string(e.what()).find("chmod 600") != std::string::npos; });
    auto tiny = temp_file("abc\n", 0600);
    BOOST_CHECK_THROW(read_secret_file(tiny), CredentialError);
    BOOST_CHECK_THROW(read_secret_file("/nonexistent/secret"), CredentialError);
    ::unlink(good.c_str());
    ::unlink(open_to_all.c_str());
    ::unlink(tiny.c_str());
}

BOOST_AUTO_TEST_SUITE_END()
