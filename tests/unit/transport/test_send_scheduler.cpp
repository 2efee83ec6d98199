// SPDX-License-Identifier: BSD-3-Clause
// The send scheduler (src/transport/send/send_scheduler.hpp) and the pacer
// hook (send/pacer.hpp): control frames overtake queued data, a 4 GiB
// transfer costs one entry and is cut as it is committed, sequence numbers
// follow the wire order, and with a pacer at rate R releasing N bytes takes
// at least (N - burst) / R.
#include "transport/send/pacer.hpp"
#include "transport/send/send_scheduler.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <deque>
#include <vector>

using namespace hashi;
using fi::send_scheduler;
using fi::transfer;
using fi::tx_frame;

namespace {

tx_frame small(wire::frame_type t, std::uint64_t tag)
{
    tx_frame f;
    f.h.type = t;
    f.h.tag = tag;
    return f;
}

transfer big(std::size_t total)
{
    transfer t;
    t.type = wire::frame_type::data;
    t.a = 42;
    // Never dereferenced: the scheduler only cuts descriptors.
    t.iov[0] = {reinterpret_cast<void*>(0x1000), total};
    t.iov_count = 1;
    t.total = total;
    return t;
}

} // namespace

BOOST_AUTO_TEST_SUITE(send_scheduler_lanes)

BOOST_AUTO_TEST_CASE(control_frames_overtake_queued_data)
{
    send_scheduler s(1 << 20);
    for (int i = 0; i < 100; ++i)
        s.push(send_scheduler::lane::message, small(wire::frame_type::tagged, i));
    s.push(send_scheduler::lane::data, big(64u << 20));
    s.push(send_scheduler::lane::control, small(wire::frame_type::cts, 7));
    std::deque<tx_frame> out;
    std::uint32_t seq = 1;
    s.commit(out, 1, 1 << 30, seq);
    BOOST_REQUIRE_EQUAL(out.size(), 1u);
    BOOST_CHECK(out.front().h.type == wire::frame_type::cts);
    BOOST_CHECK_EQUAL(out.front().h.seq, 1u);
    // Messages keep their order among themselves; data takes turns with them.
    out.clear();
    s.commit(out, 6, 1 << 30, seq);
    BOOST_REQUIRE_EQUAL(out.size(), 6u);
    std::uint64_t next_tag = 0;
    int data_frames = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
        BOOST_CHECK_EQUAL(out[i].h.seq, 2 + i); // numbered in wire order
        if (out[i].h.type == wire::frame_type::data)
            ++data_frames;
        else
            BOOST_CHECK_EQUAL(out[i].h.tag, next_tag++);
    }
    BOOST_CHECK_EQUAL(data_frames, 3);
}

BOOST_AUTO_TEST_CASE(a_four_gib_transfer_is_one_entry_cut_on_demand)
{
    const std::size_t chunk = 1 << 20;
    const std::size_t total = std::size_t {4} << 30;
    send_scheduler s(chunk);
    transfer t = big(total);
    int done_marker = 0;
    t.done = reinterpret_cast<fi::op*>(&done_marker);
    s.push(send_scheduler::lane::data, std::move(t));
    BOOST_CHECK_EQUAL(s.entries(), 1u);
    std::deque<tx_frame> out;
    std::uint32_t seq = 1;
    std::size_t cut = 0;
    std::uint64_t expect_offset = 0;
    std::size_t frames = 0, most_queued = 0;
    // A path that writes everything it is given, 4 frames at a time.
    while (!s.empty()) {
        cut += s.commit(out, 4, 1 << 30, seq);
        most_queued = std::max(most_queued, out.size());
        for (auto& f : out) {
            BOOST_REQUIRE_EQUAL(f.h.b, expect_offset);
            expect_offset += f.h.length;
            ++frames;
            if (expect_offset < total)
                BOOST_REQUIRE(f.done == nullptr && !f.ends_entry);
            else
                BOOST_CHECK(f.done == t.done && f.ends_entry);
        }
        out.clear();
    }
    BOOST_CHECK_EQUAL(expect_offset, total);
    BOOST_CHECK_EQUAL(frames, total / chunk);
    BOOST_CHECK_EQUAL(cut, total + frames * wire::header_size);
    BOOST_CHECK_LE(most_queued, 4u); // never more frames than the path asked for
}

