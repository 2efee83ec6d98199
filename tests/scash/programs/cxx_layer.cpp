// SPDX-License-Identifier: BSD-3-Clause
// The C++ layer (scash.hpp): RAII runtime and lock guard, typed allocation,
// errors as exceptions.
#include "scash.hpp"

#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    bool ok = true;
    {
        scash::Runtime rt;
        auto* sum = scash::alloc<long>(1, scash::Dist::cyclic);
        auto* v = scash::alloc<double>(4096, scash::Dist::first_touch);
        for (int i = rt.rank(); i < 4096; i += rt.nprocs())
            v[i] = 0.5 * i;
        {
            scash::LockGuard guard(7);
            *sum += rt.rank() + 1;
        }
        scash::barrier();
        const long expect = long(rt.nprocs()) * (rt.nprocs() + 1) / 2;
        ok = *sum == expect;
        for (int i = 0; i < 4096; ++i)
            ok = ok && v[i] == 0.5 * i;
        try {
            scash::alloc<char>(0);
            ok = false;
        } catch (const scash::error& e) {
            ok = ok && e.code == SCASH_ERR_ARG;
        }
        const scash_stats_t s = scash::stats_total();
        ok = ok && s.lock_acquires == std::uint64_t(rt.nprocs());
        if (rt.rank() == 0)
            std::printf("cxx_layer: sum %ld (expected %ld): %s\n", *sum, expect, ok ? "ok" : "FAILED");
        scash::free(v);
        scash::free(sum);
    }
    MPI_Finalize();
    return ok ? 0 : 1;
}
