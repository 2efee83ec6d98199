// SPDX-License-Identifier: BSD-3-Clause
// The relay's byte buffers: frames on their way to a trunk, a trunk's input.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace hashi::relay {

// Bytes of a frame or of the trunk's input: a vector whose new elements are
// left uninitialised, because they are about to be filled by recv or the
// protected stream (value-initialising 64 KiB before every read would cost
// as much as a copy).
template <class T>
struct uninitialised_allocator : std::allocator<T> {
    template <class U>
    struct rebind {
        using other = uninitialised_allocator<U>;
    };
    uninitialised_allocator() = default;
    template <class U>
    uninitialised_allocator(const uninitialised_allocator<U>&) noexcept { }
    template <class U>
    void construct(U* p) noexcept
    {
        ::new (static_cast<void*>(p)) U;
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args)
    {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};
using byte_buffer = std::vector<std::uint8_t, uninitialised_allocator<std::uint8_t>>;

} // namespace hashi::relay
