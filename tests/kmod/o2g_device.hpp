// SPDX-License-Identifier: BSD-3-Clause
// What the o2g VM tests share: a context (/dev/o2g) with its ioctls, the
// mapped completion ring, the module's counters from sysfs, and the one
// line format the host script counts ("KMOD-CHECK name PASS|FAIL detail").
#pragma once

extern "C" {
#include "uapi/o2g.h"
}

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

namespace o2g_test {

inline void report(const std::string& name, bool ok, const std::string& detail = "")
{
    std::printf("KMOD-CHECK %s %s%s%s\n", name.c_str(), ok ? "PASS" : "FAIL", detail.empty() ? "" : " ",
        detail.c_str());
    std::fflush(stdout);
}

struct test_failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline std::string errno_text(int e)
{
    return std::string(std::strerror(e)) + " (errno " + std::to_string(e) + ")";
}

// A number from a sysfs file; nullopt if absent.
inline std::optional<long long> sysfs_number(const std::string& path)
{
    std::ifstream in(path);
    long long v = 0;
    if (!(in >> v))
        return std::nullopt;
    return v;
}

// A module counter from /sys/class/misc/o2g/counters/NAME; nullopt if absent.
inline std::optional<long long> module_counter(const std::string& name)
{
    return sysfs_number("/sys/class/misc/o2g/counters/" + name);
}

// A module parameter from /sys/module/o2g/parameters/NAME; nullopt if absent.
inline std::optional<long long> module_parameter(const std::string& name)
{
    return sysfs_number("/sys/module/o2g/parameters/" + name);
}

// Waits (bounded) until pred() holds; the bound is a safety net, never the check.
template <class Pred> bool eventually(Pred pred, std::chrono::seconds bound = std::chrono::seconds(30))
{
    const auto until = std::chrono::steady_clock::now() + bound;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > until)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
}

// One open /dev/o2g: a context.
class context {
public:
    context()
        : fd_(::open(O2G_DEVICE_PATH, O_RDWR | O_CLOEXEC))
    {
        if (fd_ < 0)
            throw test_failure("open " O2G_DEVICE_PATH ": " + errno_text(errno));
    }
    context(const context&) = delete;
    context& operator=(const context&) = delete;
    ~context()
    {
        if (posts_ != MAP_FAILED)
            ::munmap(posts_, posts_bytes_);
        if (ring_ != MAP_FAILED)
            ::munmap(ring_, ring_bytes_);
        ::close(fd_);
    }
    int fd() const noexcept { return fd_; }

    // The ioctl's result: 0 or -errno.
    template <class T> int call(unsigned long cmd, T* arg) const noexcept
    {
        return ::ioctl(fd_, cmd, arg) < 0 ? -errno : 0;
    }
    template <class T> void must(unsigned long cmd, T* arg, const char* what) const
    {
        if (int e = call(cmd, arg); e < 0)
            throw test_failure(std::string(what) + ": " + errno_text(-e));
    }

    o2g_stats stats() const
    {
        o2g_stats s {};
        must(O2G_IOC_STATS, &s, "O2G_IOC_STATS");
        return s;
    }

    void attach(int sock, std::uint64_t source) const
    {
        o2g_attach a {};
        a.fd = sock;
        a.source = source;
        must(O2G_IOC_ATTACH, &a, "O2G_IOC_ATTACH");
    }

    // Maps the completion ring (once).
    void map_ring()
    {
        o2g_info info {};
        must(O2G_IOC_INFO, &info, "O2G_IOC_INFO");
        ring_bytes_ = (O2G_RING_BYTES(info.ring_entries) + 4095) & ~std::size_t {4095};
        ring_ = ::mmap(nullptr, ring_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
        if (ring_ == MAP_FAILED)
            throw test_failure("mmap of the completion ring: " + errno_text(errno));
    }

    // Maps the posting ring (once).
    void map_post_ring()
    {
        o2g_info info {};
        must(O2G_IOC_INFO, &info, "O2G_IOC_INFO");
        posts_bytes_ = (O2G_POST_RING_BYTES(info.ring_entries) + 4095) & ~std::size_t {4095};
        posts_ = ::mmap(nullptr, posts_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, O2G_POST_RING_OFFSET);
        if (posts_ == MAP_FAILED)
            throw test_failure("mmap of the posting ring: " + errno_text(errno));
    }
    o2g_post_ring_header& post_header() const { return *static_cast<o2g_post_ring_header*>(posts_); }

    // One entry into the posting ring, as the provider writes it: the
    // entry, then head, then (unless told not to) O2G_IOC_FLUSH_POSTS if
    // the module asks for attention. Throws when the ring is full.
    void ring_post(const o2g_post& e, bool flush_on_attention = true)
    {
        auto& h = post_header();
        auto* entries = reinterpret_cast<o2g_post*>(static_cast<char*>(posts_) + O2G_RING_HEADER_BYTES);
        const std::uint32_t tail = std::atomic_ref<std::uint32_t>(h.tail).load(std::memory_order_acquire);
        if (h.head - tail >= h.entries)
            throw test_failure("the posting ring is full");
        entries[h.head & (h.entries - 1)] = e;
        std::atomic_ref<std::uint32_t>(h.head).store(h.head + 1, std::memory_order_release);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (flush_on_attention && std::atomic_ref<std::uint32_t>(h.attention).load(std::memory_order_relaxed))
            must(O2G_IOC_FLUSH_POSTS, static_cast<void*>(nullptr), "O2G_IOC_FLUSH_POSTS");
    }

    // The next completion, waiting for it (bounded); nullopt when none came.
    std::optional<o2g_completion> next_completion(std::chrono::seconds bound = std::chrono::seconds(60))
    {
        auto* h = static_cast<o2g_ring_header*>(ring_);
        auto* entries = reinterpret_cast<o2g_completion*>(static_cast<char*>(ring_) + O2G_RING_HEADER_BYTES);
        std::atomic_ref<std::uint32_t> head(h->head);
        if (!eventually([&] { return head.load(std::memory_order_acquire) != h->tail; }, bound))
            return std::nullopt;
        o2g_completion c = entries[h->tail & (h->entries - 1)];
        std::atomic_ref<std::uint32_t>(h->tail).store(h->tail + 1, std::memory_order_release);
        return c;
    }

private:
    int fd_;
    void* ring_ = MAP_FAILED;
    std::size_t ring_bytes_ = 0;
    void* posts_ = MAP_FAILED;
    std::size_t posts_bytes_ = 0;
};

} // namespace o2g_test
