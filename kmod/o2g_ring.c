// SPDX-License-Identifier: GPL-2.0-only
/*
 * The completion ring shared with user space (layout in uapi/o2g.h). The
 * module is the only producer (under the context lock, from the receive
 * softirq, a socket's worker or an ioctl); user space is the only consumer
 * and owns `tail`. The module never trusts `tail`: it only bounds how many
 * entries count as unread, and posting is refused before the ring could
 * overflow (o2g_recv.c), so a push always has a free slot.
 */
#include <linux/eventfd.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "o2g_context.h"
#include "o2g_stats.h"

/* At open, process context. */
int o2g_ring_init(struct o2g_ring *ring)
{
	ring->memory = vmalloc_user(PAGE_ALIGN(O2G_RING_BYTES(o2g_ring_entries)));
	if (!ring->memory)
		return -ENOMEM;
	ring->header = ring->memory;
	ring->entries = ring->memory + O2G_RING_HEADER_BYTES;
	ring->mask = o2g_ring_entries - 1;
	ring->head = 0;
	ring->header->entries = o2g_ring_entries;
	ring->header->entry_size = sizeof(struct o2g_completion);
	return 0;
}

/* At release: no mapping of the file is left (each holds a file reference). */
void o2g_ring_free(struct o2g_ring *ring)
{
	vfree(ring->memory);
	ring->memory = NULL;
}

/* Entries written and not yet consumed; a tail out of range counts as a full ring. Any context. */
u32 o2g_ring_unread(const struct o2g_ring *ring)
{
	u32 unread = ring->head - READ_ONCE(ring->header->tail);

	return unread > ring->mask + 1 ? ring->mask + 1 : unread;
}

/* Context lock held. */
void o2g_ring_push(struct o2g_context *ctx, const struct o2g_completion *cqe)
{
	struct o2g_ring *ring = &ctx->ring;

	/*
	 * The posting bound keeps a slot free unless user space moved its
	 * tail back after posting: then it loses this completion, not the
	 * module its memory.
	 */
	if (o2g_ring_unread(ring) > ring->mask) {
		O2G_COUNT(ring_overflow);
		return;
	}
	ring->entries[ring->head & ring->mask] = *cqe;
	/* The entry is visible before the head that announces it. */
	smp_store_release(&ring->header->head, ring->head + 1);
	ring->head++;
	wake_up_interruptible(&ctx->waiters);
	if (ctx->eventfd)
		eventfd_signal(ctx->eventfd, 1);
}

/*
 * A shared, non-executable mapping of the whole of a ring's `bytes` at
 * `memory` (vmalloc_user); the completion ring and the posting ring.
 * ioctl_mutex held.
 */
int o2g_mmap_shared_ring(void *memory, size_t bytes, struct vm_area_struct *vma)
{
	if (vma->vm_end - vma->vm_start != PAGE_ALIGN(bytes))
		return -EINVAL;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	vma->vm_flags &= ~VM_MAYEXEC;
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	return remap_vmalloc_range(vma, memory, 0);
}

/* ioctl_mutex held: the completion ring, from offset 0. */
int o2g_ring_mmap(struct o2g_ring *ring, struct vm_area_struct *vma)
{
	if (vma->vm_pgoff != 0)
		return -EINVAL;
	return o2g_mmap_shared_ring(ring->memory, O2G_RING_BYTES(o2g_ring_entries), vma);
}
