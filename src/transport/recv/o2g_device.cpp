// SPDX-License-Identifier: BSD-3-Clause
// The o2g context (o2g_device.hpp).
#include "transport/recv/o2g_device.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace hashi::fi {

namespace {

int call(int fd, unsigned long cmd, void* arg) noexcept
{
    return ::ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

} // namespace

o2g_device::o2g_device(const char* path)
{
    fd_ = ::open(path, O_RDWR | O_CLOEXEC);
    if (fd_ < 0) {
        const int e = errno;
        throw std::runtime_error(std::string("cannot open ") + path + ": " + std::strerror(e) +
            (e == ENOENT ? " (load the o2g module: modprobe o2g, from the hashi-o2g-dkms package)" : ""));
    }
    // The structs this provider was built with are the module's only at
    // its ABI (ioctl numbers carry their sizes, the ring its entry size).
    o2g_info info {};
    if (const int e = call(fd_, O2G_IOC_INFO, &info); e != 0) {
        ::close(fd_);
        throw std::runtime_error(std::string(path) + " is not an o2g device (it does not answer O2G_IOC_INFO: " +
            std::strerror(-e) + "): load the o2g module of this release (package hashi-o2g-dkms), or use "
                                "FI_HASHI_RECV=user");
    }
    if (info.abi_version != O2G_ABI_VERSION) {
        ::close(fd_);
        throw std::runtime_error(std::string(path) + " is an o2g module of ABI " + std::to_string(info.abi_version) +
            ", this provider needs ABI " + std::to_string(O2G_ABI_VERSION) +
            ": install this release's hashi-o2g-dkms (or use FI_HASHI_RECV=user)");
    }
    ring_bytes_ = (O2G_RING_BYTES(info.ring_entries) + 4095) & ~std::size_t {4095};
    ring_ = ::mmap(nullptr, ring_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (ring_ == MAP_FAILED) {
        const int e = errno;
        ::close(fd_);
        throw std::runtime_error(std::string("cannot map the o2g completion ring: ") + std::strerror(e));
    }
    ring_entries_ = info.ring_entries;
    max_posted_ = info.max_posted;
    memlock_pages_ = info.memlock_pages;
    // Without it every receive is an ioctl: slower, not wrong.
    posts_bytes_ = (O2G_POST_RING_BYTES(info.ring_entries) + 4095) & ~std::size_t {4095};
    posts_ = ::mmap(nullptr, posts_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, O2G_POST_RING_OFFSET);
    if (posts_ == MAP_FAILED)
        posts_ = nullptr;
}

o2g_device::~o2g_device()
{
    if (posts_ != nullptr)
        ::munmap(posts_, posts_bytes_);
    ::munmap(ring_, ring_bytes_);
    ::close(fd_);
}

int o2g_device::attach(int sock, std::uint64_t source, std::uint32_t flags) noexcept
{
    o2g_attach a {};
    a.fd = sock;
    a.flags = flags;
    a.source = source;
    return call(fd_, O2G_IOC_ATTACH, &a);
}

int o2g_device::detach(int sock) noexcept
{
    std::int32_t s = sock;
    return call(fd_, O2G_IOC_DETACH, &s);
}

int o2g_device::post(o2g_recv& r) noexcept { return call(fd_, O2G_IOC_POST_RECV, &r); }
int o2g_device::cancel(o2g_cancel& c) noexcept { return call(fd_, O2G_IOC_CANCEL, &c); }
int o2g_device::peek(o2g_peek& k) noexcept { return call(fd_, O2G_IOC_PEEK, &k); }
int o2g_device::take_frame(o2g_handoff& h) noexcept { return call(fd_, O2G_IOC_TAKE_FRAME, &h); }
int o2g_device::stats(o2g_stats& s) const noexcept { return call(fd_, O2G_IOC_STATS, &s); }

int o2g_device::resume(int sock) noexcept
{
    o2g_handoff h {};
    h.fd = sock;
    return call(fd_, O2G_IOC_RESUME, &h);
}

std::optional<o2g_completion> o2g_device::next() noexcept
{
    auto* h = static_cast<o2g_ring_header*>(ring_);
    auto* entries = reinterpret_cast<const o2g_completion*>(static_cast<const char*>(ring_) + O2G_RING_HEADER_BYTES);
    // The module writes an entry, then publishes head (release); we read
    // head (acquire), then the entry, then hand the slot back through tail.
    const std::uint32_t head = std::atomic_ref<std::uint32_t>(h->head).load(std::memory_order_acquire);
    const std::uint32_t tail = h->tail;
    if (head == tail)
        return std::nullopt;
    const o2g_completion c = entries[tail & (h->entries - 1)];
    std::atomic_ref<std::uint32_t>(h->tail).store(tail + 1, std::memory_order_release);
    return c;
}

} // namespace hashi::fi

namespace hashi::fi {

std::uint32_t o2g_device::unread() const noexcept
{
    auto* h = static_cast<o2g_ring_header*>(ring_);
    return std::atomic_ref<std::uint32_t>(h->head).load(std::memory_order_acquire) - h->tail;
}

bool o2g_device::ring_post(const o2g_post& e) noexcept
{
    if (posts_ == nullptr)
        return false;
    auto* h = static_cast<o2g_post_ring_header*>(posts_);
    auto* entries = reinterpret_cast<o2g_post*>(static_cast<char*>(posts_) + O2G_RING_HEADER_BYTES);
    const std::uint32_t head = h->head; // ours alone
    const std::uint32_t tail = std::atomic_ref<std::uint32_t>(h->tail).load(std::memory_order_acquire);
    if (head - tail >= h->entries)
        return false;
    entries[head & (h->entries - 1)] = e;
    std::atomic_ref<std::uint32_t>(h->head).store(head + 1, std::memory_order_release);
    // Pairs with the module's barrier between holding a message (or
    // stopping a socket) and looking at head: either it sees this entry,
    // or we see attention and have it taken at the next flush_posts().
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (std::atomic_ref<std::uint32_t>(h->attention).load(std::memory_order_relaxed) != 0)
        flush_wanted_ = true;
    return true;
}

void o2g_device::flush_posts() noexcept
{
    if (!flush_wanted_)
        return;
    flush_wanted_ = false;
    call(fd_, O2G_IOC_FLUSH_POSTS, nullptr);
}

} // namespace hashi::fi
