// SPDX-License-Identifier: GPL-2.0-only
/*
 * Receives on a sockets context: posting (against the unexpected messages
 * first), cancelling, completing into the ring, and the buffers that hold
 * unexpected payloads. The receive path proper (frames off a socket) is in
 * o2g_sock.c.
 *
 * Bounds: at most max_posted receives; a receive is refused (EAGAIN) while
 * posted receives + unread completions + two slots per socket (a message in
 * flight, its last event) would not fit in the ring, so the ring never
 * overflows; unexpected payloads are bounded by max_unexpected_bytes and
 * max_unexpected_msgs (o2g_sock.c stops reading when they are full).
 */
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "o2g_context.h"
#include "o2g_stats.h"

/* Context lock held. */
void o2g_buffered_free(struct o2g_context *ctx, struct o2g_buffered *msg)
{
	ctx->unexpected_bytes -= msg->payload;
	ctx->unexpected_msgs--;
	o2g_buffered_release(msg);
}

/* Context lock held: the slot is on no queue. */
void o2g_recv_free_slot(struct o2g_context *ctx, struct o2g_recv_slot *slot)
{
	if (slot->pin)
		o2g_pin_put(ctx, slot->pin);
	kfree(slot);
}

/* The completion of `msg` for `slot`; `rndv` for a rendezvous request. Pure. */
static void o2g_fill_cqe(struct o2g_completion *cqe, const struct o2g_recv_slot *slot,
			 const struct o2g_unexpected *msg, u32 cqe_flags, u64 received, u32 status,
			 const struct o2g_rndv *rndv)
{
	memset(cqe, 0, sizeof(*cqe));
	cqe->cookie = slot->node.cookie;
	cqe->source = msg->source;
	cqe->tag = msg->tag;
	cqe->data = msg->data;
	cqe->length = msg->length;
	cqe->received = received;
	cqe->status = status;
	cqe->flags = cqe_flags | o2g_cqe_engine_flag(slot->engine);
	if (msg->length > slot->len)
		cqe->flags |= O2G_CQE_TRUNCATED;
	if (rndv) {
		cqe->flags |= O2G_CQE_RENDEZVOUS;
		cqe->sender_op = rndv->sender_op;
		cqe->sock = rndv->sock;
	}
}

/* What a completion without an error counts. Any context. */
static void o2g_count_completion(u64 received, const struct o2g_rndv *rndv)
{
	if (rndv) {
		O2G_COUNT(rendezvous);
		return;
	}
	O2G_COUNT(delivered);
	O2G_ADD(delivered_bytes, received);
}

/*
 * A receive matched by a message from a socket is done: its completion goes
 * to the ring and the slot is freed. A rendezvous request (`rndv`) wrote
 * nothing: user space asks the sender for the data. Context lock held.
 */
void o2g_recv_complete(struct o2g_context *ctx, struct o2g_recv_slot *slot,
		       const struct o2g_unexpected *msg, u32 cqe_flags, u64 received, u32 status,
		       const struct o2g_rndv *rndv)
{
	struct o2g_completion cqe;

	if (slot->pin && slot->pin->unmapped && !status) {
		/* Unmapped while the message came: it went nowhere the process sees. */
		O2G_COUNT(unmapped_delivery);
		status = EFAULT;
		received = 0;
	}
	if (!status)
		o2g_count_completion(received, rndv);
	o2g_fill_cqe(&cqe, slot, msg, cqe_flags, received, status, rndv);
	o2g_ring_push(ctx, &cqe);
	o2g_recv_free_slot(ctx, slot);
}

/*
 * A whole buffered message for a posted receive: copied through the
 * receive's pinned pages (a rendezvous request has nothing to copy),
 * completed into the ring. Context lock held; any context (kmap_local).
 */
void o2g_recv_deliver_buffered(struct o2g_context *ctx, struct o2g_recv_slot *slot,
			       struct o2g_buffered *msg)
{
	u64 n = msg->rendezvous ? 0 : min(msg->node.length, slot->len);
	u64 done = n ? o2g_buffered_to_pin(msg, slot->pin, slot->addr, n) : 0;

	o2g_recv_complete(ctx, slot, &msg->node, msg->cqe_flags, done, 0,
			  msg->rendezvous ? &msg->rndv : NULL);
	o2g_buffered_free(ctx, msg);
}

