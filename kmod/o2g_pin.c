// SPDX-License-Identifier: GPL-2.0-only
/*
 * The pin-down cache: user buffers are pinned once and kept, so a buffer
 * posted again (the common case in MPI codes) costs a lookup, not a
 * page-table walk and a pin. Entries are keyed by page range; a lookup hits
 * when a live entry covers the whole buffer. What the cache keeps beyond
 * the receives in flight is bounded by pin_cache_pages per context: a miss
 * evicts unused entries, least recently used first, and an entry whose last
 * receive ended is evicted while the total is above the bound. Pages in use
 * are not refused for the bound (a posted receive must not fail, nor wait
 * for pins that only later receives would free): they are bounded by
 * max_posted receives of at most 1 MiB pinned each (o2g_recv_pinned_len).
 *
 * An MMU notifier keeps it honest: any invalidation of part of a cached
 * range retires the entry (no new receive gets it). An unused retired entry
 * is unpinned at once (by a worker, since the notifier may run where kvfree
 * could sleep); one still used by a posted receive stays pinned (the kernel
 * may be writing into it) until that receive ends. Only a real unmap
 * (munmap, mremap, the process exiting) marks it `unmapped`, and its
 * receive then completes with EFAULT instead of delivering into memory the
 * process no longer sees. Other invalidations leave the pages where they
 * were: khugepaged, for one, invalidates a range before it finds that the
 * pages are pinned and gives up, and a receive must not fail for that.
 *
 * A pin runs without the context lock, so an invalidation of its range
 * while it runs (or one begun before and not ended) may leave it with
 * stale pages: o2g_pin_get then pins again, at most O2G_PIN_RETRIES times,
 * and after that refuses the receive with EAGAIN. Only invalidations that
 * touch the range count: the notifier notes each one's range while it is
 * under way (`inflight`) and moves `invalidate_seq` only for the range
 * being pinned, since a process always has some elsewhere (malloc giving
 * memory back, other threads' mappings, khugepaged).
 *
 * Pinned pages count against the owner's RLIMIT_MEMLOCK, as RDMA's do: each
 * pin is charged to the mm's pinned_vm (VmPin in /proc/PID/status) and
 * uncharged when unpinned, and one that would take pinned_vm beyond the
 * limit the process had when it opened the context (none with
 * CAP_IPC_LOCK) first unpins every unused cached range, then fails with
 * ENOMEM (counted as pin_limit). Otherwise any user who may open /dev/o2g
 * could pin max_posted MiB plus pin_cache_pages per context, for as many
 * contexts as descriptors.
 *
 * For benchmarks, the parameter pin_cache_bypass makes every lookup miss:
 * each receive pins its pages and they are unpinned when it ends (PM's
 * "every lookup missed" case), without unloading the module.
 *
 * Locking: the context lock guards the lists and counts; pinning and
 * unpinning happen outside it in process context.
 */
#include <linux/backing-dev.h>
#include <linux/highmem.h>
#include <linux/hugetlb_inline.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "o2g_context.h"
#include "o2g_stats.h"

#define O2G_PIN_RETRIES 3

static struct o2g_context *o2g_pins_owner(struct o2g_pin_cache *cache)
{
	return container_of(cache, struct o2g_context, pins);
}

/*
 * Charges npages to the owner's pinned_vm, within its RLIMIT_MEMLOCK:
 * -EDQUOT (nothing charged) when they would not fit. Any context.
 */
static int o2g_pin_charge(struct o2g_context *ctx, unsigned long npages)
{
	s64 total = atomic64_add_return(npages, &ctx->mm->pinned_vm);

	if (ctx->pins.memlock_pages != ULONG_MAX && total > (s64)ctx->pins.memlock_pages) {
		atomic64_sub(npages, &ctx->mm->pinned_vm);
		return -EDQUOT;
	}
	return 0;
}

/* Any context: npages charged by o2g_pin_charge are pinned no more. */
static void o2g_pin_uncharge(struct o2g_context *ctx, unsigned long npages)
{
	atomic64_sub(npages, &ctx->mm->pinned_vm);
}

/* Process context, no lock: the entry is on no list any more. */
static void o2g_pin_release(struct o2g_context *ctx, struct o2g_pin *pin)
{
	unpin_user_pages_dirty_lock(pin->pages, pin->npages, true);
	O2G_SUB(pinned_pages, pin->npages);
	o2g_pin_uncharge(ctx, pin->npages);
	kvfree(pin->pages);
	kfree(pin);
}

static void o2g_pin_release_list(struct o2g_context *ctx, struct list_head *list)
{
	struct o2g_pin *pin, *next;

	list_for_each_entry_safe(pin, next, list, link) {
		list_del(&pin->link);
		o2g_pin_release(ctx, pin);
	}
}

