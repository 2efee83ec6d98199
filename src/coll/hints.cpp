// SPDX-License-Identifier: BSD-3-Clause
// Traffic hints from the program (pacing.hpp): the info keys
// hashi_wan_rate (Mbit/s) and hashi_wan_senders on MPI_Comm_set_info, and
// GridMPI's PSP attributes (yampi_psp.h). A hint sets the process's WAN
// pacing outside collective phases; the call then goes on to MPICH
// unchanged, so the info and attribute semantics stay MPI's. A malformed
// hint is ignored with a warning, as MPI ignores info it cannot use.
#include "pacing.hpp"
#include "yampi_psp.h"

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" {
__attribute__((visibility("default"))) int YAMPI_PSP_MAXRATE = MPI_KEYVAL_INVALID;
__attribute__((visibility("default"))) int YAMPI_PSP_MATB = MPI_KEYVAL_INVALID;
}

namespace hashi::coll {

namespace {

void warn(const std::string& what)
{
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "hashi-coll: warning on rank %d: %s\n", rank, what.c_str());
}

// A whole number in [1, max] from an info value; 0 when malformed.
unsigned long long positive(const std::string& text, unsigned long long max)
{
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || text[0] == '-' || end == nullptr || *end != '\0' || v == 0 || v > max)
        return 0;
    return v;
}

// The value of `key` in `info`, if set.
bool info_value(MPI_Info info, const char* key, std::string& value)
{
    char buf[MPI_MAX_INFO_VAL + 1] = {};
    int flag = 0;
    if (PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, buf, &flag) != MPI_SUCCESS || !flag)
        return false;
    value = buf;
    return true;
}

std::uint64_t known_budget()
{
    return base_pacing().wan_rate;
}

void apply_info(MPI_Info info)
{
    if (info == MPI_INFO_NULL)
        return;
    std::string rate_text, senders_text;
    const bool has_rate = info_value(info, "hashi_wan_rate", rate_text);
    const bool has_senders = info_value(info, "hashi_wan_senders", senders_text);
    if (!has_rate && !has_senders)
        return;
    std::uint64_t budget = known_budget();
    std::uint32_t senders = job_senders();
    if (has_rate) {
        const auto mbit = positive(rate_text, 10'000'000);
        if (mbit == 0)
            return warn("info hashi_wan_rate='" + rate_text +
                "' is not a WAN rate in Mbit/s (a whole number from 1); the hint is ignored");
        budget = mbit * 125'000ULL;
    }
    if (has_senders) {
        const auto n = positive(senders_text, 1 << 20);
        if (n == 0)
            return warn("info hashi_wan_senders='" + senders_text +
                "' is not a number of senders (a whole number from 1); the hint is ignored");
        senders = static_cast<std::uint32_t>(n);
    }
    if (budget == 0)
        return warn("info hashi_wan_senders given but no WAN rate is known (set hashi_wan_rate or HASHI_WAN_RATE); "
                    "the hint is ignored");
    set_base_pacing(share_of(budget, senders, PaceReason::info_hint));
}

void apply_attribute(int keyval, void* value)
{
    if (keyval == MPI_KEYVAL_INVALID || (keyval != YAMPI_PSP_MAXRATE && keyval != YAMPI_PSP_MATB))
        return;
    const auto v = reinterpret_cast<std::intptr_t>(value);
    if (v < 0)
        return warn(std::string(keyval == YAMPI_PSP_MATB ? "YAMPI_PSP_MATB" : "YAMPI_PSP_MAXRATE") + "=" +
            std::to_string(v) + " KB/s is negative; the attribute is stored but paces nothing");
    const auto bytes = static_cast<std::uint64_t>(v) * 1000;
    if (keyval == YAMPI_PSP_MAXRATE)
        set_base_pacing(share_of(bytes, job_senders(), PaceReason::psp_attribute));
    else
        set_base_pacing(bytes == 0 ? Pacing {} : Pacing {known_budget(), 1, bytes, PaceReason::psp_attribute});
}

} // namespace

void create_psp_keyvals()
{
    if (YAMPI_PSP_MAXRATE == MPI_KEYVAL_INVALID)
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &YAMPI_PSP_MAXRATE, nullptr);
    if (YAMPI_PSP_MATB == MPI_KEYVAL_INVALID)
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &YAMPI_PSP_MATB, nullptr);
}

} // namespace hashi::coll

using namespace hashi::coll;

extern "C" {

int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    const int rc = PMPI_Comm_set_info(comm, info);
    if (rc == MPI_SUCCESS)
        apply_info(info);
    return rc;
}

int MPI_Comm_set_attr(MPI_Comm comm, int keyval, void* value)
{
    const int rc = PMPI_Comm_set_attr(comm, keyval, value);
    if (rc == MPI_SUCCESS)
        apply_attribute(keyval, value);
    return rc;
}

int MPI_Attr_put(MPI_Comm comm, int keyval, void* value)
{
    const int rc = PMPI_Attr_put(comm, keyval, value);
    if (rc == MPI_SUCCESS)
        apply_attribute(keyval, value);
    return rc;
}

__attribute__((visibility("default"))) int psp_set_limit(MPI_Comm comm, int n)
{
    const std::uint64_t budget = known_budget();
    if (n < 1 || budget == 0)
        return MPI_ERR_ARG;
    const auto kbytes = static_cast<std::intptr_t>(budget / static_cast<std::uint64_t>(n) / 1000);
    return MPI_Comm_set_attr(comm, YAMPI_PSP_MATB, reinterpret_cast<void*>(kbytes));
}
}
