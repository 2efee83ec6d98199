// SPDX-License-Identifier: GPL-2.0-only
/*
 * Payload buffers of unexpected messages: whole pages, filled from the
 * socket's skbs and emptied into a receive's pinned pages (any context) or
 * straight to user space (ioctl). The accounting against
 * max_unexpected_bytes is the caller's (o2g_sock.c, o2g_recv.c).
 *
 * They are charged to the memory cgroup of the process that opened the
 * context, wherever they are allocated (the receive softirq runs on behalf
 * of whoever): bytes a peer sent and the module holds would otherwise
 * belong to no one once they left the socket's receive queue (which is
 * charged to the socket's cgroup), and a container's limit would not bound
 * max_unexpected_bytes times its contexts. Over the limit the allocation
 * fails and the socket stops, as when max_unexpected_bytes is reached.
 */
#include <linux/highmem.h>
#include <linux/memcontrol.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "o2g_context.h"

/*
 * Any context; gfp says whether it may sleep (it must not dip into the
 * atomic reserves: GFP_ATOMIC would also be charged past the cgroup's
 * limit). Charged to ctx->memcg.
 */
struct o2g_buffered *o2g_buffered_alloc(struct o2g_context *ctx, u64 length, gfp_t gfp)
{
	unsigned int npages = DIV_ROUND_UP(length, PAGE_SIZE);
	struct mem_cgroup *old = set_active_memcg(ctx->memcg);
	struct o2g_buffered *msg;
	unsigned int i;

	gfp |= __GFP_ACCOUNT | __GFP_NOWARN;
	msg = kzalloc(struct_size(msg, pages, npages), gfp);
	if (!msg)
		goto out;
	for (i = 0; i < npages; i++) {
		msg->pages[i] = alloc_page(gfp);
		if (!msg->pages[i]) {
			msg->npages = i;
			o2g_buffered_release(msg);
			msg = NULL;
			goto out;
		}
	}
	msg->npages = npages;
	msg->node.owner = msg;
out:
	set_active_memcg(old);
	return msg;
}

void o2g_buffered_release(struct o2g_buffered *msg)
{
	unsigned int i;

	for (i = 0; i < msg->npages; i++)
		__free_page(msg->pages[i]);
	kfree(msg);
}

/* Copies n bytes at skb offset into the payload at `at`. Socket lock held. */
void o2g_buffered_fill(struct o2g_buffered *msg, u64 at, const struct sk_buff *skb, int offset,
		       size_t n)
{
	while (n) {
		size_t in_page = offset_in_page(at);
		size_t chunk = min_t(size_t, n, PAGE_SIZE - in_page);
		void *dst = kmap_local_page(msg->pages[at >> PAGE_SHIFT]);

		/* Within the skb's length by the caller's bounds: cannot fail. */
		WARN_ON_ONCE(skb_copy_bits(skb, offset, dst + in_page, chunk));
		kunmap_local(dst);
		at += chunk;
		offset += chunk;
		n -= chunk;
	}
}

/*
 * The first n payload bytes into the pinned buffer at addr; stops early if
 * the buffer was unmapped meanwhile. Context lock held, any context.
 */
u64 o2g_buffered_to_pin(const struct o2g_buffered *msg, struct o2g_pin *pin, unsigned long addr,
			u64 n)
{
	u64 done = 0;

	while (done < n && !pin->unmapped) {
		size_t room, chunk;
		size_t in_page = offset_in_page(done);
		void *dst = o2g_pin_map(pin, addr + done, &room);
		void *src = kmap_local_page(msg->pages[done >> PAGE_SHIFT]);

		chunk = min_t(u64, n - done, min_t(size_t, room, PAGE_SIZE - in_page));
		memcpy(dst, src + in_page, chunk);
		kunmap_local(src);
		o2g_pin_unmap(pin, addr + done, dst);
		done += chunk;
	}
	return done;
}

/* The first n payload bytes to user space. Process context, no lock. */
int o2g_buffered_to_user(const struct o2g_buffered *msg, void __user *dst, u64 n)
{
	u64 done = 0;

	while (done < n) {
		size_t chunk = min_t(u64, n - done, PAGE_SIZE);
		void *src = kmap_local_page(msg->pages[done >> PAGE_SHIFT]);
		unsigned long left = copy_to_user(dst + done, src, chunk);

		kunmap_local(src);
		if (left)
			return -EFAULT;
		done += chunk;
	}
	return 0;
}
