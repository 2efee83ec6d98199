// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of FrameQueue against a plain std::deque as the model: frames
// come out in order, intact, with their due times, through many wraps of
// the ring; a full ring refuses frames and never holds more than its size.
#define BOOST_TEST_MODULE delayline_frame_queue
#include "frame_queue.hpp"

#include <boost/test/unit_test.hpp>
#include <deque>
#include <random>
#include <vector>

using hashi::delayline::FrameQueue;

namespace {

struct Frame {
    std::vector<std::byte> bytes;
    std::int64_t due;
};

Frame make_frame(std::mt19937& rng, std::size_t len, std::int64_t due)
{
    Frame f {std::vector<std::byte>(len), due};
    for (auto& b : f.bytes) {
        b = static_cast<std::byte>(rng());
    }
    return f;
}

void check_front(const FrameQueue& q, const Frame& want)
{
    BOOST_REQUIRE(!q.empty());
    BOOST_CHECK_EQUAL(q.front_due(), want.due);
    const auto got = q.front();
    BOOST_REQUIRE_EQUAL(got.size(), want.bytes.size());
    BOOST_CHECK(std::equal(got.begin(), got.end(), want.bytes.begin()));
}

} // namespace

BOOST_AUTO_TEST_CASE(empty_queue)
{
    FrameQueue q(4096);
    BOOST_CHECK(q.empty());
    BOOST_CHECK_EQUAL(q.frames(), 0U);
    BOOST_CHECK_EQUAL(q.bytes(), 0U);
}

BOOST_AUTO_TEST_CASE(full_queue_refuses_until_popped)
{
    FrameQueue q(1024);
    std::mt19937 rng(1); // NOLINT(cert-msc32-c,cert-msc51-cpp): reproducible on purpose
    std::deque<Frame> model;
    // 100-byte frames take 16 + 104 bytes each: 8 fit in 1024.
    for (int i = 0; i < 8; ++i) {
        model.push_back(make_frame(rng, 100, i));
        BOOST_REQUIRE(q.push(model.back().bytes, i));
    }
    const Frame extra = make_frame(rng, 100, 99);
    BOOST_CHECK(!q.push(extra.bytes, extra.due));
    BOOST_CHECK_EQUAL(q.frames(), 8U);
    check_front(q, model.front());
    q.pop();
    model.pop_front();
    // The freed room is at the start of the ring: the next frame wraps.
    BOOST_CHECK(q.push(extra.bytes, extra.due));
    model.push_back(extra);
    while (!model.empty()) {
        check_front(q, model.front());
        q.pop();
        model.pop_front();
    }
    BOOST_CHECK(q.empty());
}

BOOST_AUTO_TEST_CASE(frame_larger_than_the_ring)
{
    FrameQueue q(256);
    const std::vector<std::byte> big(300);
    BOOST_CHECK(!q.push(big, 0));
    BOOST_CHECK(q.empty());
}

BOOST_AUTO_TEST_CASE(zero_length_frame)
{
    FrameQueue q(256);
    BOOST_REQUIRE(q.push({}, 7));
    BOOST_CHECK_EQUAL(q.front_due(), 7);
    BOOST_CHECK_EQUAL(q.front().size(), 0U);
    q.pop();
    BOOST_CHECK(q.empty());
}

BOOST_AUTO_TEST_CASE(random_traffic_matches_the_model)
{
    constexpr std::size_t capacity = std::size_t {64} * 1024;
    FrameQueue q(capacity);
    std::deque<Frame> model;
    std::mt19937 rng(42); // NOLINT(cert-msc32-c,cert-msc51-cpp): reproducible on purpose
    std::uniform_int_distribution<std::size_t> size(0, 9000);
    std::int64_t due = 0;
    std::size_t refused = 0;
    for (int step = 0; step < 200000; ++step) {
        if (rng() % 2 == 0) {
            Frame f = make_frame(rng, size(rng), ++due);
            if (q.push(f.bytes, f.due)) {
                model.push_back(std::move(f));
            } else {
                ++refused;
                // Refused only when the frame really does not fit.
                BOOST_REQUIRE(!model.empty());
            }
        } else if (!model.empty()) {
            check_front(q, model.front());
            q.pop();
            model.pop_front();
        }
        BOOST_REQUIRE_EQUAL(q.frames(), model.size());
        BOOST_REQUIRE_LE(q.bytes(), capacity);
    }
    BOOST_TEST_MESSAGE("refused " << refused << " frames");
    BOOST_CHECK_GT(refused, 0U); // the ring was driven full, not only half used
}
