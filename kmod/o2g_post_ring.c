// SPDX-License-Identifier: GPL-2.0-only
/*
 * The posting ring (layout and contract in uapi/o2g.h): user space posts
 * and cancels receives by writing entries into shared memory; the module
 * takes them in order, each checked as O2G_IOC_POST_RECV's or
 * O2G_IOC_CANCEL's argument would be, so a message rate is not one ioctl
 * per receive.
 *
 * Who takes entries, and in what context:
 *  - a socket's reader (the receive softirq, or the socket's worker) when a
 *    frame header arrives or a message becomes unexpected, context lock
 *    held: only receives the pin-down cache covers (a lookup, no pinning).
 *    The first entry that needs pinning stops it and queues `work`.
 *  - `work`, in process context, in the owner's mm (kthread_use_mm), and
 *    every ioctl of the context: ioctl_mutex held; pins outside the lock.
 * Order is kept: one entry at a time, `tail` advanced under the context
 * lock; while a process-context drainer pins for the entry at `tail` it
 * marks the ring `slow` and readers leave the ring to it.
 *
 * Bounds: a drain takes at most `entries` entries; user space owns `head`
 * and the entries, so every entry is copied once, then checked, and a head
 * that is garbage only yields entries that are refused one by one.
 */
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "o2g_context.h"
#include "o2g_stats.h"

static void o2g_post_work(struct work_struct *work);

/* At open, process context. */
int o2g_post_ring_init(struct o2g_context *ctx)
{
	struct o2g_post_ring *posts = &ctx->posts;

	posts->memory = vmalloc_user(PAGE_ALIGN(O2G_POST_RING_BYTES(o2g_ring_entries)));
	if (!posts->memory)
		return -ENOMEM;
	posts->header = posts->memory;
	posts->entries = posts->memory + O2G_RING_HEADER_BYTES;
	posts->mask = o2g_ring_entries - 1;
	posts->header->entries = o2g_ring_entries;
	posts->header->entry_size = sizeof(struct o2g_post);
	INIT_WORK(&posts->work, o2g_post_work);
	return 0;
}

/* At release, sockets detached (nothing queues `work` any more); entries left are dropped. */
void o2g_post_ring_free(struct o2g_context *ctx)
{
	cancel_work_sync(&ctx->posts.work);
	vfree(ctx->posts.memory);
	ctx->posts.memory = NULL;
}

/* ioctl_mutex held: the posting ring, at O2G_POST_RING_OFFSET (o2g_mmap). */
int o2g_post_ring_mmap(struct o2g_post_ring *posts, struct vm_area_struct *vma)
{
	return o2g_mmap_shared_ring(posts->memory, O2G_POST_RING_BYTES(o2g_ring_entries), vma);
}

/* Context lock held: copies the entry at tail, if user space wrote one. */
static bool o2g_post_next(struct o2g_post_ring *posts, struct o2g_post *e)
{
	u32 head = smp_load_acquire(&posts->header->head);

	if (head == posts->tail)
		return false;
	/* One copy: user space may write the slot again, we check only this. */
	memcpy(e, &posts->entries[posts->tail & posts->mask], sizeof(*e));
	return true;
}

/* Context lock held: the entry at tail is done with; its slot is user space's again. */
static void o2g_post_consumed(struct o2g_post_ring *posts)
{
	posts->tail++;
	smp_store_release(&posts->header->tail, posts->tail);
	O2G_COUNT(ring_posts);
}

/*
 * A receive entry, checked, with its pages: `pin` NULL means the pin-down
 * cache only (false on a miss: nothing consumed), an error pointer what
 * pinning in process context gave, otherwise those pinned pages (a
 * reference the receive takes over). Context lock held; any context.
 */
static bool o2g_post_take_recv(struct o2g_context *ctx, const struct o2g_post *e,
			       struct o2g_pin *pin)
{
	struct o2g_recv_slot *slot;
	int err = e->reserved ? -EINVAL : o2g_recv_check_range(e->addr, e->len, e->flags);

	if (!err && IS_ERR(pin))
		err = PTR_ERR(pin);
	if (err) {
		o2g_recv_refuse(ctx, e->cookie, -err);
		return true;
	}
	if (e->len && !pin) {
		pin = o2g_pin_find_locked(ctx, e->addr, o2g_recv_pinned_len(e->len));
		if (!pin)
			return false;
	}
	slot = kzalloc(sizeof(*slot), GFP_ATOMIC);
	if (!slot) {
		O2G_COUNT(mem_fail);
		err = -ENOMEM;
		goto refuse;
	}
	slot->engine = e->flags & O2G_RECV_UNTAGGED ? O2G_UNTAGGED : O2G_TAGGED;
	slot->addr = e->addr;
	slot->len = e->len;
	slot->node.cookie = e->cookie;
	slot->node.source = e->source;
	slot->node.tag = e->tag;
	slot->node.ignore = e->ignore;
	slot->node.capacity = e->len;
	slot->node.owner = slot;
	slot->pin = e->len ? pin : NULL;
	err = o2g_recv_enqueue_locked(ctx, slot);
	if (!err)
		return true;
	kfree(slot);
refuse:
	if (e->len)
		o2g_pin_put(ctx, pin);
	o2g_recv_refuse(ctx, e->cookie, -err);
	return true;
}

