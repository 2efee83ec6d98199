// SPDX-License-Identifier: BSD-3-Clause
// The order a trunk's frames leave in (relay/relay/trunk_queue.hpp):
// control first, then a quiet stream's small frame, then the streams in
// turn, each stream's own frames in order, the job's end last; and the
// same properties on random sequences.
#include "relay/relay/trunk_queue.hpp"

#include <boost/test/unit_test.hpp>

#include <map>
#include <random>
#include <vector>

using namespace hashi::relay;

namespace {

// A frame whose bytes say what it is: {kind, stream, sequence}, padded to `size`.
byte_buffer frame(std::uint8_t kind, std::uint8_t stream, std::uint8_t seq, std::size_t size = 3)
{
    byte_buffer f(size);
    f[0] = kind;
    f[1] = stream;
    f[2] = seq;
    return f;
}

constexpr std::uint8_t control = 'c', data = 'd', last = 'l';
constexpr std::size_t bulk = trunk_queue::small_frame + 1, small = 40;

std::vector<byte_buffer> drain(trunk_queue& q, std::vector<std::uint32_t>* emptied = nullptr)
{
    std::vector<byte_buffer> out;
    while (auto n = q.pop()) {
        if (emptied != nullptr && n->emptied) {
            emptied->push_back(*n->emptied);
        }
        out.push_back(std::move(n->frame));
    }
    return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(relay_trunk_queue)

BOOST_AUTO_TEST_CASE(control_then_quiet_streams_small_frames_then_streams_in_turn_then_the_end)
{
    trunk_queue q;
    BOOST_TEST(q.empty());
    BOOST_TEST(!q.pop().has_value());
    q.push_last(frame(last, 0, 0));
    q.push_stream(7, frame(data, 7, 0, bulk));
    q.push_stream(7, frame(data, 7, 1, bulk));
    q.push_stream(7, frame(data, 7, 2, small)); // behind 7's bulk: not express
    q.push_stream(9, frame(data, 9, 0, bulk));
    q.push_control(frame(control, 0, 0));
    q.push_stream(9, frame(data, 9, 1, bulk));
    q.push_stream(11, frame(data, 11, 0, small)); // a quiet stream's small frame: express
    q.push_stream(11, frame(data, 11, 1, small)); // its next waits its turn
    q.push_control(frame(control, 0, 1));
    BOOST_TEST(q.bytes() == 3 + 4 * bulk + 3 * small + 3 + 3);
    BOOST_TEST(q.has(7));
    BOOST_TEST(q.has(11));
    BOOST_TEST(q.busy_streams() == 3u);
    BOOST_TEST(q.express_frames() == 1u);

    std::vector<std::uint32_t> emptied;
    const auto out = drain(q, &emptied);
    const std::vector<std::vector<int>> want {
        {control, 0, 0}, {control, 0, 1}, // control first, in order
        {data, 11, 0}, // express
        {data, 7, 0}, {data, 9, 0}, {data, 11, 1}, {data, 7, 1}, {data, 9, 1}, {data, 7, 2}, // one of each in turn
        {last, 0, 0}};
    BOOST_REQUIRE(out.size() == want.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        BOOST_TEST_CONTEXT("frame " << i)
        {
            BOOST_TEST(out[i][0] == want[i][0]);
            BOOST_TEST(out[i][1] == want[i][1]);
            BOOST_TEST(out[i][2] == want[i][2]);
        }
    }
    BOOST_TEST(emptied == (std::vector<std::uint32_t> {11, 9, 7}), boost::test_tools::per_element());
    BOOST_TEST(q.empty());
    BOOST_TEST(q.bytes() == 0u);
    BOOST_TEST(!q.has(7));
    BOOST_TEST(!q.has(11));
}

BOOST_AUTO_TEST_CASE(a_quiet_streams_small_frame_overtakes_the_bulk_and_a_bulk_frame_waits_one_round)
{
    // 3 streams with 64 frames of 64 KiB each queued, then a quiet
    // stream's 40-byte frame (a rendezvous answer), then a fourth bulk stream.
    trunk_queue q;
    for (std::uint8_t s = 1; s <= 3; ++s) {
        for (std::uint8_t i = 0; i < 64; ++i) {
            q.push_stream(s, frame(data, s, i, 64 << 10));
        }
    }
    q.push_stream(4, frame(data, 4, 0, small));
    q.push_stream(5, frame(data, 5, 0, 64 << 10));
    auto first = q.pop();
    BOOST_REQUIRE(first.has_value());
    BOOST_TEST(first->frame[1] == 4);
    std::size_t before = 0;
    for (;;) {
        auto n = q.pop();
        BOOST_REQUIRE(n.has_value());
        if (n->frame[1] == 5) {
            break;
        }
        before += n->frame.size();
    }
    BOOST_TEST(before == 3u * (64 << 10));
}

BOOST_AUTO_TEST_CASE(holds_its_contract_on_random_sequences)
{
    // Per stream first in, first out; control before anything else;
    // express frames (small, of a stream with nothing queued) before any
    // other stream frame; a busy stream waits for at most one frame of each
    // other stream between its turns; the end after all; bytes add up.
    std::mt19937 rng(20261205);
    constexpr int nstreams = 6;
    for (int round = 0; round < 200; ++round) {
        trunk_queue q;
        std::map<std::uint8_t, std::uint8_t> pushed, popped; // per stream: next sequence
        std::map<std::uint8_t, int> queued; // per stream: frames queued
        std::map<std::uint8_t, int> express_sizes; // per stream: express frames queued
        std::map<std::uint8_t, int> waited; // per busy stream: others' round-robin frames since its last
        std::uint8_t controls_pushed = 0, controls_popped = 0;
        int express_queued = 0;
        bool end_pushed = false, end_popped = false;
        std::size_t bytes = 0;
        for (int step = 0; step < 400; ++step) {
            const int what = static_cast<int>(rng() % 10);
            if (what < 5) {
                const auto s = static_cast<std::uint8_t>(1 + rng() % nstreams);
                const std::size_t size = rng() % 2 ? 3 + rng() % 100 : bulk + rng() % 5000;
                const bool express = size <= trunk_queue::small_frame && queued[s] == 0;
                BOOST_TEST(q.has(s) == (queued[s] != 0));
                q.push_stream(s, frame(data, s, pushed[s]++, size));
                ++queued[s];
                if (express) {
                    ++express_sizes[s];
                    ++express_queued;
                }
                bytes += size;
            } else if (what == 5) {
                q.push_control(frame(control, 0, controls_pushed++));
                bytes += 3;
            } else if (what == 6 && !end_pushed) {
                q.push_last(frame(last, 0, 0));
                end_pushed = true;
                bytes += 3;
            } else {
                const bool had_control = controls_pushed != controls_popped;
                int had_stream = 0;
                for (auto& [s, n] : queued) {
                    had_stream += n;
                }
                auto n = q.pop();
                if (!n) {
                    BOOST_TEST(!had_control);
                    BOOST_TEST(had_stream == 0);
                    BOOST_TEST(end_popped == end_pushed);
                    continue;
                }
                bytes -= n->frame.size();
                const auto& f = n->frame;
                if (f[0] == control) {
                    BOOST_TEST(f[2] == controls_popped++);
                } else if (f[0] == data) {
                    const std::uint8_t s = f[1];
                    BOOST_TEST(!had_control);
                    BOOST_TEST(f[2] == popped[s]++);
                    --queued[s];
                    BOOST_TEST(n->emptied.has_value() == (queued[s] == 0));
                    if (express_sizes[s] > 0) {
                        // The stream's express frame is always its oldest.
                        --express_sizes[s];
                        --express_queued;
                        BOOST_TEST(f.size() <= trunk_queue::small_frame);
                    } else {
                        BOOST_TEST(express_queued == 0); // express leaves first
                        for (auto& [o, w] : waited) {
                            if (o != s && queued[o] > 0) {
                                ++w;
                                BOOST_TEST(w < nstreams); // at most one frame of each other stream
                            }
                        }
                        waited[s] = 0;
                    }
                    if (queued[s] == 0) {
                        waited.erase(s);
                    }
                } else {
                    BOOST_TEST(!had_control);
                    BOOST_TEST(had_stream == 0);
                    end_popped = true;
                }
            }
            BOOST_TEST(q.bytes() == bytes);
        }
        drain(q);
        BOOST_TEST(q.empty());
    }
}

BOOST_AUTO_TEST_SUITE_END()