/* Context lock held: the entry leaves the cache for good. */
static void o2g_pin_retire(struct o2g_pin_cache *cache, struct o2g_pin *pin, bool unmapped)
{
	pin->cached = false;
	pin->unmapped = unmapped;
	if (pin->refs) {
		list_move_tail(&pin->link, &cache->retired);
		return;
	}
	cache->pinned_pages -= pin->npages;
	list_move_tail(&pin->link, &cache->reap);
}

/* The system workqueue: process context, takes the context lock. */
static void o2g_pin_reap(struct work_struct *work)
{
	struct o2g_pin_cache *cache = container_of(work, struct o2g_pin_cache, reap_work);
	struct o2g_context *ctx = o2g_pins_owner(cache);
	LIST_HEAD(unused);

	spin_lock_bh(&ctx->lock);
	list_splice_init(&cache->reap, &unused);
	spin_unlock_bh(&ctx->lock);
	o2g_pin_release_list(ctx, &unused);
}

/*
 * An invalidation of [start, end) touches the range being pinned: what
 * o2g_pin_get pins meanwhile may be stale. Context lock held.
 */
static void o2g_pin_note_invalidation(struct o2g_pin_cache *cache, unsigned long start, unsigned long end)
{
	if (start < cache->pinning_end && end > cache->pinning_start)
		cache->invalidate_seq++;
}

/* An invalidation of [start, end) begins. Context lock held. */
static void o2g_pin_inflight_add(struct o2g_pin_cache *cache, unsigned long start, unsigned long end)
{
	if (cache->inflight_count < O2G_PIN_INFLIGHT) {
		cache->inflight[cache->inflight_count].start = start;
		cache->inflight[cache->inflight_count].end = end;
		cache->inflight_count++;
	} else {
		cache->inflight_untracked++;
	}
}

/* The invalidation of [start, end) that began ends. Context lock held. */
static void o2g_pin_inflight_remove(struct o2g_pin_cache *cache, unsigned long start, unsigned long end)
{
	unsigned int i;

	for (i = 0; i < cache->inflight_count; i++) {
		if (cache->inflight[i].start == start && cache->inflight[i].end == end) {
			cache->inflight[i] = cache->inflight[--cache->inflight_count];
			return;
		}
	}
	if (cache->inflight_untracked)
		cache->inflight_untracked--;
}

/* Is an invalidation touching [start, end) in progress? Context lock held. */
static bool o2g_pin_inflight_touches(const struct o2g_pin_cache *cache, unsigned long start, unsigned long end)
{
	unsigned int i;

	if (cache->inflight_untracked)
		return true;
	for (i = 0; i < cache->inflight_count; i++)
		if (cache->inflight[i].start < end && cache->inflight[i].end > start)
			return true;
	return false;
}

/* Retires every cached entry in [start, end). Notifier context: may not sleep. */
static void o2g_pin_invalidate(struct o2g_context *ctx, unsigned long start, unsigned long end,
			       bool begin, bool unmapped)
{
	struct o2g_pin_cache *cache = &ctx->pins;
	struct o2g_pin *pin, *next;
	bool queued = false;

	spin_lock_bh(&ctx->lock);
	o2g_pin_note_invalidation(cache, start, end);
	if (begin)
		o2g_pin_inflight_add(cache, start, end);
	list_for_each_entry_safe(pin, next, &cache->lru, link) {
		if (pin->start >= end || pin->start + (pin->npages << PAGE_SHIFT) <= start)
			continue;
		O2G_COUNT(cache_invalidations);
		o2g_pin_retire(cache, pin, unmapped);
		queued = true;
	}
	/* Uncached entries in use (retired, or pinned with the cache bypassed) see the unmap too. */
	list_for_each_entry(pin, &cache->retired, link)
		if (unmapped && pin->start < end && pin->start + (pin->npages << PAGE_SHIFT) > start)
			pin->unmapped = true;
	spin_unlock_bh(&ctx->lock);
	if (queued)
		schedule_work(&cache->reap_work);
}

/* MMU notifier callbacks: may not sleep (a range may be non-blockable). */
static int o2g_pin_invalidate_start(struct mmu_notifier *mn, const struct mmu_notifier_range *range)
{
	struct o2g_pin_cache *cache = container_of(mn, struct o2g_pin_cache, notifier);

	o2g_pin_invalidate(o2g_pins_owner(cache), range->start, range->end, true,
			   range->event == MMU_NOTIFY_UNMAP);
	return 0;
}