BOOST_AUTO_TEST_CASE(commit_stops_at_the_byte_window)
{
    send_scheduler s(1 << 20);
    s.push(send_scheduler::lane::data, big(16u << 20));
    std::deque<tx_frame> out;
    std::uint32_t seq = 1;
    s.commit(out, 64, 256 * 1024, seq);
    BOOST_CHECK_EQUAL(out.size(), 1u); // one chunk already fills the window
}

BOOST_AUTO_TEST_CASE(a_pacer_at_rate_r_releases_n_bytes_in_at_least_n_over_r)
{
    const std::uint64_t rate = 10'000'000; // bytes per second
    const std::size_t burst = 64 * 1024;
    const std::size_t n = 8u << 20;
    std::uint64_t now = 1'000'000'000;
    const std::uint64_t start = now;
    fi::token_bucket pace(rate, burst, now);
    send_scheduler s(256 * 1024);
    s.push(send_scheduler::lane::data, big(n));
    std::deque<tx_frame> wq;
    std::uint32_t seq = 1;
    std::size_t released = 0;
    const std::size_t total = n + (n / (256 * 1024)) * wire::header_size;
    int rounds = 0;
    while (released < total) {
        BOOST_REQUIRE(++rounds < 1'000'000);
        if (wq.empty())
            s.commit(wq, 8, 1 << 20, seq);
        std::size_t allowed = pace.allowance(now);
        if (allowed == 0) {
            const std::uint64_t next = pace.ready_at(now);
            BOOST_REQUIRE_GT(next, now);
            now = next;
            continue;
        }
        // "Write" what the pacer allows, as a path does.
        std::size_t wrote = 0;
        while (!wq.empty() && wrote < allowed) {
            tx_frame& f = wq.front();
            const std::size_t take = std::min(allowed - wrote, f.total() - f.sent);
            f.sent += take;
            wrote += take;
            if (f.sent == f.total())
                wq.pop_front();
        }
        pace.consumed(wrote, now);
        released += wrote;
        now += 1'000'000; // the next write a millisecond later
    }
    const double elapsed_s = static_cast<double>(now - start) * 1e-9;
    const double bound_s = static_cast<double>(total - burst) / static_cast<double>(rate);
    BOOST_TEST_MESSAGE("released " << total << " bytes in " << elapsed_s << " s (bound " << bound_s << " s)");
    BOOST_CHECK_GE(elapsed_s, bound_s);
    BOOST_CHECK_LE(elapsed_s, bound_s * 1.1 + 0.01); // and not much slower than the rate
}

BOOST_AUTO_TEST_CASE(no_pacer_never_holds_back)
{
    fi::no_pacer p;
    BOOST_CHECK_EQUAL(p.allowance(0), fi::pacer::unlimited);
}

