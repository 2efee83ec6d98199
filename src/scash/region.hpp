// SPDX-License-Identifier: BSD-3-Clause
// Shared regions and the table that finds them by address.
//
// Each region is a memfd mapped twice: the application view, at the same
// address in every process (inside a window reserved at scash_init), whose
// page protections drive fault detection; and a backing view, always
// read-write, through which fetched pages, diffs and page replies are copied
// without touching protections (the service thread uses only this view).
#ifndef HASHI_SCASH_REGION_HPP
#define HASHI_SCASH_REGION_HPP

#include "scash/home.hpp"
#include "scash/page_state.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hashi::scash {

// A page named across the job: region id in the high 32 bits, page index in
// the low 32 bits.
using GlobalPage = std::uint64_t;
inline GlobalPage global_page(std::uint32_t region, std::size_t page)
{
    return (GlobalPage(region) << 32) | page;
}
inline std::uint32_t region_of(GlobalPage g)
{
    return std::uint32_t(g >> 32);
}
inline std::size_t page_of(GlobalPage g)
{
    return std::size_t(g & 0xffffffffu);
}

struct Region {
    std::uint32_t id = 0;
    std::byte* app = nullptr; // application view (protected)
    std::byte* backing = nullptr; // backing view (always RW)
    std::byte* twins = nullptr; // twin of page i at twins + i * page_size (private, lazily backed)
    std::size_t bytes = 0;
    std::size_t npages = 0;
    int memfd = -1;
    std::vector<PageState> state;
    std::vector<std::uint8_t> flags;
    HomeDirectory homes;

    Region(std::size_t npages_, int dist, int nprocs)
        : npages(npages_), state(npages_, PageState::ReadOnly), flags(npages_, kPristine), homes(npages_, dist, nprocs)
    {
    }
    ~Region();
    std::byte* app_page(std::size_t i, std::size_t page_size) const { return app + i * page_size; }
    std::byte* backing_page(std::size_t i, std::size_t page_size) const { return backing + i * page_size; }
    std::byte* twin_page(std::size_t i, std::size_t page_size) const { return twins + i * page_size; }
};

class RegionTable {
public:
    static constexpr std::size_t kMaxRegions = 1024;

    // Reserves the address window; false (with why) if the address is taken.
    bool reserve(std::string& why);
    void release();

    // Maps a new region of npages at the next free window offset. Every
    // process creates regions in the same order, so the addresses agree.
    Region* create(std::size_t npages, std::size_t page_size, int dist, int nprocs, std::string& why);
    void destroy(Region* r);

    // The region holding addr, or nullptr. Safe in the fault handler.
    Region* find(const void* addr) const;
    // By id; nullptr for an unknown or freed id. Safe from the service thread.
    Region* by_id(std::uint32_t id) const
    {
        return id < kMaxRegions ? slots_[id].load(std::memory_order_acquire) : nullptr;
    }
    std::uint32_t count() const { return next_id_; }

    std::size_t window_bytes() const { return window_bytes_; }

private:
    std::byte* window_ = nullptr;
    std::size_t window_bytes_ = 0;
    std::size_t next_offset_ = 0;
    std::uint32_t next_id_ = 0;
    std::array<std::atomic<Region*>, kMaxRegions> slots_ {};
};

} // namespace hashi::scash
#endif
