// SPDX-License-Identifier: BSD-3-Clause
// A bounded-time fuzzer of /dev/o2g's user interface: random ioctl numbers
// and sizes, argument pointers that are NULL, kernel addresses, unmapped,
// straddling a guard page or valid with random or almost-valid contents,
// descriptors of every kind (pipes, UDP, listening and connected TCP, an
// eventfd, o2g contexts), mmap with random sizes and offsets, junk and
// almost-valid frames written into attached sockets, buffers unmapped and
// remapped under posted receives, contexts closed in any state, and
// entries of the posting ring (junk or almost valid, with heads that are
// garbage) taken by ioctls and by the receive path.
//
// The fuzzer's own verdict is only that it ran and that a few answers the
// interface promises hold (a foreign ioctl type is ENOTTY, unknown flags
// EINVAL); the real verdict is the guest's kernel log (no oops, BUG or
// WARN) and the module's counters coming back to zero (guest-init.sh).
//   o2g-fuzz SECONDS [SEED]
#include "o2g_device.hpp"

#include <arpa/inet.h>
#include <array>
#include <chrono>
#include <netinet/in.h>
#include <random>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <vector>

namespace {

using o2g_test::test_failure;

class fuzzer {
public:
    explicit fuzzer(std::uint64_t seed)
        : rng_(seed)
    {
        // Scratch memory the kernel may write into (receives, fail lists),
        // then a guard page, so structs can straddle into it.
        scratch_ = static_cast<std::uint8_t*>(
            ::mmap(nullptr, scratch_bytes + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        if (scratch_ == MAP_FAILED)
            throw test_failure("mmap scratch: " + o2g_test::errno_text(errno));
        ::mprotect(scratch_ + scratch_bytes, 4096, PROT_NONE);
        unmapped_ = static_cast<std::uint8_t*>(
            ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        ::munmap(unmapped_, 4096);
        make_descriptors();
        for (auto& c : contexts_)
            c = ::open(O2G_DEVICE_PATH, O_RDWR | O_CLOEXEC);
    }

    ~fuzzer()
    {
        for (int c : contexts_)
            ::close(c);
        for (int fd : fds_)
            ::close(fd);
    }

    void step()
    {
        ++steps_;
        const std::uint64_t what = pick(100);
        if (what < 3) {
            reopen();
        } else if (what < 5) {
            remap_scratch();
        } else if (what < 8) {
            random_mmap();
        } else if (what < 20) {
            write_junk();
        } else if (what < 30) {
            ring_junk();
        } else {
            random_ioctl();
        }
    }

    std::uint64_t steps() const noexcept { return steps_; }
    std::uint64_t reopened() const noexcept { return reopened_; }
    std::uint64_t accepted() const noexcept { return accepted_; }

    // Promises that must hold whatever state the context is in.
    void check_promises()
    {
        const int c = context();
        if (c < 0)
            return;
        if (::ioctl(c, _IOWR('x', 1, o2g_recv), scratch_) == 0 || errno != ENOTTY)
            throw test_failure("an ioctl of another type was not refused with ENOTTY");
        o2g_recv r {};
        r.flags = 0x80000000u;
        if (::ioctl(c, O2G_IOC_POST_RECV, &r) == 0 || (errno != EINVAL && errno != EPERM))
            throw test_failure("a receive with unknown flags was not refused (errno " + std::to_string(errno) + ")");
        o2g_info info {};
        if (::ioctl(c, O2G_IOC_INFO, &info) != 0 || info.abi_version != O2G_ABI_VERSION)
            throw test_failure("O2G_IOC_INFO failed or reports another ABI");
    }

private:
    static constexpr std::size_t scratch_bytes = 1u << 20;

    std::uint64_t pick(std::uint64_t n) { return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_); }
    std::uint64_t any64() { return rng_(); }

    int context() { return contexts_[pick(contexts_.size())]; }

    void make_descriptors()
    {
        int p[2];
        if (::pipe(p) == 0) {
            fds_.push_back(p[0]);
            fds_.push_back(p[1]);
        }
        fds_.push_back(::socket(AF_INET, SOCK_DGRAM, 0));
        fds_.push_back(::socket(AF_INET6, SOCK_STREAM, 0)); // never connected
        fds_.push_back(::eventfd(0, EFD_NONBLOCK));
        const int l = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a {};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (::bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) || ::listen(l, 16) ||
            ::getsockname(l, reinterpret_cast<sockaddr*>(&a), &len))
            throw test_failure("listener: " + o2g_test::errno_text(errno));
        fds_.push_back(l);
        for (int i = 0; i < 4; ++i) {
            const int c = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
            if (::connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a) && errno != EINPROGRESS)
                throw test_failure("connect: " + o2g_test::errno_text(errno));
            const int r = ::accept(l, nullptr, nullptr);
            if (r < 0)
                throw test_failure("accept: " + o2g_test::errno_text(errno));
            fds_.push_back(c);
            fds_.push_back(r);
            writers_.push_back(c);
            writers_.push_back(r);
        }
    }

