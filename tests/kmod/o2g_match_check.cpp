// SPDX-License-Identifier: BSD-3-Clause
// The o2g module's matching engine against the provider's: every scenario
// of tests/unit/data/match-vectors.txt played through O2G_IOC_MATCH by the
// same player the user-space engine's unit test uses (vectors::run), then
// a differential run: the same random operations on the kernel engine and
// on the user-space match_engine, every result compared.
//   o2g-match-check VECTORS_FILE [RANDOM_OPS]
#include "o2g_device.hpp"

#include "transport/match/match_engine.hpp"
#include "transport/match/match_vectors.hpp"

#include <random>
#include <sstream>
#include <vector>

namespace {

using namespace hashi::match;
using o2g_test::context;
using o2g_test::test_failure;

// match_backend over one o2g context: each call is one ioctl.
class kernel_match_backend final : public match_backend {
public:
    explicit kernel_match_backend(bool untagged)
        : untagged_(untagged)
    {
    }

    std::optional<match_result> post(const posted_recv& recv) override
    {
        o2g_match_op op = start(O2G_MATCH_POST);
        op.cookie = recv.cookie;
        op.source = recv.source;
        op.tag = recv.tag;
        op.ignore = recv.ignore;
        op.capacity = recv.capacity;
        if (recv.persistent)
            op.flags |= O2G_MATCH_PERSISTENT;
        run(op, "post");
        return match_of(op);
    }

    std::optional<match_result> arrive(const arrived_msg& msg) override
    {
        o2g_match_op op = start(O2G_MATCH_ARRIVE);
        op.cookie = msg.cookie;
        op.source = msg.source;
        op.tag = msg.tag;
        op.data = msg.data;
        op.length = msg.length;
        run(op, "arrive");
        return match_of(op);
    }

    std::optional<arrived_msg> peek(
        source_t source, std::uint64_t tag, std::uint64_t ignore, std::optional<std::uint64_t> claim_cookie) override
    {
        o2g_match_op op = start(O2G_MATCH_PEEK);
        op.source = source;
        op.tag = tag;
        op.ignore = ignore;
        if (claim_cookie) {
            op.flags |= O2G_MATCH_HAS_CLAIM;
            op.claim_cookie = *claim_cookie;
        }
        run(op, "peek");
        return message_of(op);
    }

    std::optional<arrived_msg> claim(std::uint64_t claim_cookie) override
    {
        o2g_match_op op = start(O2G_MATCH_CLAIM);
        op.claim_cookie = claim_cookie;
        run(op, "claim");
        return message_of(op);
    }

    bool cancel(std::uint64_t recv_cookie) override { return removed(O2G_MATCH_CANCEL, recv_cookie); }
    bool remove_posted(std::uint64_t recv_cookie) override { return removed(O2G_MATCH_REMOVE, recv_cookie); }

    std::vector<posted_recv> fail_source(source_t source) override
    {
        std::vector<std::uint64_t> cookies(512);
        o2g_match_op op = start(O2G_MATCH_FAIL);
        op.source = source;
        op.list = reinterpret_cast<std::uintptr_t>(cookies.data());
        op.list_len = static_cast<std::uint32_t>(cookies.size());
        run(op, "fail");
        std::vector<posted_recv> failed(op.list_count);
        for (std::uint32_t i = 0; i < op.list_count; ++i)
            failed[i].cookie = cookies[i];
        return failed;
    }

    void renumber_unexpected(const std::vector<std::uint64_t>& msg_cookies, source_t source) override
    {
        o2g_match_op op = start(O2G_MATCH_RENUMBER);
        op.source = source;
        op.list = reinterpret_cast<std::uintptr_t>(msg_cookies.data());
        op.list_len = static_cast<std::uint32_t>(msg_cookies.size());
        run(op, "renumber");
    }

