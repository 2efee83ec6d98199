// SPDX-License-Identifier: BSD-3-Clause
// The reorder stage (src/transport/path/reorder.hpp): one stream's frames,
// striped over 1 to 8 paths that each keep their own order, read in random
// interleavings, come out in sequence order with their payloads intact,
// and the stage pushes back (full) at its cap instead of growing.
#include "transport/path/reorder.hpp"

#include <boost/test/unit_test.hpp>

#include <deque>
#include <random>
#include <vector>

using namespace hashi;
using fi::reorder_stage;

namespace {

struct sent_frame {
    wire::frame_header h;
    std::vector<std::uint8_t> payload;
};

std::vector<std::uint8_t> payload_of(std::uint32_t seq, std::size_t len)
{
    std::vector<std::uint8_t> p(len);
    for (std::size_t i = 0; i < len; ++i)
        p[i] = static_cast<std::uint8_t>(seq * 31 + i);
    return p;
}

struct outcome {
    std::vector<std::uint32_t> order; // sequence numbers as delivered
    bool payloads_intact = true;
    std::size_t fulls = 0; // times a path was told to wait
    std::size_t max_held = 0; // bytes held at most
};

// Sends `n` frames with sequence numbers from `first`, each on a random one
// of `paths` paths, then reads the paths in a random interleaving through
// one stage with `cap` bytes.
outcome run(unsigned paths, std::uint32_t n, std::size_t cap, std::uint32_t first, std::mt19937& rng)
{
    std::vector<std::deque<sent_frame>> lanes(paths);
    std::uniform_int_distribution<unsigned> pick(0, paths - 1);
    std::uniform_int_distribution<std::size_t> len(0, 300);
    for (std::uint32_t i = 0; i < n; ++i) {
        sent_frame f;
        f.h.type = wire::frame_type::tagged;
        f.h.seq = first + i;
        f.payload = payload_of(f.h.seq, len(rng));
        f.h.length = f.payload.size();
        lanes[pick(rng)].push_back(std::move(f));
    }
    reorder_stage stage(cap, first);
    outcome out;
    auto deliver = [&](const wire::frame_header& h, const std::vector<std::uint8_t>& p) {
        out.order.push_back(h.seq);
        if (p != payload_of(h.seq, h.length))
            out.payloads_intact = false;
        stage.delivered();
        while (auto held = stage.take_next()) {
            out.order.push_back(held->h.seq);
            if (held->payload != payload_of(held->h.seq, held->h.length))
                out.payloads_intact = false;
            stage.delivered();
        }
    };
    std::size_t left = n;
    std::size_t stalls_in_a_row = 0;
    while (left > 0) {
        const unsigned l = pick(rng);
        if (lanes[l].empty())
            continue;
        sent_frame& f = lanes[l].front();
        switch (stage.offer(f.h.seq, f.payload.size())) {
        case reorder_stage::verdict::deliver:
            deliver(f.h, f.payload);
            break;
        case reorder_stage::verdict::hold:
            stage.hold(f.h, f.payload.data(), f.payload.size());
            break;
        case reorder_stage::verdict::full:
            ++out.fulls;
            // The path waits; the frame stays at its front. Some other path
            // holds the missing frame, so the stream cannot deadlock.
            BOOST_REQUIRE(++stalls_in_a_row < 100000);
            continue;
        default:
            BOOST_FAIL("a frame of the stream was taken for stale or too far ahead");
        }
        stalls_in_a_row = 0;
        out.max_held = std::max(out.max_held, stage.held_bytes());
        lanes[l].pop_front();
        --left;
    }
    BOOST_CHECK_EQUAL(stage.held_frames(), 0u);
    return out;
}

bool in_sequence(const std::vector<std::uint32_t>& order, std::uint32_t first)
{
    for (std::size_t i = 0; i < order.size(); ++i)
        if (order[i] != static_cast<std::uint32_t>(first + i))
            return false;
    return true;
}

} // namespace

BOOST_AUTO_TEST_SUITE(reorder)

BOOST_AUTO_TEST_CASE(random_interleavings_over_one_to_eight_paths_deliver_in_order)
{
    std::mt19937 rng(20261201);
    for (unsigned paths = 1; paths <= 8; ++paths)
        for (int round = 0; round < 20; ++round) {
            const auto out = run(paths, 500, 1 << 20, 1, rng);
            BOOST_TEST_CONTEXT("paths " << paths << " round " << round)
            {
                BOOST_CHECK_EQUAL(out.order.size(), 500u);
                BOOST_CHECK(in_sequence(out.order, 1));
                BOOST_CHECK(out.payloads_intact);
                if (paths == 1)
                    BOOST_CHECK_EQUAL(out.max_held, 0u); // one path: nothing is ever copied
            }
        }
}

