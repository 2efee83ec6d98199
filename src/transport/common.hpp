// SPDX-License-Identifier: BSD-3-Clause
// Shared pieces of the hashi provider: how a libfabric fid maps back to our
// C++ object, logging, and the provider's identity.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>

namespace hashi::fi {

inline constexpr const char* provider_name = "hashi";
inline constexpr std::uint32_t provider_version = FI_VERSION(0, 2);
// The API level we implement. MPICH 4.0.2 asks for 1.17; a provider with a
// lower fi_version is silently skipped by libfabric.
inline constexpr std::uint32_t api_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);

// Every libfabric object we hand out is a `fid_box`: the public libfabric
// struct first, then a pointer to the C++ object that owns it. The box is
// standard layout, so a `fid*` the application gives back can be turned into
// the box and from there into our object without guessing offsets.
template <class Fid, class Owner> struct fid_box {
    Fid fid;
    Owner* owner;
};

template <class Owner, class Fid> Owner* owner_of(Fid* f) noexcept
{
    return reinterpret_cast<fid_box<Fid, Owner>*>(f)->owner;
}

// Diagnostics. Errors that make an operation fail always reach stderr with the
// process's identity, because MPICH only prints a generic "ofi" error code.
// Debug output appears with FI_HASHI_DEBUG=1 (or FI_LOG_LEVEL=debug).
void log_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug_impl(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
bool debug_enabled() noexcept;
#define HASHI_DEBUG(...)                                                                                               \
    do {                                                                                                               \
        if (::hashi::fi::debug_enabled())                                                                              \
            ::hashi::fi::log_debug_impl(__VA_ARGS__);                                                                  \
    } while (0)

// Runs `f` and turns any C++ exception into a libfabric error code: no
// exception may cross into libfabric or MPICH (they are C).
template <class F> auto guarded(F&& f) noexcept -> decltype(f())
{
    try {
        return f();
    } catch (const std::bad_alloc&) {
        return -FI_ENOMEM;
    } catch (const std::exception& e) {
        log_error("internal error: %s", e.what());
        return -FI_EOTHER;
    } catch (...) {
        log_error("internal error: unknown exception");
        return -FI_EOTHER;
    }
}

} // namespace hashi::fi