    std::size_t posted_depth() const noexcept override { return depth().posted_depth; }
    std::size_t unexpected_depth() const noexcept override { return depth().unexpected_depth; }

private:
    o2g_match_op start(std::uint32_t opcode) const
    {
        o2g_match_op op {};
        op.opcode = opcode;
        op.flags = untagged_ ? O2G_MATCH_UNTAGGED : 0;
        return op;
    }
    void run(o2g_match_op& op, const char* what) const
    {
        if (int e = ctx_.call(O2G_IOC_MATCH, &op); e < 0)
            throw test_failure(std::string("O2G_IOC_MATCH ") + what + ": " + o2g_test::errno_text(-e));
    }
    o2g_match_op depth() const noexcept
    {
        o2g_match_op op = start(O2G_MATCH_DEPTH);
        if (ctx_.call(O2G_IOC_MATCH, &op) < 0)
            op.posted_depth = op.unexpected_depth = ~0ull;
        return op;
    }
    bool removed(std::uint32_t opcode, std::uint64_t cookie)
    {
        o2g_match_op op = start(opcode);
        op.cookie = cookie;
        run(op, "cancel/remove");
        if (op.result != O2G_RESULT_TRUE && op.result != O2G_RESULT_FALSE)
            throw test_failure("cancel/remove answered result " + std::to_string(op.result));
        return op.result == O2G_RESULT_TRUE;
    }
    static arrived_msg msg_of(const o2g_match_op& op)
    {
        return arrived_msg {op.msg.cookie, op.msg.source, op.msg.tag, op.msg.data, op.msg.length};
    }
    static std::optional<match_result> match_of(const o2g_match_op& op)
    {
        if (op.result == O2G_RESULT_QUEUED)
            return std::nullopt;
        if (op.result != O2G_RESULT_MATCH)
            throw test_failure("post/arrive answered result " + std::to_string(op.result));
        posted_recv r;
        r.cookie = op.recv.cookie;
        r.source = op.recv.source;
        r.tag = op.recv.tag;
        r.ignore = op.recv.ignore;
        r.capacity = op.recv.capacity;
        r.persistent = op.recv.persistent != 0;
        return match_result {r, msg_of(op), op.truncated != 0};
    }
    static std::optional<arrived_msg> message_of(const o2g_match_op& op)
    {
        if (op.result == O2G_RESULT_NONE)
            return std::nullopt;
        if (op.result != O2G_RESULT_MESSAGE)
            throw test_failure("peek/claim answered result " + std::to_string(op.result));
        return msg_of(op);
    }