static void o2g_pin_invalidate_end(struct mmu_notifier *mn, const struct mmu_notifier_range *range)
{
	struct o2g_pin_cache *cache = container_of(mn, struct o2g_pin_cache, notifier);
	struct o2g_context *ctx = o2g_pins_owner(cache);

	spin_lock_bh(&ctx->lock);
	o2g_pin_inflight_remove(cache, range->start, range->end);
	/*
	 * One that began before the range was noted and overlaps it: seen
	 * here, or in `inflight` when o2g_pin_get looks.
	 */
	o2g_pin_note_invalidation(cache, range->start, range->end);
	spin_unlock_bh(&ctx->lock);
}

/* The address space is going away (the process exits or was killed). */
static void o2g_pin_mm_release(struct mmu_notifier *mn, struct mm_struct *mm)
{
	struct o2g_pin_cache *cache = container_of(mn, struct o2g_pin_cache, notifier);

	o2g_pin_invalidate(o2g_pins_owner(cache), 0, ULONG_MAX, false, true);
}

static const struct mmu_notifier_ops o2g_pin_notifier_ops = {
	.invalidate_range_start = o2g_pin_invalidate_start,
	.invalidate_range_end = o2g_pin_invalidate_end,
	.release = o2g_pin_mm_release,
};

/* At open. */
void o2g_pin_cache_init(struct o2g_pin_cache *cache)
{
	INIT_LIST_HEAD(&cache->lru);
	INIT_LIST_HEAD(&cache->retired);
	INIT_LIST_HEAD(&cache->reap);
	INIT_WORK(&cache->reap_work, o2g_pin_reap);
	cache->notifier.ops = &o2g_pin_notifier_ops;
}

/* Context lock held: a cached entry that covers [start, start + npages pages). */
static struct o2g_pin *o2g_pin_lookup(struct o2g_pin_cache *cache, unsigned long start,
				      unsigned long npages)
{
	unsigned long end = start + (npages << PAGE_SHIFT);
	struct o2g_pin *pin;

	list_for_each_entry(pin, &cache->lru, link)
		if (pin->start <= start && pin->start + (pin->npages << PAGE_SHIFT) >= end)
			return pin;
	return NULL;
}

/*
 * Context lock held: moves unused entries, oldest first, to `evicted` until
 * the cached pages are at most `bound` or none is left unused (pages in use
 * may go beyond it: see the top of this file).
 */
static void o2g_pin_shrink(struct o2g_pin_cache *cache, unsigned long bound, struct list_head *evicted)
{
	struct o2g_pin *pin, *next;

	list_for_each_entry_safe(pin, next, &cache->lru, link) {
		if (cache->pinned_pages <= bound)
			break;
		if (pin->refs)
			continue;
		cache->pinned_pages -= pin->npages;
		list_move_tail(&pin->link, evicted);
		O2G_COUNT(cache_evictions);
	}
}

/* Context lock held: room for npages more within pin_cache_pages (npages <= it). */
static void o2g_pin_make_room(struct o2g_pin_cache *cache, unsigned long npages,
			      struct list_head *evicted)
{
	o2g_pin_shrink(cache, o2g_pin_cache_pages - npages, evicted);
}

/*
 * May the module write into [start, end) behind the process's back?
 * Anonymous memory, tmpfs/shmem and hugetlbfs: yes. A private mapping of a
 * file (a program's .data, say): yes, since pinning for writing breaks
 * copy-on-write first, so the pages pinned are the process's own anonymous
 * copies, never the file's. Pages of a file that the kernel writes back,
 * mapped shared: no, since writing into them while pinned races with
 * writeback (EOPNOTSUPP: the caller receives there itself). I/O and PFN
 * mappings have no pages to pin. mmap_lock held for reading.
 */
static int o2g_pin_check_memory(struct mm_struct *mm, unsigned long start, unsigned long end)
{
	struct vm_area_struct *vma;

	while (start < end) {
		vma = vma_lookup(mm, start);
		if (!vma || (vma->vm_flags & (VM_IO | VM_PFNMAP)))
			return -EFAULT;
		if ((vma->vm_flags & VM_SHARED) && vma->vm_file && !is_vm_hugetlb_page(vma) &&
		    mapping_can_writeback(vma->vm_file->f_mapping))
			return -EOPNOTSUPP;
		start = vma->vm_end;
	}
	return 0;
}

/*
 * Pins [start, +npages) of the caller's mm (the context's), checked and
 * pinned under one hold of mmap_lock so the mapping cannot change in
 * between, and charged to its pinned_vm: -EDQUOT when RLIMIT_MEMLOCK
 * leaves no room for them. Process context, no other lock.
 */
