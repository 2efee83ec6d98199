// SPDX-License-Identifier: BSD-3-Clause
// The IMPI frame codec: byte order, limits that hold before any payload is
// buffered, and round trips of every payload type.
#include "relay/impi/wire.hpp"

#include <boost/test/unit_test.hpp>

using namespace hashi::impi;

BOOST_AUTO_TEST_SUITE(impi_wire)

BOOST_AUTO_TEST_CASE(header_is_big_endian_ascii)
{
    auto f = encode_frame(cmd::impi, Writer().i32(3).take());
    Bytes want = {'I', 'M', 'P', 'I', 0, 0, 0, 4, 0, 0, 0, 3};
    BOOST_TEST(f == want);
    BOOST_TEST(command_name(cmd::coll) == "COLL");
    BOOST_TEST(command_name(0x01020304) == "0x01020304");
}

BOOST_AUTO_TEST_CASE(partial_input_needs_more)
{
    auto f = encode_frame(cmd::impi, Writer().i32(7).take());
    for (std::size_t n = 0; n < f.size(); ++n) {
        auto r = decode_frame(ByteView(f).first(n), Sender::client);
        BOOST_TEST((r.status == DecodeResult::Status::need_more));
    }
    auto r = decode_frame(f, Sender::client);
    BOOST_REQUIRE((r.status == DecodeResult::Status::frame));
    BOOST_TEST(r.consumed == f.size());
    BOOST_TEST(*Reader(r.frame.payload).i32() == 7);
}

BOOST_AUTO_TEST_CASE(length_is_checked_from_the_header_alone)
{
    // Only the header: a huge length must be refused before any payload.
    Bytes h = Writer().u32(cmd::coll).u32(0x7fffffff).take();
    auto r = decode_frame(h, Sender::client);
    BOOST_REQUIRE((r.status == DecodeResult::Status::error));
    BOOST_TEST(r.error.find("COLL with a payload of 2147483647 bytes") != std::string::npos);
    Bytes done = Writer().u32(cmd::done).u32(1).take();
    BOOST_TEST((decode_frame(done, Sender::client).status == DecodeResult::Status::error));
    Bytes unknown = Writer().u32(0x41414141).u32(0).take();
    r = decode_frame(unknown, Sender::client);
    BOOST_TEST((r.status == DecodeResult::Status::error));
    BOOST_TEST(r.error.find("unknown command AAAA") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(direction_matters)
{
    Bytes bo = Writer().u32(cmd::hx_barrier_out).u32(8).u32(0).u32(0).take();
    BOOST_TEST((decode_frame(bo, Sender::client).status == DecodeResult::Status::error));
    BOOST_TEST((decode_frame(bo, Sender::server).status == DecodeResult::Status::frame));
}

BOOST_AUTO_TEST_CASE(coll_round_trips)
{
    CollIn in {label::c_nprocs, Writer().u32(4).take()};
    auto back = decode_coll_in(encode_coll_in(in));
    BOOST_REQUIRE(back);
    BOOST_TEST(back->label == label::c_nprocs);
    BOOST_TEST(back->data == in.data);
    CollOut out {label::h_port, 0x5, Writer().u32(1).u32(2).take()};
    auto o = decode_coll_out(encode_coll_out(out));
    BOOST_REQUIRE(o);
    BOOST_TEST(o->client_mask == 0x5u);
    BOOST_TEST(o->data == out.data);
    BOOST_TEST(!decode_coll_in(Bytes {1, 2}));
    BOOST_TEST(!decode_coll_out(Bytes {1, 2, 3, 4, 5}));
}

BOOST_AUTO_TEST_CASE(server_auth_length_must_match)
{
    ServerAuth a {16, Bytes(32, 9)};
    auto back = decode_server_auth(encode_server_auth(a));
    BOOST_REQUIRE(back);
    BOOST_TEST(back->which == 16);
    BOOST_TEST(back->data.size() == 32u);
    Bytes lying = Writer().i32(16).u32(33).bytes(Bytes(32, 0)).take();
    BOOST_TEST(!decode_server_auth(lying));
}

BOOST_AUTO_TEST_CASE(barrier_round_trip_and_bounds)
{
    Barrier b {3, {{"P0-businesscard", "port#1234$"}, {"k", ""}}};
    auto back = decode_barrier(encode_barrier(b));
    BOOST_REQUIRE(back);
    BOOST_TEST(back->epoch == 3u);
    BOOST_TEST((back->entries == b.entries));

    // A count no payload could hold is refused without reserving for it.
    Bytes liar = Writer().u32(0).u32(0xffffffff).take();
    BOOST_TEST(!decode_barrier(liar));
    // Keys over the PMI limit, spaces in values, trailing bytes.
    BOOST_TEST(!decode_barrier(encode_barrier({0, {{std::string(65, 'k'), "v"}}})));
    BOOST_TEST(!decode_barrier(encode_barrier({0, {{"k", "a b"}}})));
    BOOST_TEST(!decode_barrier(encode_barrier({0, {{"", "v"}}})));
    auto extra = encode_barrier(b);
    extra.push_back(0);
    BOOST_TEST(!decode_barrier(extra));
}

BOOST_AUTO_TEST_CASE(abort_and_text)
{
    auto a = decode_abort(encode_abort({2, 7, "rank 3 exited with status 7"}));
    BOOST_REQUIRE(a);
    BOOST_TEST(a->client == 2);
    BOOST_TEST(a->code == 7);
    BOOST_TEST(a->reason == "rank 3 exited with status 7");
    Bytes bell = {'h', 'i', 7};
    BOOST_TEST(!decode_text(bell));
}

BOOST_AUTO_TEST_SUITE_END()
