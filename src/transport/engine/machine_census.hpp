// SPDX-License-Identifier: BSD-3-Clause
// How many ranks of this job run on this machine, and on how many CPUs:
// what the idle policy (idle_wait.hpp) needs to know whether a core it
// gives away goes to a rank of its own job or to somebody else's task.
//
// Contract: a census registers the calling process in a small shared file
// of the job on this machine and unregisters it when destroyed; ranks()
// and cpus() read that file's counts (two atomic loads, no lock, no system
// call) and say 0 when the census could not be taken. The file is
// dir/hashi-census-<16 hex digits of an HMAC of the job key>: ranks of one
// job on one machine find the same file whatever network namespace they
// run in (the testbed's nodes share the machine's CPUs), the name says
// nothing of the key, and another job's ranks never share it.
//
// Every change happens under flock on the file: a rank claims a slot with
// its pid, clears slots of processes that no longer exist (a rank killed
// by a signal), and adds the CPUs it may run on (its affinity) to the
// job's set on this machine; the last rank out removes the file. A file
// that is not a regular file of ours with no access for others is not
// used (a refusal, logged in debug output): the census is then unknown.
// A job whose every rank is killed leaves its file (4 KiB) behind, until
// the next census taken on the machine by the same user sweeps the
// directory: it removes files of ours whose registered processes are all
// gone and whose lock nobody holds.
// Pids are those of the machine's namespace the rank sees: ranks of one
// job in different pid namespaces sharing one /dev/shm would clear each
// other's slots, which only makes the count (a hint for the spin) wrong.
// Constructed and destroyed by the thread that opens and closes the domain.
#pragma once

#include "transport/engine/job_key.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

struct stat;

namespace hashi::fi {

class machine_census {
public:
    static constexpr unsigned max_ranks = 960; // slots of one file (a 4 KiB page)
    static constexpr const char* default_dir = "/dev/shm";

    // Registers this process under `key` in `dir`.
    machine_census(const job_key& key, const std::string& dir = default_dir) noexcept;
    ~machine_census();
    machine_census(const machine_census&) = delete;
    machine_census& operator=(const machine_census&) = delete;

    // Ranks of the job registered on this machine now, this one included;
    // 0: unknown.
    unsigned ranks() const noexcept;
    // CPUs the job's ranks on this machine may run on (the union of their
    // affinities); 0: unknown.
    unsigned cpus() const noexcept;
    bool registered() const noexcept { return page_ != nullptr && slot_ >= 0; }
    // Removes the census files of this user in `dir` that no live process
    // is registered in and whose lock is free; returns how many.
    static std::size_t sweep(const std::string& dir) noexcept;
    // Why the census is unknown ("" when it is not).
    const std::string& why_unknown() const noexcept { return why_; }
    const std::string& path() const noexcept { return path_; }

    struct page; // the file's layout (machine_census.cpp)

private:
    // Under the file's lock: maps the page, claims a slot, adds this
    // process's CPUs; false (why_ set) when the file cannot be used.
    bool join_locked(const struct stat& st) noexcept;
    void clear_departed() noexcept; // under the file's lock: slots of processes gone
    void recount() noexcept; // under the file's lock

    std::string path_;
    std::string why_;
    int fd_ = -1;
    page* page_ = nullptr;
    int slot_ = -1;
};

} // namespace hashi::fi
