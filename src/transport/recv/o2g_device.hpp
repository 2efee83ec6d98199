// SPDX-License-Identifier: BSD-3-Clause
// One context of the o2g kernel module (kmod/, /dev/o2g) as the provider
// uses it: the descriptor, the mapped completion ring and (ABI 3) the
// mapped posting ring, owned for the
// context's lifetime (closing the descriptor gives every attached socket
// back and unpins everything, also when the process dies), and the ioctls
// of kmod/include/uapi/o2g.h with their errors as negative errno values.
//
// Progress thread only.
#pragma once

extern "C" {
#include "uapi/o2g.h"
}

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace hashi::fi {

class o2g_device {
public:
    // Opens /dev/o2g (or `path`) and maps the ring; throws std::runtime_error
    // saying what is missing and what to do.
    explicit o2g_device(const char* path = O2G_DEVICE_PATH);
    ~o2g_device();
    o2g_device(const o2g_device&) = delete;
    o2g_device& operator=(const o2g_device&) = delete;

    int fd() const noexcept { return fd_; }

    // 0 or -errno.
    int attach(int sock, std::uint64_t source, std::uint32_t flags) noexcept;
    int detach(int sock) noexcept;
    int post(o2g_recv& r) noexcept;
    int cancel(o2g_cancel& c) noexcept;
    int peek(o2g_peek& k) noexcept;
    int take_frame(o2g_handoff& h) noexcept;
    int resume(int sock) noexcept;
    int stats(o2g_stats& s) const noexcept;

    // The next completion in the ring, consumed; nullopt when none. No
    // system call: the ring is shared memory.
    std::optional<o2g_completion> next() noexcept;
    // Completions written and not consumed yet.
    std::uint32_t unread() const noexcept;

    // The posting ring (uapi/o2g.h): false when the module has none or it
    // is full, and the caller posts by ioctl. The entry is the module's
    // once written: no system call. If the module asked for attention (it
    // holds unexpected messages or a stopped socket), the entries must not
    // wait for a frame: flush_posts() takes them all with one
    // O2G_IOC_FLUSH_POSTS, once per progress round however many were
    // written (a receive completes through progress anyway).
    bool has_post_ring() const noexcept { return posts_ != nullptr; }
    bool ring_post(const o2g_post& e) noexcept;
    void flush_posts() noexcept;
    std::uint32_t ring_entries() const noexcept { return ring_entries_; }
    std::uint64_t max_posted() const noexcept { return max_posted_; }
    // Pages this context may pin with the rest of the process's pins
    // (RLIMIT_MEMLOCK when it opened the device), O2G_MEMLOCK_UNLIMITED
    // when there is no limit.
    std::uint64_t memlock_pages() const noexcept { return memlock_pages_; }

private:
    int fd_ = -1;
    void* ring_ = nullptr;
    std::size_t ring_bytes_ = 0;
    void* posts_ = nullptr;
    std::size_t posts_bytes_ = 0;
    std::uint32_t ring_entries_ = 0;
    std::uint64_t max_posted_ = 0;
    std::uint64_t memlock_pages_ = O2G_MEMLOCK_UNLIMITED;
    bool flush_wanted_ = false; // a ring post saw attention: flush_posts() has work
};

} // namespace hashi::fi
