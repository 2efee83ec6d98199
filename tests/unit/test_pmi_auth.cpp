// SPDX-License-Identifier: BSD-3-Clause
// The PMI-port authentication of ssh-launched ranks and the secrets it is
// built on: only a holder of the rank's token gets in, for the rank and
// channel it proved, and the answer proves mpiexec holds the token too.
#include "mpi/mpiexec/pmi_auth.hpp"
#include "mpi/mpiexec/secrets.hpp"

#include <boost/test/unit_test.hpp>

using namespace hashi::mpiexec;

namespace {

Secret filled(std::uint8_t b)
{
    Secret s {};
    s.fill(b);
    return s;
}

} // namespace

BOOST_AUTO_TEST_SUITE(pmi_auth_suite)

BOOST_AUTO_TEST_CASE(hex_round_trip_and_rejects)
{
    Secret s {};
    for (std::size_t i = 0; i < s.size(); ++i) {
        s[i] = static_cast<std::uint8_t>(i * 37);
    }
    auto hex = to_hex(s);
    BOOST_TEST(hex.size() == 64U);
    BOOST_TEST(hex.find_first_not_of("0123456789abcdef") == std::string::npos);
    BOOST_TEST(secret_from_hex(hex).value() == s);
    BOOST_TEST(!secret_from_hex(hex.substr(1)));
    BOOST_TEST(!secret_from_hex(hex + "0"));
    BOOST_TEST(!secret_from_hex(std::string(63, '0') + "g"));
}

BOOST_AUTO_TEST_CASE(hmac_matches_rfc4231_case_2)
{
    // RFC 4231, test case 2.
    auto mac = hmac_sha256("Jefe", "what do ya want for nothing?");
    BOOST_TEST(to_hex(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

BOOST_AUTO_TEST_CASE(job_key_depends_on_secret_and_job)
{
    auto a = derive_job_key("the job secret, 16+ bytes", 0x0102030405060708ULL);
    BOOST_TEST(a == derive_job_key("the job secret, 16+ bytes", 0x0102030405060708ULL));
    BOOST_TEST(!(a == derive_job_key("the job secret, 16+ bytes", 0x0102030405060709ULL)));
    BOOST_TEST(!(a == derive_job_key("another job secret, 16+", 0x0102030405060708ULL)));
    // The documented construction: HMAC(secret, label || big-endian id).
    BOOST_TEST(a == hmac_sha256("the job secret, 16+ bytes", std::string("hashi rank key v1\x01\x02\x03\x04\x05\x06\x07\x08", 25)));
    BOOST_TEST(!(random_secret() == random_secret()));
}

BOOST_AUTO_TEST_CASE(holder_of_the_token_is_accepted)
{
    auto token = filled(7);
    auto nonce = random_secret();
    auto line = pmi_auth::client_hello(token, 3, pmi_auth::Channel::pmi, nonce);
    BOOST_TEST(line.back() == '\n');
    std::string why;
    auto claim = pmi_auth::parse_hello(line, why);
    BOOST_REQUIRE_MESSAGE(claim, why);
    BOOST_TEST(claim->pmiid == 3);
    BOOST_TEST((claim->channel == pmi_auth::Channel::pmi));
    BOOST_TEST(pmi_auth::proves(*claim, token));
    auto reply = pmi_auth::server_reply(token, *claim);
    BOOST_TEST(pmi_auth::server_reply_ok(reply, token, *claim));
    // The reply does not reveal the token.
    BOOST_TEST(reply.find(to_hex(token)) == std::string::npos);
    BOOST_TEST(line.find(to_hex(token)) == std::string::npos);
}

BOOST_AUTO_TEST_CASE(wrong_token_rank_or_channel_is_refused)
{
    auto token = filled(7);
    auto nonce = random_secret();
    std::string why;
    auto claim = pmi_auth::parse_hello(pmi_auth::client_hello(token, 3, pmi_auth::Channel::pmi, nonce), why);
    BOOST_REQUIRE(claim);
    BOOST_TEST(!pmi_auth::proves(*claim, filled(8)));
    // A proof for rank 3 does not work for rank 1 (another token anyway, but
    // even with the same one), nor for the other channel.
    auto other_rank = *claim;
    other_rank.pmiid = 1;
    BOOST_TEST(!pmi_auth::proves(other_rank, token));
    auto other_channel = *claim;
    other_channel.channel = pmi_auth::Channel::lifeline;
    BOOST_TEST(!pmi_auth::proves(other_channel, token));
    // One flipped bit of the proof.
    auto flipped = *claim;
    flipped.proof[31] ^= 1;
    BOOST_TEST(!pmi_auth::proves(flipped, token));
    // A server answer made without the token, or reflected client proof.
    BOOST_TEST(!pmi_auth::server_reply_ok(pmi_auth::server_reply(filled(8), *claim), token, *claim));
    BOOST_TEST(!pmi_auth::server_reply_ok("cmd=hashi_auth_ok proof=" + to_hex(claim->proof) + "\n", token, *claim));
    BOOST_TEST(!pmi_auth::server_reply_ok("", token, *claim));
}

BOOST_AUTO_TEST_CASE(what_strangers_send_is_not_a_claim)
{
    const char* lines[] = {
        "cmd=initack pmiid=1\n", // what MPICH's client sends with PMI_PORT
        "cmd=lifeline pmiid=1\n", // the old shim
        "GET / HTTP/1.0\n",
        "\n",
        "cmd=hashi_auth v=2 pmiid=1 channel=pmi nonce=00 proof=00\n",
        "cmd=hashi_auth v=1 pmiid=-1 channel=pmi nonce=00 proof=00\n",
        "cmd=hashi_auth v=1 pmiid=1x channel=pmi nonce=00 proof=00\n",
        "cmd=hashi_auth v=1 pmiid=99999999999999999999 channel=pmi nonce=00 proof=00\n",
        "cmd=hashi_auth v=1 pmiid=1 channel=other nonce=00 proof=00\n",
        "cmd=hashi_auth v=1 pmiid=1 channel=pmi nonce=00 proof=00\n",
        "cmd=hashi_auth v=1 pmiid=1 channel=pmi\n",
    };
    for (const char* l : lines) {
        std::string why;
        BOOST_TEST(!pmi_auth::parse_hello(l, why), l);
        BOOST_TEST(!why.empty(), l);
    }
}

BOOST_AUTO_TEST_SUITE_END()
