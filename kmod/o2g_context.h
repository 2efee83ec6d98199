/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A context: one open file of /dev/o2g, owned by the process that opened
 * it (its mm). It holds two matching engines (tagged and untagged, as the
 * provider has), the receives posted into them, the unexpected messages
 * buffered for them, the attached sockets, the pin-down cache and the
 * completion ring.
 *
 * Locks, outermost first:
 *  - ioctl_mutex: one ioctl of the context at a time (pinning sleeps, so
 *    it cannot be the spinlock); also guards the socket list's changes.
 *  - a socket's lock (lock_sock, or bh_lock_sock in the receive softirq),
 *    held while the module reads that socket.
 *  - lock: spinlock, always taken with spin_lock_bh (the receive path runs
 *    both in softirq and in a socket's worker); guards the engines, receives, unexpected buffers and
 *    their accounting, the pin cache's lists and the ring's producer side.
 * Nothing sleeps under `lock`, and `lock` is never held while a socket lock
 * is taken. The posting ring's consumer side (o2g_post_ring.c) is guarded
 * by `lock` too; a process-context drainer that must pin outside it marks
 * the ring `slow` under it, and the softirq leaves the ring alone then.
 */
#ifndef O2G_CONTEXT_H
#define O2G_CONTEXT_H

#include <linux/mm_types.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>

#include "include/uapi/o2g.h"
#include "o2g_frame.h"
#include "o2g_match.h"

/* The workqueue of sockets' readers (o2g_main.c). */
extern struct workqueue_struct *o2g_wq;

/* Module parameters (o2g_main.c). */
extern unsigned int o2g_ring_entries;
extern unsigned int o2g_max_posted;
extern unsigned int o2g_max_sockets;
extern unsigned long o2g_max_unexpected_bytes;
extern unsigned int o2g_max_unexpected_msgs;
extern unsigned long o2g_pin_cache_pages;
extern bool o2g_pin_cache_bypass;

enum o2g_mode {
	O2G_MODE_NONE,		/* no ioctl that fixes the mode yet */
	O2G_MODE_MATCH_TEST,	/* descriptors only: O2G_IOC_MATCH */
	O2G_MODE_SOCKETS,	/* attached sockets, real receives, the ring */
};

enum o2g_engine { O2G_TAGGED = 0, O2G_UNTAGGED = 1 };

/* A range of user pages pinned once and kept (o2g_pin.c). */
struct o2g_pin {
	struct list_head link;	/* in o2g_pin_cache.lru, .retired or .reap */
	unsigned long start;	/* page aligned */
	unsigned long npages;
	struct page **pages;
	unsigned int refs;	/* receives using it; 0: cached, evictable */
	bool cached;		/* in the lru: handed out to new receives */
	bool unmapped;		/* munmap()ed or mremap()ed: deliveries into it fail */
};

/* Invalidations in progress at once whose ranges a context keeps (a process's threads, reclaim). */
#define O2G_PIN_INFLIGHT 8

struct o2g_pin_cache {
	struct list_head lru;	/* live entries, least recently used first */
	struct list_head retired; /* invalidated entries still used by a receive */
	struct list_head reap;	/* invalidated and unused: reap_work unpins them */
	unsigned long pinned_pages; /* this context's, cached and retired */
	/*
	 * Pages the opener's mm may hold pinned in all (mm->pinned_vm, which
	 * RDMA's and io_uring's pins share): its RLIMIT_MEMLOCK when it
	 * opened the context, ULONG_MAX with CAP_IPC_LOCK or no limit. Read
	 * at open because pinning also runs in a worker, whose own limit and
	 * capabilities are not the process's.
	 */
	unsigned long memlock_pages;
	/*
	 * Moves when an invalidation touches [pinning_start, pinning_end), the
	 * range o2g_pin_get is pinning (0, 0 when none; one at a time, under
	 * ioctl_mutex): the pages it got may be stale then. Invalidations
	 * elsewhere in the address space leave it alone.
	 */
	unsigned long invalidate_seq;
	unsigned long pinning_start, pinning_end;
	/*
	 * Invalidations begun and not ended: their ranges, so that o2g_pin_get
	 * waits only for one that touches its range; past O2G_PIN_INFLIGHT at
	 * once, `inflight_untracked` counts the rest and any range counts as
	 * touched.
	 */
	struct {
		unsigned long start, end;
	} inflight[O2G_PIN_INFLIGHT];
	unsigned int inflight_count;
	unsigned int inflight_untracked;
	struct mmu_notifier notifier;
	bool registered;
	struct work_struct reap_work; /* unpins retired entries nobody uses */
};

struct o2g_ring {
	void *memory;		/* vmalloc_user: header page, then the entries */
	struct o2g_ring_header *header;
	struct o2g_completion *entries;
	u32 mask;
	u32 head;		/* the module's copy; header->head follows it */
};

/* The posting ring (o2g_post_ring.c; layout in uapi/o2g.h). */
struct o2g_post_ring {
	void *memory;		/* vmalloc_user: header page, then the entries */
	struct o2g_post_ring_header *header;
	struct o2g_post *entries;
	u32 mask;
	u32 tail;		/* the module's copy; header->tail follows it */
	bool slow;		/* a process-context drainer pins for entry `tail` */
	struct work_struct work; /* drains in process context, in the owner's mm */
};

/* A receive posted on a sockets context. */
struct o2g_recv_slot {
	struct o2g_posted node;	/* node.owner points back here */
	enum o2g_engine engine;
	unsigned long addr;
	u64 len;
	struct o2g_pin *pin;	/* NULL for a zero-length buffer */
};

/*
 * Who asks for a tagged rendezvous message's data: the request's sender
 * op id and the socket it came on (as user space attached it).
 */
struct o2g_rndv {
	u64 sender_op;
	s32 sock;
};

/*
 * A message received before its receive was posted, with its payload in
 * whole pages (allocated one by one in the receive softirq: no high-order
 * allocation that would fail under fragmentation). A rendezvous request
 * has no payload: node.length is the message's length, `payload` 0.
 */
struct o2g_buffered {
	struct o2g_unexpected node; /* node.owner points back here */
	enum o2g_engine engine;
	u32 cqe_flags;		/* O2G_CQE_REMOTE_DATA */
	u64 payload;		/* bytes held here, counted in unexpected_bytes */
	bool rendezvous;	/* an rts frame: `rndv` says whom to ask */
	struct o2g_rndv rndv;
	unsigned int npages;
	struct page *pages[];
};

struct o2g_context {
	struct mutex ioctl_mutex;
	spinlock_t lock;
	enum o2g_mode mode;
	struct mm_struct *mm;	/* the opener's; mmgrab()bed */
	/*
	 * The opener's memory cgroup (a reference; NULL without memcg): the
	 * unexpected buffers, which the receive path allocates in softirq on
	 * this context's behalf, are charged to it (o2g_buffer.c).
	 */
	struct mem_cgroup *memcg;

	struct o2g_matcher engines[2];
	u64 unexpected_bytes;	/* payload held in o2g_buffered */
	u32 unexpected_msgs;

	struct list_head sockets; /* o2g_socket.link */
	unsigned int socket_count;

	struct o2g_pin_cache pins;
	struct o2g_ring ring;
	struct o2g_post_ring posts;
	wait_queue_head_t waiters; /* poll() */
	struct eventfd_ctx *eventfd; /* set once, under ioctl_mutex */
};

/* o2g_ring.c */
int o2g_ring_init(struct o2g_ring *ring);
void o2g_ring_free(struct o2g_ring *ring);
u32 o2g_ring_unread(const struct o2g_ring *ring);
void o2g_ring_push(struct o2g_context *ctx, const struct o2g_completion *cqe);
int o2g_ring_mmap(struct o2g_ring *ring, struct vm_area_struct *vma);
int o2g_mmap_shared_ring(void *memory, size_t bytes, struct vm_area_struct *vma);

/* o2g_post_ring.c */
int o2g_post_ring_init(struct o2g_context *ctx);
void o2g_post_ring_free(struct o2g_context *ctx);
int o2g_post_ring_mmap(struct o2g_post_ring *posts, struct vm_area_struct *vma);
bool o2g_post_drain(struct o2g_context *ctx);
bool o2g_post_drain_locked(struct o2g_context *ctx);
bool o2g_post_attention_locked(struct o2g_context *ctx);
void o2g_post_attention_settle(struct o2g_context *ctx);

/* o2g_pin.c */
void o2g_pin_cache_init(struct o2g_pin_cache *cache);
struct o2g_pin *o2g_pin_get(struct o2g_context *ctx, unsigned long addr, u64 len);
struct o2g_pin *o2g_pin_find_locked(struct o2g_context *ctx, unsigned long addr, u64 len);
void o2g_pin_put(struct o2g_context *ctx, struct o2g_pin *pin);
void o2g_pin_cache_destroy(struct o2g_context *ctx);
/* Maps the page under addr; *chunk: bytes from addr to the page's end. */
void *o2g_pin_map(struct o2g_pin *pin, unsigned long addr, size_t *chunk);
void o2g_pin_unmap(struct o2g_pin *pin, unsigned long addr, void *mapped);

/* o2g_match_ioctl.c */
long o2g_match_ioctl(struct o2g_context *ctx, void __user *arg);
void o2g_match_test_free(struct o2g_context *ctx);

/* o2g_recv.c */
long o2g_recv_post(struct o2g_context *ctx, void __user *arg);
long o2g_recv_cancel(struct o2g_context *ctx, void __user *arg);
long o2g_recv_peek(struct o2g_context *ctx, void __user *arg);
void o2g_recv_free_all(struct o2g_context *ctx);
void o2g_recv_deliver_buffered(struct o2g_context *ctx, struct o2g_recv_slot *slot,
			       struct o2g_buffered *msg);
void o2g_recv_complete(struct o2g_context *ctx, struct o2g_recv_slot *slot,
		       const struct o2g_unexpected *msg, u32 cqe_flags, u64 received,
		       u32 status, const struct o2g_rndv *rndv);
void o2g_recv_free_slot(struct o2g_context *ctx, struct o2g_recv_slot *slot);
int o2g_recv_check_range(u64 addr, u64 len, u32 flags);
int o2g_recv_enqueue_locked(struct o2g_context *ctx, struct o2g_recv_slot *slot);
bool o2g_recv_cancel_locked(struct o2g_context *ctx, u64 cookie, u32 flags, bool complete);
void o2g_recv_refuse(struct o2g_context *ctx, u64 cookie, u32 status);
void o2g_buffered_free(struct o2g_context *ctx, struct o2g_buffered *msg);

/* o2g_buffer.c */
struct o2g_buffered *o2g_buffered_alloc(struct o2g_context *ctx, u64 length, gfp_t gfp);
void o2g_buffered_release(struct o2g_buffered *msg);
void o2g_buffered_fill(struct o2g_buffered *msg, u64 at, const struct sk_buff *skb, int offset,
		       size_t n);
u64 o2g_buffered_to_pin(const struct o2g_buffered *msg, struct o2g_pin *pin, unsigned long addr,
			u64 n);
int o2g_buffered_to_user(const struct o2g_buffered *msg, void __user *dst, u64 n);

/* o2g_sock.c */
long o2g_sock_attach(struct o2g_context *ctx, void __user *arg);
long o2g_sock_detach(struct o2g_context *ctx, int fd);
long o2g_sock_handoff(struct o2g_context *ctx, unsigned int cmd, void __user *arg);
void o2g_sock_detach_all(struct o2g_context *ctx);
void o2g_sock_kick_all(struct o2g_context *ctx);
bool o2g_sock_any_waiting_locked(struct o2g_context *ctx);

/*
 * The part of a receive buffer the module may write, and so pins: an
 * eager payload is at most O2G_FRAME_MAX_EAGER bytes, and a larger message
 * comes by rendezvous, whose data user space receives itself. A 16 MiB
 * receive pins 256 pages, not 4096.
 */
static inline u64 o2g_recv_pinned_len(u64 len)
{
	return min_t(u64, len, O2G_FRAME_MAX_EAGER);
}

static inline u32 o2g_cqe_engine_flag(enum o2g_engine engine)
{
	return engine == O2G_UNTAGGED ? O2G_CQE_UNTAGGED : 0;
}

#endif /* O2G_CONTEXT_H */
