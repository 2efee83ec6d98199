// SPDX-License-Identifier: GPL-2.0-only
/*
 * O2G_IOC_MATCH: drives a context's matching engine with descriptors only,
 * one match_backend operation per call, so that the shared test vectors
 * (and a differential test against the user-space engine) run through the
 * very code the receive path uses. Such a context holds no buffers and
 * attaches no sockets. ioctl_mutex held; the context lock is taken here.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "o2g_context.h"
#include "o2g_stats.h"

static void o2g_fill_msg(struct o2g_msg *out, const struct o2g_unexpected *u)
{
	out->cookie = u->cookie;
	out->source = u->source;
	out->tag = u->tag;
	out->data = u->data;
	out->length = u->length;
}

static void o2g_fill_recv(struct o2g_posted_desc *out, const struct o2g_posted *p)
{
	out->cookie = p->cookie;
	out->source = p->source;
	out->tag = p->tag;
	out->ignore = p->ignore;
	out->capacity = p->capacity;
	out->persistent = p->persistent;
}

/* post(): the node is queued, or freed when a message took the receive. */
static void o2g_test_post(struct o2g_context *ctx, struct o2g_matcher *m,
			  struct o2g_match_op *op, struct o2g_posted *node)
{
	struct o2g_unexpected *u;

	node->cookie = op->cookie;
	node->source = op->source;
	node->tag = op->tag;
	node->ignore = op->ignore;
	node->capacity = op->capacity;
	node->persistent = op->flags & O2G_MATCH_PERSISTENT;

	spin_lock_bh(&ctx->lock);
	u = o2g_match_find_unexpected(m, op->source, op->tag, op->ignore);
	if (!u || node->persistent)
		o2g_match_queue_posted(m, node);
	if (u)
		o2g_match_unlink_unexpected(m, u);
	spin_unlock_bh(&ctx->lock);

	if (!u) {
		op->result = O2G_RESULT_QUEUED;
		return;
	}
	op->result = O2G_RESULT_MATCH;
	o2g_fill_recv(&op->recv, node);
	o2g_fill_msg(&op->msg, u);
	op->truncated = u->length > node->capacity;
	kfree(u);
	if (!node->persistent)
		kfree(node);
}

static int o2g_test_arrive(struct o2g_context *ctx, struct o2g_matcher *m,
			   struct o2g_match_op *op, struct o2g_unexpected *node)
{
	struct o2g_posted *p;

	node->cookie = op->cookie;
	node->source = op->source;
	node->tag = op->tag;
	node->data = op->data;
	node->length = op->length;

	spin_lock_bh(&ctx->lock);
	p = o2g_match_find_posted(m, op->source, op->tag);
	if (p) {
		o2g_fill_recv(&op->recv, p);
		if (!p->persistent)
			o2g_match_unlink_posted(m, p);
		else
			p = NULL;	/* stays posted: nothing to free */
		op->result = O2G_RESULT_MATCH;
	} else if (m->unexpected_count >= o2g_max_unexpected_msgs) {
		spin_unlock_bh(&ctx->lock);
		kfree(node);
		return -ENOSPC;
	} else {
		o2g_match_queue_unexpected(m, node);
		op->result = O2G_RESULT_QUEUED;
	}
	spin_unlock_bh(&ctx->lock);

	if (op->result == O2G_RESULT_MATCH) {
		o2g_fill_msg(&op->msg, node);
		op->truncated = node->length > op->recv.capacity;
		kfree(node);
		kfree(p);
	}
	return 0;
}

static void o2g_test_peek(struct o2g_context *ctx, struct o2g_matcher *m, struct o2g_match_op *op)
{
	struct o2g_unexpected *u;

	spin_lock_bh(&ctx->lock);
	u = o2g_match_find_unexpected(m, op->source, op->tag, op->ignore);
	if (u) {
		o2g_fill_msg(&op->msg, u);
		if (op->flags & O2G_MATCH_HAS_CLAIM)
			o2g_match_reserve(m, u, op->claim_cookie);
	}
	spin_unlock_bh(&ctx->lock);
	op->result = u ? O2G_RESULT_MESSAGE : O2G_RESULT_NONE;
}

static void o2g_test_claim(struct o2g_context *ctx, struct o2g_matcher *m, struct o2g_match_op *op)
{
	struct o2g_unexpected *u;

	spin_lock_bh(&ctx->lock);
	u = o2g_match_claimed_by(m, op->claim_cookie);
	if (u)
		o2g_match_unlink_unexpected(m, u);
	spin_unlock_bh(&ctx->lock);
	op->result = u ? O2G_RESULT_MESSAGE : O2G_RESULT_NONE;
	if (u) {
		o2g_fill_msg(&op->msg, u);
		kfree(u);
	}
}

static void o2g_test_cancel(struct o2g_context *ctx, struct o2g_matcher *m, struct o2g_match_op *op)
{
	struct o2g_posted *p;

	spin_lock_bh(&ctx->lock);
	p = o2g_match_posted_by_cookie(m, op->cookie);
	if (p)
		o2g_match_unlink_posted(m, p);
	spin_unlock_bh(&ctx->lock);
	op->result = p ? O2G_RESULT_TRUE : O2G_RESULT_FALSE;
	kfree(p);
}