static struct o2g_pin *o2g_pin_new(struct o2g_context *ctx, unsigned long start, unsigned long npages)
{
	struct mm_struct *mm = current->mm;
	struct o2g_pin *pin;
	long pinned;
	int err;

	err = o2g_pin_charge(ctx, npages);
	if (err)
		return ERR_PTR(err);
	pin = kzalloc(sizeof(*pin), GFP_KERNEL);
	if (!pin)
		goto no_memory;
	pin->pages = kvmalloc_array(npages, sizeof(*pin->pages), GFP_KERNEL);
	if (!pin->pages) {
		kfree(pin);
		goto no_memory;
	}
	pin->start = start;
	pin->npages = npages;
	if (mmap_read_lock_killable(mm)) {
		err = -EINTR;
		goto failed;
	}
	err = o2g_pin_check_memory(mm, start, start + (npages << PAGE_SHIFT));
	pinned = err ? 0 : pin_user_pages(start, npages, FOLL_WRITE | FOLL_LONGTERM, pin->pages, NULL);
	mmap_read_unlock(mm);
	if (!err && pinned != npages) {
		if (pinned > 0)
			unpin_user_pages(pin->pages, pinned);
		err = pinned < 0 ? pinned : -EFAULT;
	}
	if (err)
		goto failed;
	O2G_ADD(pinned_pages, npages);
	return pin;

failed:
	kvfree(pin->pages);
	kfree(pin);
	o2g_pin_uncharge(ctx, npages);
	O2G_COUNT(pin_fail);
	return ERR_PTR(err);

no_memory:
	o2g_pin_uncharge(ctx, npages);
	O2G_COUNT(mem_fail);
	return ERR_PTR(-ENOMEM);
}

/*
 * A pinned range that covers [addr, addr + len), with a reference for the
 * caller (o2g_pin_put). -ENOMEM when RLIMIT_MEMLOCK leaves no room for it
 * even with every unused cached range unpinned. ioctl_mutex held, in the
 * context's own mm.
 */
struct o2g_pin *o2g_pin_get(struct o2g_context *ctx, unsigned long addr, u64 len)
{
	struct o2g_pin_cache *cache = &ctx->pins;
	unsigned long start, end, npages, seq;
	struct o2g_pin *pin;
	LIST_HEAD(evicted);
	bool evicted_all = false;
	int attempt, err;

	if (!len || addr + len < addr || !access_ok((void __user *)addr, len))
		return ERR_PTR(-EFAULT);
	start = addr & PAGE_MASK;
	end = PAGE_ALIGN(addr + len);
	npages = (end - start) >> PAGE_SHIFT;
	if (npages > o2g_pin_cache_pages)
		return ERR_PTR(-E2BIG);
	if (!cache->registered) {
		err = mmu_notifier_register(&cache->notifier, ctx->mm);
		if (err)
			return ERR_PTR(err);
		cache->registered = true;
	}

	for (attempt = 0; attempt < O2G_PIN_RETRIES; attempt++) {
		spin_lock_bh(&ctx->lock);
		pin = READ_ONCE(o2g_pin_cache_bypass) ? NULL : o2g_pin_lookup(cache, start, npages);
		if (pin) {
			pin->refs++;
			list_move_tail(&pin->link, &cache->lru);
			spin_unlock_bh(&ctx->lock);
			O2G_COUNT(cache_hits);
			return pin;
		}
		o2g_pin_make_room(cache, npages, &evicted);
		cache->pinned_pages += npages;	/* reserved while we pin */
		/*
		 * Only invalidations of this range send us round again: a
		 * process always has some elsewhere (malloc giving memory back,
		 * khugepaged, other threads' mappings), and counting those
		 * failed a receive with EAGAIN after O2G_PIN_RETRIES rounds.
		 */
		cache->pinning_start = start;
		cache->pinning_end = end;
		seq = cache->invalidate_seq;
		spin_unlock_bh(&ctx->lock);
		o2g_pin_release_list(ctx, &evicted);
		if (attempt == 0 && !evicted_all)
			O2G_COUNT(cache_misses);

		pin = o2g_pin_new(ctx, start, npages);
		spin_lock_bh(&ctx->lock);
		cache->pinning_start = 0;
		cache->pinning_end = 0;
		if (!IS_ERR(pin) && seq == cache->invalidate_seq &&
		    !o2g_pin_inflight_touches(cache, start, end)) {
			pin->refs = 1;
			/* Bypassed: used by this receive only, unpinned when it ends. */
			pin->cached = !READ_ONCE(o2g_pin_cache_bypass);
			list_add_tail(&pin->link, pin->cached ? &cache->lru : &cache->retired);
			spin_unlock_bh(&ctx->lock);
			return pin;
		}
		cache->pinned_pages -= npages;
		if (PTR_ERR_OR_ZERO(pin) == -EDQUOT && !evicted_all) {
			/*
			 * Over RLIMIT_MEMLOCK: what the cache keeps unused goes
			 * first, and what waits for the reaper goes now.
			 */
			evicted_all = true;
			o2g_pin_shrink(cache, 0, &evicted);
			list_splice_tail_init(&cache->reap, &evicted);
			spin_unlock_bh(&ctx->lock);
			o2g_pin_release_list(ctx, &evicted);
			attempt--;	/* not an invalidation's round */
			continue;
		}
		spin_unlock_bh(&ctx->lock);
		if (PTR_ERR_OR_ZERO(pin) == -EDQUOT) {
			O2G_COUNT(pin_limit);
			return ERR_PTR(-ENOMEM);
		}
		if (IS_ERR(pin))
			return pin;
		/* The range changed while we pinned it: those pages may be stale. */
		o2g_pin_release(ctx, pin);
	}
	return ERR_PTR(-EAGAIN);
}