/* Context lock held: would one more posted receive still leave the ring room? */
static bool o2g_ring_has_room(struct o2g_context *ctx)
{
	/* Per socket: a message being copied (its receive left the queue) and its last event. */
	u64 promised = (u64)ctx->engines[O2G_TAGGED].posted_count +
		       ctx->engines[O2G_UNTAGGED].posted_count + o2g_ring_unread(&ctx->ring) +
		       2ULL * ctx->socket_count;

	return promised < o2g_ring_entries;
}

/*
 * Pure, any context: a receive's flags and range, as far as they can be
 * checked without the caller's mm (access_ok is for process context: the
 * posting ring's softirq path relies on the pin-down cache instead).
 */
int o2g_recv_check_range(u64 addr, u64 len, u32 flags)
{
	if (flags & ~O2G_POST_FLAGS_ALL)
		return -EINVAL;
	if (len && addr + len < addr)
		return -EFAULT;
	return 0;
}

/* The user's receive, checked before anything is pinned. Process context. */
static int o2g_recv_check(const struct o2g_recv *r)
{
	int err = o2g_recv_check_range(r->addr, r->len, r->flags & ~O2G_RECV_CLAIM);

	if (!err && r->len && !access_ok(u64_to_user_ptr(r->addr), r->len))
		err = -EFAULT;
	return err;
}

/*
 * A receive from the posting ring, its pages held (or none for 0 bytes),
 * enters its engine: an unexpected message it matches is copied through the
 * pinned pages and completes in the ring at once. -EAGAIN when max_posted
 * or the ring's room is used up: the slot is the caller's to free then.
 * Context lock held; any context.
 */
int o2g_recv_enqueue_locked(struct o2g_context *ctx, struct o2g_recv_slot *slot)
{
	struct o2g_matcher *m = &ctx->engines[slot->engine];
	struct o2g_unexpected *u;

	if (m->posted_count >= o2g_max_posted || !o2g_ring_has_room(ctx))
		return -EAGAIN;
	u = o2g_match_find_unexpected(m, slot->node.source, slot->node.tag, slot->node.ignore);
	if (!u) {
		o2g_match_queue_posted(m, &slot->node);
		return 0;
	}
	o2g_match_unlink_unexpected(m, u);
	o2g_recv_deliver_buffered(ctx, slot, u->owner);
	return 0;
}

/*
 * An entry of the posting ring the module will not post: its completion
 * says why, in place of the one the receive would have had. Context lock
 * held; any context.
 */
void o2g_recv_refuse(struct o2g_context *ctx, u64 cookie, u32 status)
{
	struct o2g_completion cqe = {
		.cookie = cookie,
		.status = status,
		.flags = O2G_CQE_REFUSED,
	};

	O2G_COUNT(refused);
	o2g_ring_push(ctx, &cqe);
}

/*
 * A receive not matched yet leaves its engine; with `complete`, its
 * completion (ECANCELED) goes to the ring. False when it is not posted.
 * Context lock held; any context.
 */
bool o2g_recv_cancel_locked(struct o2g_context *ctx, u64 cookie, u32 flags, bool complete)
{
	enum o2g_engine engine = flags & O2G_RECV_UNTAGGED ? O2G_UNTAGGED : O2G_TAGGED;
	struct o2g_matcher *m = &ctx->engines[engine];
	struct o2g_posted *p = o2g_match_posted_by_cookie(m, cookie);
	struct o2g_completion cqe = {
		.cookie = cookie,
		.status = ECANCELED,
		.flags = o2g_cqe_engine_flag(engine),
	};

	if (!p)
		return false;
	o2g_match_unlink_posted(m, p);
	o2g_recv_free_slot(ctx, p->owner);
	if (complete)
		o2g_ring_push(ctx, &cqe);
	return true;
}

/*
 * The receive matched a buffered message at post time: copy it now (a
 * rendezvous request: nothing to copy). ioctl_mutex held, no lock.
 */
static void o2g_recv_take_buffered(struct o2g_context *ctx, struct o2g_recv *r,
				   struct o2g_recv_slot *slot, struct o2g_buffered *msg)
{
	const struct o2g_rndv *rndv = msg->rendezvous ? &msg->rndv : NULL;
	u64 n = rndv ? 0 : min(msg->node.length, slot->len);
	u32 status = 0;

