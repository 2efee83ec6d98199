/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Counters of the whole module: what is held now (contexts, pinned pages,
 * sockets) and how often each path was taken, failure paths included.
 * Readable with O2G_IOC_STATS and, one value per file, under
 * /sys/class/misc/o2g/counters/. Atomic: any context may count.
 */
#ifndef O2G_STATS_H
#define O2G_STATS_H

#include <linux/atomic.h>
#include <linux/sysfs.h>

#include "include/uapi/o2g.h"

#define O2G_COUNTERS(X) \
	X(contexts) X(pinned_pages) X(sockets) X(cache_hits) X(cache_misses) \
	X(cache_evictions) X(cache_invalidations) X(frames) X(delivered) \
	X(delivered_bytes) X(unexpected) X(backpressure) X(bad_header) \
	X(stream_errors) X(mem_fail) X(pin_fail) X(unmapped_delivery) X(refused) \
	X(unsupported) X(ring_overflow) X(handoffs) X(ring_posts) X(ring_post_deferred) \
	X(rendezvous) X(pin_limit)

struct o2g_stats_counters {
#define O2G_COUNTER_FIELD(name) atomic64_t name;
	O2G_COUNTERS(O2G_COUNTER_FIELD)
#undef O2G_COUNTER_FIELD
};

extern struct o2g_stats_counters o2g_stats;
extern const struct attribute_group *o2g_stats_groups[];

#define O2G_COUNT(name) atomic64_inc(&o2g_stats.name)
#define O2G_ADD(name, n) atomic64_add((n), &o2g_stats.name)
#define O2G_SUB(name, n) atomic64_sub((n), &o2g_stats.name)

void o2g_stats_read(struct o2g_counters *out);

#endif /* O2G_STATS_H */