/*
 * A cached range that covers [addr, addr + len), with a reference for the
 * caller, or NULL: a lookup only, nothing is pinned, so the receive softirq
 * may ask (a covering entry was checked with access_ok and pinned in the
 * owner's mm when it was made). Context lock held; any context.
 */
struct o2g_pin *o2g_pin_find_locked(struct o2g_context *ctx, unsigned long addr, u64 len)
{
	unsigned long start = addr & PAGE_MASK;
	struct o2g_pin *pin;

	if (!len || addr + len < addr || READ_ONCE(o2g_pin_cache_bypass))
		return NULL;
	pin = o2g_pin_lookup(&ctx->pins, start, (PAGE_ALIGN(addr + len) - start) >> PAGE_SHIFT);
	if (!pin)
		return NULL;
	pin->refs++;
	list_move_tail(&pin->link, &ctx->pins.lru);
	O2G_COUNT(cache_hits);
	return pin;
}

/* Context lock held; any context. */
void o2g_pin_put(struct o2g_context *ctx, struct o2g_pin *pin)
{
	struct o2g_pin_cache *cache = &ctx->pins;

	if (--pin->refs)
		return;
	if (pin->cached) {
		/* Receives beyond the bound have ended: the cache shrinks back to it. */
		if (cache->pinned_pages > o2g_pin_cache_pages) {
			LIST_HEAD(evicted);

			o2g_pin_make_room(cache, 0, &evicted);
			if (!list_empty(&evicted)) {
				list_splice_tail(&evicted, &cache->reap);
				schedule_work(&cache->reap_work);
			}
		}
		return;
	}
	cache->pinned_pages -= pin->npages;
	list_move_tail(&pin->link, &cache->reap);
	schedule_work(&cache->reap_work);
}

/* Context lock held: nothing may use the entry any more. */
static void o2g_pin_splice_all(struct o2g_pin_cache *cache, struct list_head *out)
{
	list_splice_init(&cache->lru, out);
	list_splice_init(&cache->retired, out);
	list_splice_init(&cache->reap, out);
	cache->pinned_pages = 0;
}

/* At release, after every receive is gone. Process context. */
void o2g_pin_cache_destroy(struct o2g_context *ctx)
{
	struct o2g_pin_cache *cache = &ctx->pins;
	LIST_HEAD(all);

	if (cache->registered)
		mmu_notifier_unregister(&cache->notifier, ctx->mm);
	cancel_work_sync(&cache->reap_work);
	spin_lock_bh(&ctx->lock);
	o2g_pin_splice_all(cache, &all);
	spin_unlock_bh(&ctx->lock);
	o2g_pin_release_list(ctx, &all);
}

/*
 * Maps the page that holds user address addr (inside the pinned range) and
 * returns the kernel address of addr; *chunk is what is left of that page.
 * Undo with o2g_pin_unmap. Any context (kmap_local).
 */
void *o2g_pin_map(struct o2g_pin *pin, unsigned long addr, size_t *chunk)
{
	unsigned long index = (addr - pin->start) >> PAGE_SHIFT;
	unsigned long offset = offset_in_page(addr);

	*chunk = PAGE_SIZE - offset;
	return kmap_local_page(pin->pages[index]) + offset;
}

void o2g_pin_unmap(struct o2g_pin *pin, unsigned long addr, void *mapped)
{
	flush_dcache_page(pin->pages[(addr - pin->start) >> PAGE_SHIFT]);
	kunmap_local(mapped);
}