BOOST_AUTO_TEST_CASE(pushes_back_at_its_cap)
{
    std::mt19937 rng(7);
    const std::size_t cap = 2048;
    std::size_t fulls = 0;
    for (int round = 0; round < 20; ++round) {
        const auto out = run(4, 400, cap, 1, rng);
        BOOST_CHECK(in_sequence(out.order, 1));
        BOOST_CHECK(out.payloads_intact);
        // At most one frame past the cap (a frame is taken whole).
        BOOST_CHECK_LE(out.max_held, cap + wire::header_size + 300);
        fulls += out.fulls;
    }
    BOOST_CHECK_GT(fulls, 0u); // the cap was reached and held
}

BOOST_AUTO_TEST_CASE(sequence_numbers_wrap)
{
    std::mt19937 rng(11);
    const std::uint32_t first = 0xffffff00u;
    const auto out = run(3, 600, 1 << 20, first, rng);
    BOOST_CHECK(in_sequence(out.order, first));
}

BOOST_AUTO_TEST_CASE(stale_duplicate_and_far_frames_are_refused)
{
    reorder_stage stage(1 << 20, 10);
    BOOST_CHECK(stage.offer(9, 0) == reorder_stage::verdict::behind);
    BOOST_CHECK(stage.offer(10, 0) == reorder_stage::verdict::deliver);
    wire::frame_header h;
    h.seq = 12;
    stage.hold(h, nullptr, 0);
    BOOST_CHECK(stage.offer(12, 0) == reorder_stage::verdict::behind); // a second frame 12
    BOOST_CHECK(stage.offer(10 + reorder_stage::max_ahead + 1, 0) == reorder_stage::verdict::too_far);
    BOOST_CHECK(!stage.take_next()); // 10 is not delivered yet: 12 waits
    stage.delivered(); // 10
    BOOST_CHECK(!stage.take_next()); // 11 missing
    BOOST_CHECK(stage.offer(11, 0) == reorder_stage::verdict::deliver);
    stage.delivered();
    auto f = stage.take_next();
    BOOST_REQUIRE(f);
    BOOST_CHECK_EQUAL(f->h.seq, 12u);
}

// Test vectors of a striped stream: each line is what arrives (sequence
// number and payload bytes) and what the stage must answer, then which
// numbers come out in order. The reader acts on the verdicts as
// user_reader.cpp does: deliver, then drain what became next; hold; on
// full, keep the frame on its path and offer it again later; behind and
// too_far end the stream (the reader names the numbers).
struct arrival {
    std::uint32_t seq;
    std::size_t bytes;
    reorder_stage::verdict want;
};
struct vector_case {
    const char* name;
    std::size_t cap;
    std::vector<arrival> arrivals;
    std::vector<std::uint32_t> delivered; // in this order
};

BOOST_AUTO_TEST_CASE(striped_chunk_vectors)
{
    using v = reorder_stage::verdict;
    const std::vector<vector_case> cases = {
        {"chunks of lane 1 ahead of lane 0", 1 << 20,
            {{2, 1000, v::hold}, {3, 1000, v::hold}, {1, 1000, v::deliver}, {4, 10, v::deliver}}, {1, 2, 3, 4}},
        {"a small message after a striped one waits for its last chunk", 1 << 20,
            {{1, 1000, v::deliver}, {3, 1000, v::hold}, {4, 8, v::hold}, {2, 1000, v::deliver}}, {1, 2, 3, 4}},
        {"duplicate of a held chunk", 1 << 20, {{3, 1000, v::hold}, {3, 1000, v::behind}}, {}},
        {"duplicate of a delivered chunk", 1 << 20, {{1, 1000, v::deliver}, {1, 1000, v::behind}}, {1}},
        {"gap beyond what the stage may wait for", 1 << 20,
            {{1 + reorder_stage::max_ahead + 1, 10, v::too_far}}, {}},
        {"bound exceeded: full, then taken once the gap fills", 3000,
            {{2, 1000, v::hold}, {3, 1000, v::hold}, {4, 2000, v::full}, {1, 1000, v::deliver}, {4, 2000, v::deliver}},
            {1, 2, 3, 4}},
        {"a chunk larger than the whole stage still passes when nothing is held", 100,
            {{2, 5000, v::hold}, {1, 10, v::deliver}}, {1, 2}},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name)
        {
            reorder_stage stage(c.cap, 1);
            std::vector<std::uint32_t> out;
            for (const auto& a : c.arrivals) {
                const auto got = stage.offer(a.seq, a.bytes);
                BOOST_TEST(static_cast<int>(got) == static_cast<int>(a.want), "seq " << a.seq);
                if (got == v::deliver) {
                    out.push_back(a.seq);
                    stage.delivered();
                    while (auto f = stage.take_next()) {
                        out.push_back(f->h.seq);
                        stage.delivered();
                    }
                } else if (got == v::hold) {
                    wire::frame_header h;
                    h.seq = a.seq;
                    h.length = a.bytes;
                    const std::vector<std::uint8_t> payload(a.bytes, 0x5a);
                    stage.hold(h, payload.data(), payload.size());
                }
            }
            BOOST_TEST(out == c.delivered, boost::test_tools::per_element());
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
