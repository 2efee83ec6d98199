/* SPDX-License-Identifier: BSD-3-Clause */
/* The WAN share: the process-wide record through which libhashi-coll tells
 * the `hashi` provider how many processes of this cluster send over the WAN
 * at once (src/coll/pacing.hpp says why). Two separately built, separately
 * loaded objects read this one layout, so it lives here, owned by neither.
 *
 * The contract, which both sides keep:
 * - Writer: libhashi-coll defines exactly one `struct hashi_wan_share`
 *   named `hashi_coll_wan_share`, exported with default visibility and C
 *   linkage, initialised with abi = HASHI_WAN_SHARE_ABI and the rest 0. It
 *   stores `wan_rate`, `senders`, `pace_rate` and `reason` (relaxed), then
 *   increments `generation` (release), on every change.
 * - Reader: the provider finds it with dlsym(RTLD_DEFAULT,
 *   "hashi_coll_wan_share") (it is a module that libfabric opened, the
 *   library is linked into the program), uses it only when `abi` equals its
 *   own HASHI_WAN_SHARE_ABI, and otherwise paces nothing. It loads
 *   `generation` (acquire) first and rereads the other fields only when it
 *   changed. `pace_rate` is what it applies: the bytes per second this
 *   process may send over the WAN in all (its share of the job's WAN
 *   budget); `wan_rate`, `senders` and `reason` say where that came from.
 * - `abi` is constant from load time on and read plainly; the other fields
 *   are accessed only with __atomic builtins, on both sides. Nothing is
 *   locked: the provider reads it on its progress path.
 * - Changing the layout or the meaning of a field means a new
 *   HASHI_WAN_SHARE_ABI number: a provider that finds another number than
 *   its own paces nothing instead of misreading.
 * C, not C++: the layout must be the same for any compiler of either side. */
#ifndef HASHI_WAN_SHARE_ABI_H
#define HASHI_WAN_SHARE_ABI_H

#include <stdint.h>

#define HASHI_WAN_SHARE_ABI 2

/* Why the process paces at `pace_rate` (the statistics name it). */
enum hashi_wan_pace_reason {
    HASHI_PACE_NONE = 0,       /* no WAN budget known: no limit */
    HASHI_PACE_JOB = 1,        /* the job's budget (HASHI_WAN_RATE or the probe) / its senders */
    HASHI_PACE_COLLECTIVE = 2, /* a collective's WAN phase with `senders` concurrent senders */
    HASHI_PACE_INFO_HINT = 3,  /* info keys hashi_wan_rate / hashi_wan_senders on a communicator */
    HASHI_PACE_PSP_ATTR = 4    /* GridMPI's YAMPI_PSP_MAXRATE / YAMPI_PSP_MATB attributes */
};

struct hashi_wan_share {
    uint32_t abi;        /* HASHI_WAN_SHARE_ABI */
    uint32_t senders;    /* concurrent WAN senders the budget is shared by, 0 = none */
    uint64_t generation; /* bumped on every change */
    uint64_t wan_rate;   /* bytes/s of the WAN budget per direction, 0 = unknown */
    uint64_t pace_rate;  /* bytes/s this process may send over the WAN, 0 = no limit */
    uint32_t reason;     /* enum hashi_wan_pace_reason */
    uint32_t reserved;   /* 0 */
};

#endif
