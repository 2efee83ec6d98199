/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The matching engine: MPI's rules, exactly as the user-space engine
 * (src/transport/match/match_backend.hpp) states them and the shared test
 * vectors pin them:
 *  - a posted receive takes the first unclaimed unexpected message, in
 *    arrival order, whose source and tag it accepts;
 *  - an arriving message takes the first posted receive, in posting order,
 *    that accepts it (a persistent receive stays posted);
 *  - a message from an unknown peer (O2G_ANY_SOURCE) matches only wildcard
 *    receives; bits set in `ignore` are not compared;
 *  - a message reserved by peek-with-claim leaves the queues until claimed.
 *
 * The engine allocates nothing: callers hand in nodes they allocated (and
 * get back the ones that left), so the engine can run under a spinlock in
 * the TCP receive path. Queues are lists in order; scans are linear and
 * bounded by the context's limits (max_posted, the unexpected space).
 *
 * Locking: every function needs the owning context's lock (o2g_context.lock).
 */
#ifndef O2G_MATCH_H
#define O2G_MATCH_H

#include <linux/list.h>
#include <linux/types.h>

struct o2g_posted {
	struct list_head link;	/* in o2g_matcher.posted */
	u64 cookie;
	u64 source;
	u64 tag;
	u64 ignore;
	u64 capacity;
	bool persistent;
	void *owner;		/* the context's receive, or NULL on a test context */
};

struct o2g_unexpected {
	struct list_head link;	/* in o2g_matcher.arrival, or .claimed once reserved */
	u64 cookie;
	u64 source;
	u64 tag;
	u64 data;
	u64 length;
	bool claimed;
	u64 claim_cookie;
	void *owner;		/* the context's buffered message, or NULL */
};

struct o2g_matcher {
	struct list_head posted;	/* posting order */
	struct list_head arrival;	/* unexpected, unclaimed, arrival order */
	struct list_head claimed;	/* reserved by peek-with-claim */
	u32 posted_count;
	u32 unexpected_count;		/* claimed ones included */
};

void o2g_matcher_init(struct o2g_matcher *m);

/* First posted receive that accepts (source, tag), left in the queue. */
struct o2g_posted *o2g_match_find_posted(struct o2g_matcher *m, u64 source, u64 tag);
/* Posted receive by cookie (the first posted with it), left in the queue. */
struct o2g_posted *o2g_match_posted_by_cookie(struct o2g_matcher *m, u64 cookie);
void o2g_match_queue_posted(struct o2g_matcher *m, struct o2g_posted *p);
void o2g_match_unlink_posted(struct o2g_matcher *m, struct o2g_posted *p);
/* First posted receive directed at `source` (fail_source takes them one by one). */
struct o2g_posted *o2g_match_first_posted_for(struct o2g_matcher *m, u64 source);

/* First unclaimed unexpected message accepted by (source, tag, ignore). */
struct o2g_unexpected *o2g_match_find_unexpected(struct o2g_matcher *m, u64 source, u64 tag,
						 u64 ignore);
void o2g_match_queue_unexpected(struct o2g_matcher *m, struct o2g_unexpected *u);
/* Takes a queued (claimed or not) message out of the engine. */
void o2g_match_unlink_unexpected(struct o2g_matcher *m, struct o2g_unexpected *u);
/* Reserves `u` for claim_cookie unless that cookie already holds one. */
void o2g_match_reserve(struct o2g_matcher *m, struct o2g_unexpected *u, u64 claim_cookie);
struct o2g_unexpected *o2g_match_claimed_by(struct o2g_matcher *m, u64 claim_cookie);
/* Messages from an unknown peer named in cookies[] now come from source. */
void o2g_match_renumber(struct o2g_matcher *m, const u64 *cookies, u32 count, u64 source);

#endif /* O2G_MATCH_H */