    context ctx_;
    bool untagged_;
};

std::string text(const std::optional<match_result>& r)
{
    if (!r)
        return "queued";
    std::ostringstream s;
    s << "match recv=" << r->recv.cookie << " src=" << r->recv.source << " tag=" << r->recv.tag
      << " ignore=" << r->recv.ignore << " cap=" << r->recv.capacity << " multi=" << r->recv.persistent
      << " msg=" << r->msg.cookie << " src=" << r->msg.source << " tag=" << r->msg.tag << " len=" << r->msg.length
      << " data=" << r->msg.data << " trunc=" << r->truncated;
    return s.str();
}

std::string text(const std::optional<arrived_msg>& m)
{
    if (!m)
        return "nomsg";
    std::ostringstream s;
    s << "msg=" << m->cookie << " src=" << m->source << " tag=" << m->tag << " len=" << m->length
      << " data=" << m->data;
    return s.str();
}

// Random operations on both engines; the first difference, or nullopt.
std::optional<std::string> differential(match_backend& kernel, match_backend& user, std::uint32_t seed, int ops)
{
    std::mt19937_64 rng(seed);
    auto pick = [&](std::uint64_t n) { return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng); };
    // Small spaces, so that matches, wildcards and collisions are common.
    auto source = [&]() -> source_t { return pick(5) == 0 ? any_source : pick(4); };
    auto tag = [&]() -> std::uint64_t { return pick(4) | (pick(8) == 0 ? 0x100 : 0); };
    auto ignore = [&]() -> std::uint64_t { return pick(6) == 0 ? 0x3 : (pick(12) == 0 ? ~0ull : 0); };
    std::uint64_t next_cookie = 1;
    for (int i = 0; i < ops; ++i) {
        std::string k, u;
        const std::uint64_t what = pick(100);
        std::ostringstream step;
        if (what < 30) {
            // A persistent receive matches again and again, so keep them rare.
            posted_recv r {next_cookie++, source(), tag(), ignore(), pick(64), pick(40) == 0};
            step << "post cookie=" << r.cookie << " src=" << r.source << " tag=" << r.tag << " multi=" << r.persistent;
            if (kernel.posted_depth() >= 400)
                continue; // below the module's max_posted
            k = text(kernel.post(r));
            u = text(user.post(r));
        } else if (what < 62) {
            arrived_msg m {next_cookie++, source(), tag(), pick(1000), pick(100)};
            step << "arrive cookie=" << m.cookie << " src=" << m.source << " tag=" << m.tag;
            if (kernel.unexpected_depth() >= 900)
                continue; // below the module's max_unexpected_msgs
            k = text(kernel.arrive(m));
            u = text(user.arrive(m));
        } else if (what < 75) {
            const source_t s = source();
            const std::uint64_t t = tag(), ig = ignore();
            std::optional<std::uint64_t> claim;
            if (pick(2))
                claim = 10000 + pick(8);
            step << "peek src=" << s << " tag=" << t << " claim=" << (claim ? *claim : 0);
            k = text(kernel.peek(s, t, ig, claim));
            u = text(user.peek(s, t, ig, claim));
        } else if (what < 82) {
            const std::uint64_t c = 10000 + pick(8);
            step << "claim " << c;
            k = text(kernel.claim(c));
            u = text(user.claim(c));
        } else if (what < 92) {
            const std::uint64_t c = next_cookie > 1 ? 1 + pick(next_cookie - 1) : 1;
            const bool remove = pick(2);
            step << (remove ? "remove " : "cancel ") << c;
            k = std::to_string(remove ? kernel.remove_posted(c) : kernel.cancel(c));
            u = std::to_string(remove ? user.remove_posted(c) : user.cancel(c));
        } else if (what < 95) {
            const source_t s = source();
            step << "fail src=" << s;
            for (const posted_recv& r : kernel.fail_source(s))
                k += std::to_string(r.cookie) + ",";
            for (const posted_recv& r : user.fail_source(s))
                u += std::to_string(r.cookie) + ",";
        } else {
            std::vector<std::uint64_t> cookies;
            for (int n = 0; n < 4 && next_cookie > 1; ++n)
                cookies.push_back(1 + pick(next_cookie - 1));
            const source_t s = source();
            step << "renumber src=" << s;
            kernel.renumber_unexpected(cookies, s);
            user.renumber_unexpected(cookies, s);
        }
        k += " depth=" + std::to_string(kernel.posted_depth()) + "/" + std::to_string(kernel.unexpected_depth());
        u += " depth=" + std::to_string(user.posted_depth()) + "/" + std::to_string(user.unexpected_depth());
        if (k != u)
            return "seed " + std::to_string(seed) + " op " + std::to_string(i) + " '" + step.str() + "': kernel '" + k +
                "', user-space '" + u + "'";
    }
    return std::nullopt;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s VECTORS_FILE [RANDOM_OPS]\n", argv[0]);
        return 2;
    }
    const int random_ops = argc > 2 ? std::atoi(argv[2]) : 20000;
    int failures = 0;
    try {
        const vectors::parse_result vs = vectors::load(argv[1]);
        if (!vs.ok()) {
            o2g_test::report("match-vectors-parse", false, vs.error);
            return 1;
        }
        for (const vectors::scenario& s : vs.scenarios) {
            // Each scenario on a new, empty engine: a new context.
            kernel_match_backend kernel(false);
            std::optional<std::string> mismatch;
            try {
                mismatch = vectors::run(kernel, s, argv[1]);
            } catch (const test_failure& e) {
                mismatch = e.what();
            }
            o2g_test::report("match-vector:" + s.name, !mismatch, mismatch.value_or(""));
            failures += mismatch ? 1 : 0;
        }
        o2g_test::report("match-vectors-count", vs.scenarios.size() == 59,
            std::to_string(vs.scenarios.size()) + " scenarios (the file has 59)");
        failures += vs.scenarios.size() == 59 ? 0 : 1;

        for (bool untagged : {false, true}) {
            kernel_match_backend kernel(untagged);
            match_engine user;
            const std::uint32_t seed = untagged ? 2 : 1;
            std::optional<std::string> diff = differential(kernel, user, seed, random_ops);
            o2g_test::report(untagged ? "match-differential-untagged" : "match-differential-tagged", !diff,
                diff.value_or(std::to_string(random_ops) + " random operations, identical results"));
            failures += diff ? 1 : 0;
        }
    } catch (const std::exception& e) {
        o2g_test::report("match-check", false, e.what());
        return 1;
    }
    return failures ? 1 : 0;
}