    std::int32_t random_fd()
    {
        switch (pick(6)) {
        case 0:
            return static_cast<std::int32_t>(any64());
        case 1:
            return context();
        case 2:
            return -1;
        default:
            return fds_[pick(fds_.size())];
        }
    }

    // An address: mostly somewhere the kernel must refuse or may write.
    std::uint64_t random_address(std::size_t len)
    {
        switch (pick(9)) {
        case 0:
            return 0;
        case 1:
            return 0xffffffff81000000ull + pick(1 << 20); // kernel text
        case 2:
            return reinterpret_cast<std::uintptr_t>(unmapped_) + pick(4096);
        case 3:
            return reinterpret_cast<std::uintptr_t>(scratch_) + scratch_bytes - pick(64); // into the guard page
        case 4:
            return any64();
        case 5:
            return 0x00007ffffffff000ull + pick(8192); // the top of user space
        default: {
            const std::size_t room = len < scratch_bytes ? scratch_bytes - len : 0;
            return reinterpret_cast<std::uintptr_t>(scratch_) + (room ? pick(room) : 0);
        }
        }
    }

    std::uint64_t random_length()
    {
        switch (pick(5)) {
        case 0:
            return 0;
        case 1:
            return any64();
        case 2:
            return pick(1u << 21);
        default:
            return pick(8192);
        }
    }

    std::uint64_t random_source() { return pick(4) == 0 ? O2G_ANY_SOURCE : pick(8); }

    void almost_valid(unsigned long cmd, void* arg)
    {
        switch (_IOC_NR(cmd)) {
        case _IOC_NR(O2G_IOC_MATCH): {
            auto* op = static_cast<o2g_match_op*>(arg);
            op->opcode = static_cast<std::uint32_t>(pick(12));
            op->flags = pick(10) == 0 ? static_cast<std::uint32_t>(any64()) : static_cast<std::uint32_t>(pick(8));
            op->cookie = pick(64);
            op->claim_cookie = pick(8);
            op->source = random_source();
            op->tag = pick(8);
            op->ignore = pick(4) == 0 ? ~0ull : pick(4);
            op->capacity = random_length();
            op->length = random_length();
            op->list_len = pick(4) == 0 ? static_cast<std::uint32_t>(any64()) : static_cast<std::uint32_t>(pick(600));
            op->list = random_address(op->list_len * 8ull);
            break;
        }
        case _IOC_NR(O2G_IOC_POST_RECV): {
            auto* r = static_cast<o2g_recv*>(arg);
            r->cookie = pick(64);
            r->source = random_source();
            r->tag = pick(8);
            r->ignore = pick(4) == 0 ? ~0ull : 0;
            r->len = random_length();
            r->addr = random_address(r->len);
            // UNTAGGED and CLAIM (claims are small numbers, as peeks reserve them).
            r->flags = pick(8) == 0 ? static_cast<std::uint32_t>(any64()) : static_cast<std::uint32_t>(pick(4));
            r->claim = pick(8);
            break;
        }
        case _IOC_NR(O2G_IOC_PEEK): {
            auto* k = static_cast<o2g_peek*>(arg);
            k->source = random_source();
            k->tag = pick(8);
            k->ignore = pick(4) == 0 ? ~0ull : 0;
            k->claim = pick(8);
            k->flags = pick(8) == 0 ? static_cast<std::uint32_t>(any64()) : static_cast<std::uint32_t>(pick(4));
            break;
        }
        case _IOC_NR(O2G_IOC_CANCEL): {
            auto* c = static_cast<o2g_cancel*>(arg);
            c->cookie = pick(64);
            c->flags = static_cast<std::uint32_t>(pick(3));
            break;
        }
        case _IOC_NR(O2G_IOC_ATTACH): {
            auto* a = static_cast<o2g_attach*>(arg);
            a->fd = random_fd();
            a->flags = pick(8) == 0 ? static_cast<std::uint32_t>(any64()) : static_cast<std::uint32_t>(pick(4));
            a->source = random_source();
            break;
        }
        case _IOC_NR(O2G_IOC_TAKE_FRAME):
        case _IOC_NR(O2G_IOC_RESUME): {
            auto* h = static_cast<o2g_handoff*>(arg);
            h->fd = random_fd();
            h->flags = pick(8) == 0 ? static_cast<std::uint32_t>(any64()) : 0;
            break;
        }
        case _IOC_NR(O2G_IOC_DETACH):
        case _IOC_NR(O2G_IOC_SET_EVENTFD):
            *static_cast<std::int32_t*>(arg) = random_fd();
            break;
        }
    }

