/* SPDX-License-Identifier: BSD-3-Clause */
/* The process-wide record through which libhashi-coll tells the transport
 * how many processes of this cluster send over the WAN at once (see
 * pacing.hpp). C layout, read by the `hashi` provider with
 * dlsym(RTLD_DEFAULT, "hashi_coll_wan_share"); fields are accessed with
 * __atomic builtins on both sides. */
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