/* fail_source(): the cookies go to op->list, in posting order. */
static int o2g_test_fail(struct o2g_context *ctx, struct o2g_matcher *m, struct o2g_match_op *op)
{
	u32 room = min_t(u32, op->list_len, o2g_max_posted);
	struct o2g_posted *p;
	LIST_HEAD(failed);
	u64 *cookies;
	u32 n = 0;
	int err = 0;

	cookies = kcalloc(max_t(u32, room, 1), sizeof(*cookies), GFP_KERNEL);
	if (!cookies) {
		O2G_COUNT(mem_fail);
		return -ENOMEM;
	}
	spin_lock_bh(&ctx->lock);
	list_for_each_entry(p, &m->posted, link)
		if (op->source != O2G_ANY_SOURCE && p->source == op->source)
			n++;
	if (n > room) {
		err = -ENOSPC;	/* nothing removed; list_count says how many */
	} else {
		n = 0;
		while ((p = o2g_match_first_posted_for(m, op->source))) {
			o2g_match_unlink_posted(m, p);
			cookies[n++] = p->cookie;
			list_add_tail(&p->link, &failed);
		}
	}
	spin_unlock_bh(&ctx->lock);

	op->list_count = n;
	op->result = O2G_RESULT_DONE;
	if (!err && n && copy_to_user(u64_to_user_ptr(op->list), cookies, n * sizeof(*cookies)))
		err = -EFAULT;	/* the receives are gone all the same, as fail_source() says */
	while (!list_empty(&failed)) {
		p = list_first_entry(&failed, struct o2g_posted, link);
		list_del(&p->link);
		kfree(p);
	}
	kfree(cookies);
	return err;
}

static int o2g_test_renumber(struct o2g_context *ctx, struct o2g_matcher *m, struct o2g_match_op *op)
{
	u64 *cookies;

	if (op->list_len > o2g_max_unexpected_msgs)
		return -EINVAL;
	op->result = O2G_RESULT_DONE;
	if (!op->list_len)
		return 0;
	cookies = memdup_user(u64_to_user_ptr(op->list), op->list_len * sizeof(*cookies));
	if (IS_ERR(cookies))
		return PTR_ERR(cookies);
	spin_lock_bh(&ctx->lock);
	o2g_match_renumber(m, cookies, op->list_len, op->source);
	spin_unlock_bh(&ctx->lock);
	kfree(cookies);
	return 0;
}

static int o2g_test_op(struct o2g_context *ctx, struct o2g_match_op *op)
{
	struct o2g_matcher *m = &ctx->engines[op->flags & O2G_MATCH_UNTAGGED ? O2G_UNTAGGED : O2G_TAGGED];
	struct o2g_unexpected *u;
	struct o2g_posted *p;

	switch (op->opcode) {
	case O2G_MATCH_POST:
		if (READ_ONCE(m->posted_count) >= o2g_max_posted)
			return -ENOSPC;
		p = kzalloc(sizeof(*p), GFP_KERNEL);
		if (!p) {
			O2G_COUNT(mem_fail);
			return -ENOMEM;
		}
		o2g_test_post(ctx, m, op, p);
		return 0;
	case O2G_MATCH_ARRIVE:
		u = kzalloc(sizeof(*u), GFP_KERNEL);
		if (!u) {
			O2G_COUNT(mem_fail);
			return -ENOMEM;
		}
		return o2g_test_arrive(ctx, m, op, u);
	case O2G_MATCH_PEEK:
		o2g_test_peek(ctx, m, op);
		return 0;
	case O2G_MATCH_CLAIM:
		o2g_test_claim(ctx, m, op);
		return 0;
	case O2G_MATCH_CANCEL:
	case O2G_MATCH_REMOVE:
		o2g_test_cancel(ctx, m, op);
		return 0;
	case O2G_MATCH_FAIL:
		return o2g_test_fail(ctx, m, op);
	case O2G_MATCH_RENUMBER:
		return o2g_test_renumber(ctx, m, op);
	case O2G_MATCH_DEPTH:
		op->result = O2G_RESULT_DONE;
		return 0;
	}
	return -EINVAL;
}

long o2g_match_ioctl(struct o2g_context *ctx, void __user *arg)
{
	struct o2g_match_op op;
	struct o2g_matcher *m;
	int err;

	if (copy_from_user(&op, arg, sizeof(op)))
		return -EFAULT;
	if (op.flags & ~O2G_MATCH_FLAGS_ALL)
		return -EINVAL;
	/* The outputs are ours to fill: whatever came in there is dropped. */
	op.result = 0;
	op.truncated = 0;
	op.list_count = 0;
	memset(&op.recv, 0, sizeof(op.recv));
	memset(&op.msg, 0, sizeof(op.msg));

	err = o2g_test_op(ctx, &op);
	m = &ctx->engines[op.flags & O2G_MATCH_UNTAGGED ? O2G_UNTAGGED : O2G_TAGGED];
	spin_lock_bh(&ctx->lock);
	op.posted_depth = m->posted_count;
	op.unexpected_depth = m->unexpected_count;
	spin_unlock_bh(&ctx->lock);
	if (copy_to_user(arg, &op, sizeof(op)))
		return -EFAULT;
	return err;
}

static void o2g_free_engine(struct o2g_matcher *m)
{
	struct o2g_unexpected *u, *un;
	struct o2g_posted *p, *pn;

	list_for_each_entry_safe(p, pn, &m->posted, link)
		kfree(p);
	list_for_each_entry_safe(u, un, &m->arrival, link)
		kfree(u);
	list_for_each_entry_safe(u, un, &m->claimed, link)
		kfree(u);
	o2g_matcher_init(m);
}

/* At release: nothing else can reach the context any more. */
void o2g_match_test_free(struct o2g_context *ctx)
{
	o2g_free_engine(&ctx->engines[O2G_TAGGED]);
	o2g_free_engine(&ctx->engines[O2G_UNTAGGED]);
}
