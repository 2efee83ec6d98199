// SPDX-License-Identifier: BSD-3-Clause
// MPI_Init, MPI_Init_thread and MPI_Finalize: read the settings, find out
// whether the job spans several clusters, and if so obtain the link
// parameters (file or probe) once for the whole job.
#include "hierarchy.hpp"
#include "link_params.hpp"
#include "pacing.hpp"
#include "runtime.hpp"
#include "settings.hpp"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>

namespace hashi::coll {

namespace {
std::atomic<bool> is_active {false};

[[noreturn]] void fail(const char* what)
{
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "hashi-coll: error on rank %d: %s\n", rank, what);
    PMPI_Abort(MPI_COMM_WORLD, 1);
    std::abort();
}

void after_init()
{
    Settings s;
    try {
        s = read_settings();
    } catch (const std::exception& e) {
        fail(e.what());
    }
    set_settings(s);
    // GridMPI programs read these keys whatever the job's shape.
    create_psp_keyvals();
    if (!s.enabled)
        return;
    // One reduction tells every rank whether the job spans clusters. A
    // single-cluster job then passes everything to MPICH and we create no
    // communicator or attribute at all (only the two keyvals above).
    const int id = my_cluster_id();
    int span[2] = {id, -id}, extremes[2] = {0, 0};
    PMPI_Allreduce(span, extremes, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (extremes[0] == -extremes[1] && !s.any_forced())
        return;
    const Hierarchy* world = hierarchy_of(MPI_COMM_WORLD);
    if (world == nullptr)
        return;
    LinkParams p;
    try {
        if (!s.params_file.empty())
            p = read_link_params(s.params_file, p);
        else if (s.probe != "off") {
            const double t0 = PMPI_Wtime();
            p = probe_link_params(*world, p);
            if (s.verbose >= 1 && world->rank == 0)
                std::fprintf(stderr, "hashi-coll: probed the links in %.0f ms\n", (PMPI_Wtime() - t0) * 1e3);
        }
        if (!s.params_save.empty() && world->rank == 0)
            write_link_params(s.params_save, p);
    } catch (const std::exception& e) {
        fail(e.what());
    }
    // A WAN budget the user gives is what the cost model plans with too.
    const double measured_wan_rate = p.wan_rate;
    if (s.wan_rate_mbit != 0)
        p.wan_rate = static_cast<double>(s.wan_rate_mbit) * 125e3;
    if (s.verbose >= 1 && world->rank == 0 && s.wan_rate_mbit != 0 && p.source == "probe at start-up")
        std::fprintf(stderr, "hashi-coll: the probe's burst of one WAN flow per lane carried %.0f Mbit/s; "
            "HASHI_WAN_RATE sets %.0f\n", measured_wan_rate * 8e-6, p.wan_rate * 8e-6);
    set_link_params(p);
    set_job_pacing(*world);
    if (s.verbose >= 1 && world->rank == 0)
        std::fprintf(stderr,
            "hashi-coll: %d clusters; link parameters (%s): node %.0f Mbit/s (%.0f each way in an exchange), %.0f "
            "us between nodes; WAN %.3f ms one way, %.0f Mbit/s per flow, %.0f Mbit/s in all, so at most %d WAN "
            "senders; a burst of concurrent WAN flows lost %s%.3g%% of its segments (%s)\n",
            world->nclusters, p.source.c_str(), p.node_rate * 8e-6, p.exchange_rate() * 8e-6, p.local_latency * 1e6,
            p.wan_latency * 1e3, p.wan_flow_rate * 8e-6, p.wan_rate * 8e-6, p.wan_senders(),
            p.wan_burst_loss < 0 ? "? (sockets unreadable) " : "", std::max(p.wan_burst_loss, 0.0) * 100,
            p.wan_drops() ? "the WAN drops bursts: capped, paced algorithms" : "no drops to avoid");
    is_active = true;
}
} // namespace

bool active()
{
    return is_active.load(std::memory_order_relaxed);
}

} // namespace hashi::coll

extern "C" {

int MPI_Init(int* argc, char*** argv)
{
    const int err = PMPI_Init(argc, argv);
    if (err == MPI_SUCCESS)
        hashi::coll::after_init();
    return err;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided)
{
    const int err = PMPI_Init_thread(argc, argv, required, provided);
    if (err == MPI_SUCCESS)
        hashi::coll::after_init();
    return err;
}

int MPI_Finalize(void)
{
    // Our sub-communicators of the predefined communicators must go before
    // MPICH dismantles those: built at MPI_Init when active, or on a large
    // alltoall of a single-cluster job (pmpi_entry.cpp).
    hashi::coll::is_active.store(false);
    hashi::coll::forget_hierarchy(MPI_COMM_WORLD);
    hashi::coll::forget_hierarchy(MPI_COMM_SELF);
    return PMPI_Finalize();
}

} // extern "C"