	if (n && o2g_buffered_to_user(msg, (void __user *)slot->addr, n)) {
		status = EFAULT;
		n = 0;
	}
	o2g_fill_cqe(&r->done, slot, &msg->node, msg->cqe_flags, n, status, rndv);
	r->result = O2G_RESULT_MATCH;
	if (!status)
		o2g_count_completion(n, rndv);
}

/*
 * O2G_RECV_CLAIM: the receive takes the message a peek reserved for
 * r->claim, copied straight to user space (nothing is pinned: it completes
 * in this call). ioctl_mutex held, in the context's own process.
 */
static long o2g_recv_claim(struct o2g_context *ctx, struct o2g_recv *r, void __user *arg)
{
	struct o2g_recv_slot slot = {
		.engine = r->flags & O2G_RECV_UNTAGGED ? O2G_UNTAGGED : O2G_TAGGED,
		.addr = r->addr,
		.len = r->len,
		.node.cookie = r->cookie,
	};
	struct o2g_matcher *m = &ctx->engines[slot.engine];
	struct o2g_unexpected *u;

	spin_lock_bh(&ctx->lock);
	u = o2g_match_claimed_by(m, r->claim);
	if (u)
		o2g_match_unlink_unexpected(m, u);
	spin_unlock_bh(&ctx->lock);
	if (!u)
		return -ENOENT;

	o2g_recv_take_buffered(ctx, r, &slot, u->owner);
	spin_lock_bh(&ctx->lock);
	o2g_buffered_free(ctx, u->owner);
	spin_unlock_bh(&ctx->lock);
	/* Unexpected space freed: stopped sockets may go on. */
	o2g_sock_kick_all(ctx);
	return copy_to_user(arg, r, sizeof(*r)) ? -EFAULT : 0;
}

/* O2G_IOC_POST_RECV. ioctl_mutex held, in the context's own process. */
long o2g_recv_post(struct o2g_context *ctx, void __user *arg)
{
	struct o2g_buffered *msg = NULL;
	struct o2g_unexpected *u;
	struct o2g_recv_slot *slot;
	struct o2g_matcher *m;
	struct o2g_recv r;
	int err;

	if (copy_from_user(&r, arg, sizeof(r)))
		return -EFAULT;
	err = o2g_recv_check(&r);
	if (err)
		return err;
	memset(&r.done, 0, sizeof(r.done));
	if (r.flags & O2G_RECV_CLAIM)
		return o2g_recv_claim(ctx, &r, arg);
	slot = kzalloc(sizeof(*slot), GFP_KERNEL);
	if (!slot) {
		O2G_COUNT(mem_fail);
		return -ENOMEM;
	}
	slot->engine = r.flags & O2G_RECV_UNTAGGED ? O2G_UNTAGGED : O2G_TAGGED;
	slot->addr = r.addr;
	slot->len = r.len;
	slot->node.cookie = r.cookie;
	slot->node.source = r.source;
	slot->node.tag = r.tag;
	slot->node.ignore = r.ignore;
	slot->node.capacity = r.len;
	slot->node.owner = slot;
	if (r.len) {
		slot->pin = o2g_pin_get(ctx, r.addr, o2g_recv_pinned_len(r.len));
		if (IS_ERR(slot->pin)) {
			err = PTR_ERR(slot->pin);
			kfree(slot);
			return err;
		}
	}

	m = &ctx->engines[slot->engine];
	spin_lock_bh(&ctx->lock);
	if (m->posted_count >= o2g_max_posted || !o2g_ring_has_room(ctx)) {
		o2g_recv_free_slot(ctx, slot);
		spin_unlock_bh(&ctx->lock);
		return -EAGAIN;
	}
	u = o2g_match_find_unexpected(m, r.source, r.tag, r.ignore);
	if (u) {
		o2g_match_unlink_unexpected(m, u);
		msg = u->owner;
	} else {
		o2g_match_queue_posted(m, &slot->node);
	}
	spin_unlock_bh(&ctx->lock);

	r.result = O2G_RESULT_QUEUED;
	if (msg) {
		o2g_recv_take_buffered(ctx, &r, slot, msg);
		spin_lock_bh(&ctx->lock);
		o2g_buffered_free(ctx, msg);
		o2g_recv_free_slot(ctx, slot);
		spin_unlock_bh(&ctx->lock);
	}
	/*
	 * Space freed, or a receive a stopped socket's pending header may now
	 * match: let stopped sockets try again.
	 */
	o2g_sock_kick_all(ctx);
	return copy_to_user(arg, &r, sizeof(r)) ? -EFAULT : 0;
}