/* One entry: false when it needs pinning (see o2g_post_take_recv). Context lock held. */
static bool o2g_post_take(struct o2g_context *ctx, const struct o2g_post *e, struct o2g_pin *pin)
{
	switch (e->op) {
	case O2G_POST_RECV:
		if (!o2g_post_take_recv(ctx, e, pin))
			return false;
		break;
	case O2G_POST_CANCEL:
		/* No completion was promised for a cancel: a bad one is only counted. */
		if ((e->flags & ~O2G_POST_FLAGS_ALL) || e->reserved)
			O2G_COUNT(refused);
		else
			o2g_recv_cancel_locked(ctx, e->cookie, e->flags, true);
		break;
	default:
		o2g_recv_refuse(ctx, e->cookie, EINVAL);
		break;
	}
	o2g_post_consumed(&ctx->posts);
	return true;
}

/*
 * A socket's reader: takes what the pin-down cache covers, and leaves an
 * entry that needs pinning to the worker. True if anything was taken.
 * Context lock held; the receive softirq or a socket's worker.
 */
bool o2g_post_drain_locked(struct o2g_context *ctx)
{
	struct o2g_post_ring *posts = &ctx->posts;
	u32 budget = posts->mask + 1;
	bool took = false;
	struct o2g_post e;

	if (posts->slow)
		return false;
	while (budget-- && o2g_post_next(posts, &e)) {
		if (!o2g_post_take(ctx, &e, NULL)) {
			O2G_COUNT(ring_post_deferred);
			queue_work(o2g_wq, &posts->work);
			break;
		}
		took = true;
	}
	return took;
}

/*
 * Every entry written so far, pinning where the cache has nothing. True if
 * anything was taken. ioctl_mutex held, in the owner's mm; takes the
 * context lock.
 */
bool o2g_post_drain(struct o2g_context *ctx)
{
	struct o2g_post_ring *posts = &ctx->posts;
	u32 budget = posts->mask + 1;
	bool took = false;
	struct o2g_pin *pin;
	struct o2g_post e;

	while (budget--) {
		spin_lock_bh(&ctx->lock);
		if (!o2g_post_next(posts, &e)) {
			spin_unlock_bh(&ctx->lock);
			break;
		}
		took = true;
		if (o2g_post_take(ctx, &e, NULL)) {
			spin_unlock_bh(&ctx->lock);
			continue;
		}
		posts->slow = true;
		spin_unlock_bh(&ctx->lock);
		pin = o2g_pin_get(ctx, e.addr, o2g_recv_pinned_len(e.len));
		spin_lock_bh(&ctx->lock);
		posts->slow = false;
		o2g_post_take(ctx, &e, pin);
		spin_unlock_bh(&ctx->lock);
	}
	return took;
}

/*
 * `work`: entries a socket's reader could not take. A kernel worker, so it
 * borrows the owner's mm to pin; once the owner's mm is gone, release
 * drops whatever is left.
 */
static void o2g_post_work(struct work_struct *work)
{
	struct o2g_context *ctx = container_of(work, struct o2g_context, posts.work);

	if (!mmget_not_zero(ctx->mm))
		return;
	kthread_use_mm(ctx->mm);
	mutex_lock(&ctx->ioctl_mutex);
	if (o2g_post_drain(ctx))
		o2g_sock_kick_all(ctx);
	mutex_unlock(&ctx->ioctl_mutex);
	kthread_unuse_mm(ctx->mm);
	mmput_async(ctx->mm);
}

/*
 * A message became unexpected or a socket stopped at a header: a post
 * written from now on must be taken without waiting for another frame, so
 * user space is told, then the ring is looked at again (the barrier pairs
 * with user space's between writing head and reading attention: either it
 * sees attention, or we see its entry). True if anything was taken.
 * Context lock held; a socket's reader.
 */
bool o2g_post_attention_locked(struct o2g_context *ctx)
{
	WRITE_ONCE(ctx->posts.header->attention, 1);
	smp_mb();
	return o2g_post_drain_locked(ctx);
}

/*
 * After an ioctl took the entries: attention is no longer needed once no
 * message is held or reserved and no socket waits at a header.
 * ioctl_mutex held; takes the context lock.
 */
void o2g_post_attention_settle(struct o2g_context *ctx)
{
	spin_lock_bh(&ctx->lock);
	if (!ctx->unexpected_msgs && !o2g_sock_any_waiting_locked(ctx))
		WRITE_ONCE(ctx->posts.header->attention, 0);
	spin_unlock_bh(&ctx->lock);
}