    void random_ioctl()
    {
        static const unsigned long valid[] = {O2G_IOC_INFO, O2G_IOC_MATCH, O2G_IOC_ATTACH, O2G_IOC_DETACH,
            O2G_IOC_POST_RECV, O2G_IOC_CANCEL, O2G_IOC_SET_EVENTFD, O2G_IOC_STATS, O2G_IOC_TAKE_FRAME, O2G_IOC_RESUME,
            O2G_IOC_FLUSH_POSTS, O2G_IOC_PEEK};
        unsigned long cmd;
        switch (pick(4)) {
        case 0:
            cmd = _IOC(pick(4), O2G_IOC_MAGIC, pick(16), pick(512)); // our type, any number and size
            break;
        case 1:
            cmd = static_cast<std::uint32_t>(any64());
            break;
        default:
            cmd = valid[pick(std::size(valid))];
        }
        // The argument: a struct in the scratch area (random or almost
        // valid contents), possibly running into the guard page, or a bad pointer.
        void* arg;
        const std::uint64_t where = pick(10);
        if (where < 7) {
            const std::size_t size = 512;
            std::uint8_t* p = scratch_ + (where == 0 ? scratch_bytes - pick(size) : pick(scratch_bytes - size));
            const std::size_t fill = std::min<std::size_t>(size, static_cast<std::size_t>(scratch_ + scratch_bytes - p));
            for (std::size_t i = 0; i < fill; ++i)
                p[i] = static_cast<std::uint8_t>(rng_());
            arg = p;
            if (where >= 3 && fill >= 512)
                almost_valid(cmd, p);
        } else {
            arg = reinterpret_cast<void*>(random_address(64));
        }
        if (::ioctl(context(), cmd, arg) == 0)
            ++accepted_;
        // Keep the ring moving on some contexts, so posting goes on.
        if (pick(8) == 0)
            drain_ring();
    }

    void drain_ring()
    {
        // Map, consume everything (or set a wild tail), unmap.
        const int c = context();
        const std::size_t bytes = (O2G_RING_BYTES(1024) + 4095) & ~std::size_t {4095};
        void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, c, 0);
        if (m == MAP_FAILED)
            return;
        auto* h = static_cast<o2g_ring_header*>(m);
        h->tail = pick(16) == 0 ? static_cast<std::uint32_t>(any64()) : h->head;
        ::munmap(m, bytes);
    }

