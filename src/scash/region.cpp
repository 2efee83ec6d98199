// SPDX-License-Identifier: BSD-3-Clause
#include "scash/region.hpp"

#include "common/environment.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace hashi::scash {

namespace {

// The window: far from the heap (low addresses) and from the mmap area and
// stacks (just below 0x7fff...). SCASH_BASE (hex) moves it if a program
// already uses these addresses.
constexpr std::uintptr_t kDefaultBase = 0x200000000000ull;
constexpr std::size_t kWindowBytes = std::size_t(1) << 40; // 1 TiB of address space, no memory

} // namespace

Region::~Region()
{
    if (app)
        mmap(app, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    if (backing)
        munmap(backing, bytes);
    if (twins)
        munmap(twins, bytes);
    if (memfd >= 0)
        close(memfd);
}

bool RegionTable::reserve(std::string& why)
{
    const auto env_base = env_whole("SCASH_BASE", kDefaultBase, {.base = 16}, why);
    if (!env_base)
        return false;
    const auto base = std::uintptr_t(*env_base);
    void* p = mmap(reinterpret_cast<void*>(base), kWindowBytes, PROT_NONE,
        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED || p != reinterpret_cast<void*>(base)) {
        if (p != MAP_FAILED)
            munmap(p, kWindowBytes);
        why = "cannot reserve the shared address window at 0x" + std::to_string(base) + " (" + std::strerror(errno) +
            "); set SCASH_BASE to a free hex address, the same in every process";
        return false;
    }
    window_ = static_cast<std::byte*>(p);
    window_bytes_ = kWindowBytes;
    return true;
}

void RegionTable::release()
{
    for (auto& s : slots_) {
        delete s.load();
        s.store(nullptr);
    }
    if (window_)
        munmap(window_, window_bytes_);
    window_ = nullptr;
}

Region* RegionTable::create(std::size_t npages, std::size_t page_size, int dist, int nprocs, std::string& why)
{
    const std::size_t bytes = npages * page_size;
    if (next_id_ >= kMaxRegions) {
        why =
            "more than " + std::to_string(kMaxRegions) + " regions allocated; free some or allocate fewer, larger ones";
        return nullptr;
    }
    if (bytes > window_bytes_ - next_offset_) {
        why = "the shared address window (1 TiB) is full";
        return nullptr;
    }
    auto r = std::make_unique<Region>(npages, dist, nprocs);
    r->bytes = bytes;
    r->memfd = memfd_create("scash-region", MFD_CLOEXEC);
    if (r->memfd < 0 || ftruncate(r->memfd, off_t(bytes)) != 0) {
        why = std::string("memfd for the region: ") + std::strerror(errno);
        return nullptr;
    }
    // Every copy starts as valid zeros, so the first reads need no fetch.
    void* app = mmap(window_ + next_offset_, bytes, PROT_READ, MAP_SHARED | MAP_FIXED, r->memfd, 0);
    void* backing = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, r->memfd, 0);
    void* twins = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (app == MAP_FAILED || backing == MAP_FAILED || twins == MAP_FAILED) {
        why = std::string("mapping the region: ") + std::strerror(errno);
        if (app != MAP_FAILED)
            mmap(app, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
        if (backing != MAP_FAILED)
            munmap(backing, bytes);
        if (twins != MAP_FAILED)
            munmap(twins, bytes);
        return nullptr;
    }
    r->app = static_cast<std::byte*>(app);
    r->backing = static_cast<std::byte*>(backing);
    r->twins = static_cast<std::byte*>(twins);
    // Protections change page by page; huge pages would make every change split one.
    madvise(app, bytes, MADV_NOHUGEPAGE);
    madvise(backing, bytes, MADV_NOHUGEPAGE);
    r->id = next_id_++;
    next_offset_ += bytes + page_size; // a guard page between regions
    Region* raw = r.release();
    slots_[raw->id].store(raw, std::memory_order_release);
    return raw;
}

void RegionTable::destroy(Region* r)
{
    slots_[r->id].store(nullptr, std::memory_order_release);
    delete r;
}

Region* RegionTable::find(const void* addr) const
{
    auto* a = static_cast<const std::byte*>(addr);
    if (a < window_ || a >= window_ + window_bytes_)
        return nullptr;
    for (std::uint32_t i = 0; i < next_id_; ++i) {
        Region* r = slots_[i].load(std::memory_order_acquire);
        if (r && a >= r->app && a < r->app + r->bytes)
            return r;
    }
    return nullptr;
}

} // namespace hashi::scash