/* O2G_IOC_CANCEL: a receive not matched yet leaves. ioctl_mutex held. */
long o2g_recv_cancel(struct o2g_context *ctx, void __user *arg)
{
	struct o2g_cancel c;
	bool found;

	if (copy_from_user(&c, arg, sizeof(c)))
		return -EFAULT;
	if (c.flags & ~O2G_POST_FLAGS_ALL)
		return -EINVAL;
	spin_lock_bh(&ctx->lock);
	found = o2g_recv_cancel_locked(ctx, c.cookie, c.flags, false);
	spin_unlock_bh(&ctx->lock);
	c.result = found ? O2G_RESULT_TRUE : O2G_RESULT_FALSE;
	return copy_to_user(arg, &c, sizeof(c)) ? -EFAULT : 0;
}

/*
 * O2G_IOC_PEEK: the first whole unexpected message a receive for (source,
 * tag, ignore) would take, left in place or, with O2G_PEEK_CLAIM, reserved
 * for an O2G_RECV_CLAIM receive. ioctl_mutex held (the posting ring was
 * drained before: receives written there come first).
 */
long o2g_recv_peek(struct o2g_context *ctx, void __user *arg)
{
	struct o2g_unexpected *u;
	struct o2g_buffered *msg;
	struct o2g_matcher *m;
	struct o2g_peek p;

	if (copy_from_user(&p, arg, sizeof(p)))
		return -EFAULT;
	if (p.flags & ~O2G_PEEK_FLAGS_ALL)
		return -EINVAL;
	m = &ctx->engines[p.flags & O2G_RECV_UNTAGGED ? O2G_UNTAGGED : O2G_TAGGED];
	memset(&p.msg, 0, sizeof(p.msg));
	p.result = O2G_RESULT_NONE;

	spin_lock_bh(&ctx->lock);
	u = o2g_match_find_unexpected(m, p.source, p.tag, p.ignore);
	if (u) {
		msg = u->owner;
		p.result = O2G_RESULT_MESSAGE;
		p.msg.source = u->source;
		p.msg.tag = u->tag;
		p.msg.data = u->data;
		p.msg.length = u->length;
		p.msg.flags = msg->cqe_flags | o2g_cqe_engine_flag(msg->engine) |
			      (msg->rendezvous ? O2G_CQE_RENDEZVOUS : 0);
		/* As the engine's rule: a claim holding a message already makes this a plain peek. */
		if (p.flags & O2G_PEEK_CLAIM)
			o2g_match_reserve(m, u, p.claim);
	}
	spin_unlock_bh(&ctx->lock);
	return copy_to_user(arg, &p, sizeof(p)) ? -EFAULT : 0;
}

/* At release, sockets detached: every receive and buffer goes. */
void o2g_recv_free_all(struct o2g_context *ctx)
{
	struct o2g_unexpected *u, *un;
	struct o2g_posted *p, *pn;
	int e;

	spin_lock_bh(&ctx->lock);
	for (e = 0; e < 2; e++) {
		struct o2g_matcher *m = &ctx->engines[e];

		list_for_each_entry_safe(p, pn, &m->posted, link) {
			o2g_match_unlink_posted(m, p);
			o2g_recv_free_slot(ctx, p->owner);
		}
		list_for_each_entry_safe(u, un, &m->arrival, link) {
			o2g_match_unlink_unexpected(m, u);
			o2g_buffered_free(ctx, u->owner);
		}
		/* Reserved by a peek and never claimed. */
		list_for_each_entry_safe(u, un, &m->claimed, link) {
			o2g_match_unlink_unexpected(m, u);
			o2g_buffered_free(ctx, u->owner);
		}
	}
	spin_unlock_bh(&ctx->lock);
}
