// SPDX-License-Identifier: BSD-3-Clause
// The libfabric objects of the hashi provider other than the endpoint:
// fabric, domain, address vector, completion queue, counter and memory
// region. Each is a C++ object that owns its public libfabric struct through
// a fid_box (see common.hpp); ops tables live next to each object's code.
#pragma once

#include "transport/address.hpp"
#include "transport/common.hpp"
#include "transport/domain_gate.hpp"
#include "transport/engine/held_flusher.hpp"
#include "transport/engine/idle_wait.hpp"
#include "transport/engine/machine_census.hpp"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace hashi::fi {

class endpoint;

struct fabric_obj {
    fid_box<fid_fabric, fabric_obj> box {};
    int refs = 0; // domains and event queues open on it
};

struct mr_obj;

struct domain_obj {
    fid_box<fid_domain, domain_obj> box {};
    fabric_obj* fabric = nullptr;
    int refs = 0; // objects opened on it (av, cq, cntr, mr, ep)
    std::vector<endpoint*> endpoints;
    std::unordered_map<std::uint64_t, mr_obj*> regions; // by key
    idle_wait idle; // what a waiting rank does with its core; FI_HASHI_SPIN_US fixes its spin
    // The job's ranks on this machine, for idle's spin; null without a job
    // key (a process not started by mpiexec) or with a fixed spin.
    std::unique_ptr<machine_census> census;
    // Between the application's calls and the flusher (domain_gate.hpp);
    // the flusher runs once an endpoint coalesces sends, and is stopped
    // before the gate goes.
    domain_gate gate;
    std::unique_ptr<held_flusher> flusher;
    void start_flusher();

    // Drives every endpoint of the domain (manual progress: called from
    // fi_cq_read, fi_cntr_read and friends). Returns whether anything moved.
    bool progress();
};

struct av_obj {
    fid_box<fid_av, av_obj> box {};
    domain_obj* domain = nullptr;
    std::vector<endpoint_address> entries; // index = fi_addr
    std::vector<endpoint_address::bytes> raw; // what was inserted, for fi_av_lookup
    std::vector<endpoint*> endpoints; // bound to it, told about inserts
    int refs = 0;
};

struct cq_obj {
    fid_box<fid_cq, cq_obj> box {};
    domain_obj* domain = nullptr;
    fi_cq_format format = FI_CQ_FORMAT_CONTEXT;
    std::deque<fi_cq_tagged_entry> entries;
    std::deque<fi_cq_err_entry> errors;
    int refs = 0;

    void push(const fi_cq_tagged_entry& e) { entries.push_back(e); }
    void push_error(const fi_cq_err_entry& e) { errors.push_back(e); }
};

struct cntr_obj {
    fid_box<fid_cntr, cntr_obj> box {};
    domain_obj* domain = nullptr;
    std::uint64_t value = 0;
    std::uint64_t errors = 0;
    int refs = 0;
};

struct mr_obj {
    fid_box<fid_mr, mr_obj> box {};
    domain_obj* domain = nullptr;
    std::uint8_t* base = nullptr;
    std::uint64_t length = 0;
    std::uint64_t access = 0;
    std::uint64_t key = 0;
};

// The one check of an RMA target (a security check: the peer chose key,
// offset and length): 0 with `region` set when the region with `key`
// exists, allows `access` (FI_REMOTE_READ or FI_REMOTE_WRITE) and holds
// [offset, offset + len); otherwise -FI_EKEYREJECTED, -FI_EACCES or
// -FI_EINVAL.
int check_region(const domain_obj& domain, std::uint64_t key, std::uint64_t access, std::uint64_t offset,
    std::uint64_t len, mr_obj*& region) noexcept;

// Constructors used by the ops tables of the parent objects.
int fabric_open(fi_fabric_attr* attr, fid_fabric** fabric, void* context);
int domain_open(fid_fabric* fabric, fi_info* info, fid_domain** domain, void* context);
int eq_open(fid_fabric* fabric, fi_eq_attr* attr, fid_eq** eq, void* context); // eq.cpp
int av_open(fid_domain* domain, fi_av_attr* attr, fid_av** av, void* context);
int cq_open(fid_domain* domain, fi_cq_attr* attr, fid_cq** cq, void* context);
int cntr_open(fid_domain* domain, fi_cntr_attr* attr, fid_cntr** cntr, void* context);
int endpoint_open(fid_domain* domain, fi_info* info, fid_ep** ep, void* context);
extern fi_ops_mr mr_ops;

// Shared "not supported" entries for the ops tables: libfabric's inline
// wrappers call through every pointer without checking it.
int no_bind(fid*, fid*, std::uint64_t);
int no_control(fid*, int, void*);
int no_ops_open(fid*, const char*, std::uint64_t, void**, void*);
int no_tostr(const fid*, char*, std::size_t);
int no_ops_set(fid*, const char*, std::uint64_t, void*, void*);

} // namespace hashi::fi
