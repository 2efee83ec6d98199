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
 *   stores `wan_rate` and `senders` (relaxed), then increments `generation`
 *   (release), on every change.
 * - Reader: the provider finds it with dlsym(RTLD_DEFAULT,
 *   "hashi_coll_wan_share") (it is a module that libfabric opened, the
 *   library is linked into the program), uses it only when `abi` equals its
 *   own HASHI_WAN_SHARE_ABI, and otherwise paces nothing. It loads
 *   `generation` (acquire) first and rereads `senders` and `wan_rate` only
 *   when it changed.
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

#define HASHI_WAN_SHARE_ABI 1

struct hashi_wan_share {
    uint32_t abi;        /* HASHI_WAN_SHARE_ABI */
    uint32_t senders;    /* concurrent WAN senders of the running collective phase, 0 = none */
    uint64_t generation; /* bumped on every change of `senders` */
    uint64_t wan_rate;   /* bytes/s of the WAN bottleneck per direction, 0 = unknown */
};

#endif
