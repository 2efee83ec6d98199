// SPDX-License-Identifier: BSD-3-Clause
// A thin C++ layer over scash.h: RAII for the runtime and for locks, typed
// allocation, errors as exceptions (the C API returns codes).
#ifndef HASHI_SCASH_HPP
#define HASHI_SCASH_HPP

#include "scash.h"

#include <cstddef>
#include <stdexcept>
#include <string>

namespace scash {

enum class Dist { block = SCASH_BLOCK, cyclic = SCASH_CYCLIC, first_touch = SCASH_FIRST_TOUCH };

struct error : std::runtime_error {
    int code;
    error(const char* what, int c)
        : std::runtime_error(std::string(what) + " failed with SCASH error " + std::to_string(c)), code(c)
    {
    }
};

inline void check(int rc, const char* what)
{
    if (rc != SCASH_OK)
        throw error(what, rc);
}

// Owns scash_init .. scash_finalize; create after MPI_Init_thread.
class Runtime {
public:
    Runtime() { check(scash_init(), "scash_init"); }
    ~Runtime() { scash_finalize(); }
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;
    int rank() const { return scash_rank(); }
    int nprocs() const { return scash_nprocs(); }
};

// Collective: n zero-initialized objects of trivially copyable T.
template <class T> T* alloc(std::size_t n, Dist dist = Dist::block)
{
    void* p = nullptr;
    check(scash_alloc(n * sizeof(T), static_cast<int>(dist), &p), "scash_alloc");
    return static_cast<T*>(p);
}

inline void free(void* p)
{
    check(scash_free(p), "scash_free");
}
inline void barrier()
{
    check(scash_barrier(), "scash_barrier");
}
inline void flush()
{
    check(scash_flush(), "scash_flush");
}
// Collective: the pages holding n objects from p get home proc.
template <class T> void set_home(T* p, std::size_t n, int proc)
{
    check(scash_set_home(const_cast<void*>(static_cast<const void*>(p)), n * sizeof(T), proc), "scash_set_home");
}

class LockGuard {
public:
    explicit LockGuard(int id) : id_(id) { check(scash_lock(id), "scash_lock"); }
    ~LockGuard() { scash_unlock(id_); }
    LockGuard(const LockGuard&) = delete;
    LockGuard& operator=(const LockGuard&) = delete;

private:
    int id_;
};

inline scash_stats_t stats_total()
{
    scash_stats_t s {};
    check(scash_stats_total(&s), "scash_stats_total");
    return s;
}

} // namespace scash
#endif