    // Entries into a context's posting ring: random, or almost valid
    // receives and cancels; head advanced by what was written or set wild;
    // then taken by an ioctl, or left for the receive path.
    void ring_junk()
    {
        const int c = context();
        const std::size_t bytes = (O2G_POST_RING_BYTES(1024) + 4095) & ~std::size_t {4095};
        void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, c, O2G_POST_RING_OFFSET);
        if (m == MAP_FAILED)
            return;
        auto* h = static_cast<o2g_post_ring_header*>(m);
        auto* entries = reinterpret_cast<o2g_post*>(static_cast<std::uint8_t*>(m) + O2G_RING_HEADER_BYTES);
        const std::uint64_t n = 1 + pick(8);
        std::uint32_t head = h->head;
        for (std::uint64_t i = 0; i < n; ++i, ++head) {
            o2g_post& e = entries[head & 1023];
            auto* raw = reinterpret_cast<std::uint8_t*>(&e);
            for (std::size_t b = 0; b < sizeof e; ++b)
                raw[b] = static_cast<std::uint8_t>(rng_());
            if (pick(4) != 0) {
                e.op = pick(8) == 0 ? static_cast<std::uint32_t>(any64()) : static_cast<std::uint32_t>(1 + pick(2));
                // CLAIM (2) is refused in the ring: ioctl only.
                e.flags = pick(8) == 0 ? static_cast<std::uint32_t>(any64()) : static_cast<std::uint32_t>(pick(4));
                e.reserved = pick(8) == 0 ? any64() : 0;
                e.cookie = pick(64);
                e.source = random_source();
                e.tag = pick(8);
                e.ignore = pick(4) == 0 ? ~0ull : 0;
                e.len = random_length();
                e.addr = random_address(e.len);
            }
        }
        std::atomic_ref<std::uint32_t>(h->head).store(
            pick(16) == 0 ? static_cast<std::uint32_t>(any64()) : head, std::memory_order_release);
        if (pick(2))
            ::ioctl(c, O2G_IOC_FLUSH_POSTS, nullptr);
        ::munmap(m, bytes);
    }

    void random_mmap()
    {
        const std::size_t len = pick(3) == 0 ? (O2G_RING_BYTES(1024) + 4095) & ~std::size_t {4095} : pick(1 << 20) + 1;
        const off_t off = pick(3) == 0 ? 0
            : pick(4) == 0            ? static_cast<off_t>(O2G_POST_RING_OFFSET + pick(4) * 4096)
                                      : static_cast<off_t>(pick(16) * 4096);
        const int prot = pick(2) ? PROT_READ | PROT_WRITE : PROT_READ;
        const int flags = pick(4) ? MAP_SHARED : MAP_PRIVATE;
        void* m = ::mmap(nullptr, len, prot, flags, context(), off);
        if (m != MAP_FAILED) {
            // Touch it: the module's pages must be there.
            volatile std::uint8_t x = static_cast<std::uint8_t*>(m)[pick(std::min<std::size_t>(len, 4096))];
            (void)x;
            ::munmap(m, len);
        }
    }

    // Junk or an almost-valid frame into one end of a connection (attached or not).
    void write_junk()
    {
        std::uint8_t b[56 + 256];
        for (auto& x : b)
            x = static_cast<std::uint8_t>(rng_());
        std::size_t n = 1 + pick(sizeof b);
        if (pick(2)) {
            b[0] = static_cast<std::uint8_t>(3 + pick(3)); // msg, tagged or rts
            b[1] = static_cast<std::uint8_t>(pick(4)); // remote data, tagged (rts)
            b[2] = b[3] = 0;
            // An rts should have no payload; sometimes it has.
            const std::uint64_t len = b[0] == 5 && pick(4) != 0 ? 0 : pick(200);
            std::memcpy(b + 8, &len, 8);
            const std::uint64_t tag = pick(8);
            std::memcpy(b + 16, &tag, 8);
            n = 56 + pick(len + 1);
        }
        const ssize_t w = ::send(writers_[pick(writers_.size())], b, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)w;
    }

    // Unmaps the scratch area under whatever is posted there, and maps it again.
    void remap_scratch()
    {
        void* again = ::mmap(scratch_, scratch_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (again != scratch_)
            throw test_failure("remapping the scratch area failed");
    }

    void reopen()
    {
        const std::size_t i = pick(contexts_.size());
        ::close(contexts_[i]);
        contexts_[i] = ::open(O2G_DEVICE_PATH, O_RDWR | O_CLOEXEC);
        if (contexts_[i] < 0)
            throw test_failure("reopening " O2G_DEVICE_PATH ": " + o2g_test::errno_text(errno));
        ++reopened_;
    }

    std::mt19937_64 rng_;
    std::uint8_t* scratch_ = nullptr;
    std::uint8_t* unmapped_ = nullptr;
    std::vector<int> fds_;
    std::vector<int> writers_;
    std::array<int, 3> contexts_ {};
    std::uint64_t steps_ = 0, reopened_ = 0, accepted_ = 0;
};

} // namespace

int main(int argc, char** argv)
{
    const double seconds = argc > 1 ? std::atof(argv[1]) : 10;
    const std::uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 0) : 0x02f2;
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    try {
        fuzzer f(seed);
        // Bounded by time and by count, whichever comes first.
        while (elapsed() < seconds && f.steps() < 2000000) {
            f.step();
            if (f.steps() % 1000 == 0)
                f.check_promises();
        }
        f.check_promises();
        char detail[200];
        std::snprintf(detail, sizeof detail, "%llu operations in %.1f s (seed %llu), %llu accepted, %llu contexts reopened",
            static_cast<unsigned long long>(f.steps()), elapsed(), static_cast<unsigned long long>(seed),
            static_cast<unsigned long long>(f.accepted()), static_cast<unsigned long long>(f.reopened()));
        o2g_test::report("ioctl-fuzz", true, detail);
        return 0;
    } catch (const std::exception& e) {
        o2g_test::report("ioctl-fuzz", false, e.what());
        return 1;
    }
}