// Striping (send_scheduler.hpp, stripe_policy): lane 0 takes anything, a
// stripe lane only chunks of transfers of at least min_total, cut at the
// stripe chunk; numbers follow the commit order whichever path took the
// frame, so the receiver can restore the order of the whole stream.
BOOST_AUTO_TEST_CASE(stripe_lanes_take_only_chunks_of_large_transfers)
{
    send_scheduler s(1 << 20);
    fi::stripe_policy lane0 {256 << 10, 128 << 10, false};
    fi::stripe_policy lane1 = lane0;
    lane1.only_striped = true;
    s.push(send_scheduler::lane::data, big(100 << 10)); // below the threshold: lane 0 only
    fi::op send_op;
    transfer striped = big(1 << 20); // striped: 8 chunks of 128 KiB
    striped.done = &send_op;
    s.push(send_scheduler::lane::data, std::move(striped));
    s.push(send_scheduler::lane::message, small(wire::frame_type::tagged, 7)); // follows the striped one
    std::deque<tx_frame> p0, p1;
    std::uint32_t seq = 1;
    BOOST_CHECK_EQUAL(s.commit(p1, 64, 1 << 30, seq, lane1), 0u); // small transfer in front: nothing
    s.commit(p0, 2, 1 << 30, seq, lane0); // lane 0: the tagged message and the small transfer
    BOOST_REQUIRE_EQUAL(p0.size(), 2u);
    BOOST_CHECK(p0[0].h.type == wire::frame_type::tagged);
    BOOST_CHECK_EQUAL(p0[1].h.length, 100u << 10);
    // Now the striped transfer is in front: lanes take turns by room.
    s.commit(p1, 3, 1 << 30, seq, lane1);
    s.commit(p0, 4, 1 << 30, seq, lane0);
    s.commit(p1, 64, 1 << 30, seq, lane1);
    BOOST_CHECK(s.empty());
    std::vector<std::pair<std::uint32_t, std::uint64_t>> chunks; // (seq, offset)
    for (const auto* q : {&p0, &p1})
        for (const auto& f : *q)
            if (f.h.type == wire::frame_type::data && f.h.a == 42 && f.h.length == (128u << 10))
                chunks.emplace_back(f.h.seq, f.h.b);
    BOOST_REQUIRE_EQUAL(chunks.size(), 8u);
    std::sort(chunks.begin(), chunks.end());
    for (std::size_t i = 0; i < chunks.size(); ++i)
        BOOST_CHECK_EQUAL(chunks[i].second, i * (128u << 10)); // offsets rise with the numbers
    BOOST_CHECK_EQUAL(p1.size(), 6u); // 3, then the 3 that lane 0 left
    BOOST_CHECK_EQUAL(p0.size(), 4u);
    // Every chunk counts against its send, which completes only when all
    // are written, whichever lane writes its last chunk first.
    BOOST_CHECK_EQUAL(send_op.chunks_unwritten, 8u);
    BOOST_CHECK(p1.back().done == &send_op && p1.back().chunk_of == &send_op);
}

// A striped transfer is cut into about one chunk per lane, so that one just
// above the threshold reaches every trunk; never below min_chunk, never
// above the stripe chunk.
BOOST_AUTO_TEST_CASE(striped_transfers_are_cut_into_a_chunk_per_lane)
{
    auto chunks_of = [](std::size_t total, std::size_t lanes) {
        send_scheduler s(1 << 20);
        fi::stripe_policy policy {64 << 10, 128 << 10, false};
        policy.lanes = lanes;
        s.push(send_scheduler::lane::data, big(total));
        std::deque<tx_frame> out;
        std::uint32_t seq = 1;
        s.commit(out, 1024, std::size_t {1} << 40, seq, policy);
        BOOST_CHECK(s.empty());
        std::vector<std::size_t> lengths;
        std::size_t sum = 0;
        for (const auto& f : out) {
            lengths.push_back(f.h.length);
            sum += f.h.length;
        }
        BOOST_CHECK_EQUAL(sum, total);
        return lengths;
    };
    BOOST_CHECK(chunks_of(256 << 10, 8) == std::vector<std::size_t>(8, 32 << 10)); // one per lane
    BOOST_CHECK(chunks_of(64 << 10, 8) == std::vector<std::size_t>(2, 32 << 10)); // min_chunk
    BOOST_CHECK(chunks_of(4 << 20, 2) == std::vector<std::size_t>(32, 128 << 10)); // the stripe chunk
    BOOST_CHECK(chunks_of(100 << 10, 3) == (std::vector<std::size_t> {34134, 34134, 34132})); // rounded up
    BOOST_CHECK(chunks_of(256 << 10, 1) == std::vector<std::size_t>(2, 128 << 10)); // one lane: as before
}

BOOST_AUTO_TEST_CASE(rma_writes_are_not_striped)
{
    send_scheduler s(1 << 20);
    transfer w = big(1 << 20);
    w.type = wire::frame_type::rma_write;
    s.push(send_scheduler::lane::message, std::move(w));
    std::deque<tx_frame> p1;
    std::uint32_t seq = 1;
    BOOST_CHECK_EQUAL(s.commit(p1, 64, 1 << 30, seq, {256 << 10, 128 << 10, true}), 0u);
    s.commit(p1, 64, 1 << 30, seq, {256 << 10, 128 << 10, false});
    BOOST_REQUIRE_EQUAL(p1.size(), 1u); // one 1 MiB chunk, as the acknowledgements were counted
}

BOOST_AUTO_TEST_SUITE_END()
