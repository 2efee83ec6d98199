/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * o2g: MPI receive matching inside the kernel's TCP receive path.
 *
 * What user space (the hashi provider, tests, hashi-info) sees of the
 * module: the ioctls of /dev/o2g, their argument structs, and the layout of
 * the completion ring mapped with mmap(). Every struct has a fixed size and
 * only naturally aligned __u32/__u64 fields, so 32- and 64-bit user space
 * agree; flags the module does not know are refused (EINVAL), and every
 * ioctl number carries its struct's size, so a caller built against
 * another layout gets ENOTTY.
 *
 * One open file of /dev/o2g is one context. A context is used either for
 * sockets (ATTACH, POST_RECV, CANCEL, the ring) or, for tests, to drive its
 * matching engine with descriptors only (MATCH); the first ioctl of either
 * kind fixes the mode, and the other kind then fails with EINVAL.
 */
#ifndef _UAPI_LINUX_O2G_H
#define _UAPI_LINUX_O2G_H

#include <linux/ioctl.h>
#include <linux/types.h>

/*
 * 2: O2G_ATTACH_HANDOFF, TAKE_FRAME, RESUME; 3: the posting ring;
 * 4: tagged rendezvous requests matched (O2G_CQE_RENDEZVOUS, the
 * completion's sender_op and sock), O2G_IOC_PEEK, O2G_RECV_CLAIM.
 * Struct sizes changed in 4: a caller built for another ABI gets ENOTTY.
 */
#define O2G_ABI_VERSION 5
#define O2G_DEVICE_PATH "/dev/o2g"

/* fi_addr_t's FI_ADDR_UNSPEC: a receive for any source. */
#define O2G_ANY_SOURCE (~(__u64)0)

/* ---- matching-engine operations on a test context (O2G_IOC_MATCH) ---- */

enum o2g_match_opcode {
	O2G_MATCH_POST = 1,	/* post(): cookie source tag ignore capacity [PERSISTENT] */
	O2G_MATCH_ARRIVE = 2,	/* arrive(): cookie source tag length data */
	O2G_MATCH_PEEK = 3,	/* peek(): source tag ignore [HAS_CLAIM claim_cookie] */
	O2G_MATCH_CLAIM = 4,	/* claim(claim_cookie) */
	O2G_MATCH_CANCEL = 5,	/* cancel(cookie) */
	O2G_MATCH_REMOVE = 6,	/* remove_posted(cookie) */
	O2G_MATCH_FAIL = 7,	/* fail_source(source): cookies into list */
	O2G_MATCH_RENUMBER = 8,	/* renumber_unexpected(list, source) */
	O2G_MATCH_DEPTH = 9,	/* posted_depth, unexpected_depth */
};

/* o2g_match_op.flags */
#define O2G_MATCH_PERSISTENT	(1u << 0) /* post: an FI_MULTI_RECV buffer */
#define O2G_MATCH_HAS_CLAIM	(1u << 1) /* peek: claim_cookie is set */
#define O2G_MATCH_UNTAGGED	(1u << 2) /* the untagged engine, not the tagged one */
#define O2G_MATCH_FLAGS_ALL	(O2G_MATCH_PERSISTENT | O2G_MATCH_HAS_CLAIM | O2G_MATCH_UNTAGGED)

/* o2g_match_op.result */
enum o2g_match_result {
	O2G_RESULT_QUEUED = 1,	/* post/arrive: nothing matched, queued */
	O2G_RESULT_MATCH = 2,	/* post/arrive: recv_cookie and msg matched */
	O2G_RESULT_MESSAGE = 3,	/* peek/claim: msg */
	O2G_RESULT_NONE = 4,	/* peek/claim: no message */
	O2G_RESULT_TRUE = 5,	/* cancel/remove: done */
	O2G_RESULT_FALSE = 6,	/* cancel/remove: not posted */
	O2G_RESULT_DONE = 7,	/* fail, renumber, depth */
};

/* A posted receive as the engine holds it. */
struct o2g_posted_desc {
	__u64 cookie;
	__u64 source;
	__u64 tag;
	__u64 ignore;
	__u64 capacity;
	__u32 persistent;
	__u32 reserved;
};

/* A message as the engine holds it (the header of an arrived frame). */
struct o2g_msg {
	__u64 cookie;
	__u64 source;
	__u64 tag;
	__u64 data;
	__u64 length;
};

struct o2g_match_op {
	/* in */
	__u32 opcode;		/* enum o2g_match_opcode */
	__u32 flags;		/* O2G_MATCH_* */
	__u64 cookie;
	__u64 source;
	__u64 tag;
	__u64 ignore;
	__u64 capacity;
	__u64 length;
	__u64 data;
	__u64 claim_cookie;
	__u64 list;		/* user pointer to __u64[list_len]: renumber in, fail out */
	__u32 list_len;
	/* out */
	__u32 result;		/* enum o2g_match_result */
	struct o2g_posted_desc recv; /* MATCH: the receive that matched */
	struct o2g_msg msg;	/* MATCH, MESSAGE */
	__u32 truncated;	/* MATCH: msg.length > capacity */
	__u32 list_count;	/* FAIL: cookies written to list */
	__u64 posted_depth;	/* every operation */
	__u64 unexpected_depth;	/* every operation; claimed messages included */
};

/* ---- sockets, receives and completions ---- */

/* Attach a connected TCP socket; its frames come from `source`. */
struct o2g_attach {
	__s32 fd;
	__u32 flags;		/* O2G_ATTACH_* */
	__u64 source;		/* the peer's fi_addr_t, O2G_ANY_SOURCE if unknown */
};

/*
 * o2g_attach.flags. Without HANDOFF a frame the module does not take ends
 * the socket (EPROTO). With it the module stops at that frame's header and
 * hands the stream to user space: one O2G_CQE_SOCKET | O2G_CQE_HANDOFF
 * event, O2G_IOC_TAKE_FRAME gives the 56 header bytes, user space reads
 * exactly the frame's payload from the socket itself, and O2G_IOC_RESUME
 * gives the stream back to the module. TAGGED_ONLY hands untagged messages
 * over too (a provider that keeps FI_MULTI_RECV buffers in user space).
 */
#define O2G_ATTACH_HANDOFF	(1u << 0)
#define O2G_ATTACH_TAGGED_ONLY	(1u << 1)
#define O2G_ATTACH_FLAGS_ALL	(O2G_ATTACH_HANDOFF | O2G_ATTACH_TAGGED_ONLY)

/* o2g_completion.flags */
#define O2G_CQE_TRUNCATED	(1u << 0) /* the message was longer than the buffer */
#define O2G_CQE_UNTAGGED	(1u << 1) /* from the untagged engine */
#define O2G_CQE_SOCKET		(1u << 2) /* a socket event: cookie is the fd given to
					   * O2G_IOC_ATTACH, source its source, status why */
#define O2G_CQE_REMOTE_DATA	(1u << 3) /* data carries remote CQ data */
#define O2G_CQE_HANDOFF		(1u << 4) /* with O2G_CQE_SOCKET, status 0: the socket
					   * stopped at a frame for user space
					   * (O2G_IOC_TAKE_FRAME) */
#define O2G_CQE_REFUSED		(1u << 5) /* an entry of the posting ring the module
					   * refused (status says why): never posted */
#define O2G_CQE_RENDEZVOUS	(1u << 6) /* a tagged rendezvous request (an rts frame)
					   * matched: nothing was written; `length` is
					   * the message's, sender_op and sock say whom
					   * user space asks for the data */

/*
 * One completion. status is 0 or a positive errno: EFAULT when the buffer
 * was unmapped before the message came; for O2G_CQE_SOCKET entries EPROTO
 * (a frame the module cannot take), ECONNRESET (the stream ended or broke).
 */
struct o2g_completion {
	__u64 cookie;		/* the receive's cookie */
	__u64 source;
	__u64 tag;
	__u64 data;
	__u64 length;		/* the message's full length */
	__u64 received;		/* bytes written into the buffer */
	__u32 status;
	__u32 flags;		/* O2G_CQE_* */
	__u64 sender_op;	/* O2G_CQE_RENDEZVOUS: the rts frame's sender op id */
	__s32 sock;		/* O2G_CQE_RENDEZVOUS: the socket it came on, as attached */
	__u32 reserved;
};

/* o2g_recv.flags (o2g_post.flags: UNTAGGED only) */
#define O2G_RECV_UNTAGGED	(1u << 0)
#define O2G_RECV_CLAIM		(1u << 1) /* the message O2G_IOC_PEEK reserved for `claim` */
#define O2G_RECV_FLAGS_ALL	(O2G_RECV_UNTAGGED | O2G_RECV_CLAIM)
#define O2G_POST_FLAGS_ALL	(O2G_RECV_UNTAGGED)

/*
 * Post a receive into [addr, addr + len). If an unexpected message matches,
 * it is copied at once and the completion comes back in `done` (result
 * O2G_RESULT_MATCH); otherwise the receive is queued (O2G_RESULT_QUEUED) and
 * its completion will appear in the ring. With O2G_RECV_CLAIM the receive
 * takes the message O2G_IOC_PEEK reserved for `claim` (source, tag and
 * ignore are not used): always O2G_RESULT_MATCH, or ENOENT when nothing is
 * reserved for that claim. len 0 with CLAIM drops the message (FI_DISCARD).
 */
struct o2g_recv {
	__u64 cookie;
	__u64 source;
	__u64 tag;
	__u64 ignore;
	__u64 addr;
	__u64 len;
	__u32 flags;		/* O2G_RECV_* */
	__u32 result;		/* out */
	__u64 claim;		/* O2G_RECV_CLAIM: the claim cookie given to O2G_IOC_PEEK */
	struct o2g_completion done; /* out, when result is O2G_RESULT_MATCH */
};

/* o2g_peek.flags: O2G_RECV_UNTAGGED picks the engine, and */
#define O2G_PEEK_CLAIM		(1u << 1) /* reserve the message found for `claim` */
#define O2G_PEEK_FLAGS_ALL	(O2G_PEEK_CLAIM | O2G_RECV_UNTAGGED)

/*
 * O2G_IOC_PEEK (MPI_Iprobe, MPI_Improbe): is a whole message that a receive
 * for (source, tag, ignore) would take held unexpected? result
 * O2G_RESULT_MESSAGE with the message in `msg` (cookie 0, length, tag,
 * data, source, flags REMOTE_DATA and RENDEZVOUS), or O2G_RESULT_NONE. With
 * O2G_PEEK_CLAIM the message leaves the queue, reserved for a later
 * O2G_RECV_CLAIM receive with the same `claim` (if that claim holds one
 * already, this is a plain peek: the matching engine's rule). Receives in the posting ring are taken before the peek.
 */
struct o2g_peek {
	__u64 source;
	__u64 tag;
	__u64 ignore;
	__u64 claim;
	__u32 flags;		/* O2G_PEEK_* */
	__u32 result;		/* out */
	struct o2g_completion msg; /* out, when result is O2G_RESULT_MESSAGE */
};

struct o2g_cancel {
	__u64 cookie;
	__u32 flags;		/* O2G_RECV_UNTAGGED picks the engine */
	__u32 result;		/* out: O2G_RESULT_TRUE or O2G_RESULT_FALSE */
};

/*
 * The ring: mmap(NULL, O2G_RING_BYTES(entries), PROT_READ | PROT_WRITE,
 * MAP_SHARED, fd, 0). The module writes entries and then advances `head`;
 * user space reads entries below head and then advances `tail`. Both only
 * grow (indices modulo 2^32, the slot is index & (entries - 1)). The module
 * never overwrites an entry user space has not consumed: a receive is
 * refused (EAGAIN) while posted receives plus unread completions would not
 * fit.
 */
struct o2g_ring_header {
	__u32 head;		/* written by the module */
	__u32 tail;		/* written by user space */
	__u32 entries;		/* a power of two */
	__u32 entry_size;	/* sizeof(struct o2g_completion) */
};
#define O2G_RING_HEADER_BYTES 4096u
#define O2G_RING_BYTES(entries) \
	(O2G_RING_HEADER_BYTES + (entries) * sizeof(struct o2g_completion))

/*
 * O2G_IOC_TAKE_FRAME: the header of the frame a socket handed over (EAGAIN
 * while the module still reads the socket); may be asked again until
 * O2G_IOC_RESUME. O2G_IOC_RESUME: user space has read that frame's payload;
 * the module reads on (EAGAIN while the handoff event is still unread in
 * the ring: its slot is the socket's until then).
 */
struct o2g_handoff {
	__s32 fd;		/* the socket, as given to O2G_IOC_ATTACH */
	__u32 flags;		/* none defined: must be 0 */
	__u8 header[56];	/* TAKE_FRAME: out */
};

/*
 * The posting ring: receives posted (and cancelled) without a system call.
 * mmap(NULL, O2G_POST_RING_BYTES(entries), PROT_READ | PROT_WRITE,
 * MAP_SHARED, fd, O2G_POST_RING_OFFSET), entries as o2g_info.ring_entries.
 * User space writes an entry at slot head & (entries - 1) and then
 * advances `head` (release); the module reads entries below head, each
 * checked as the ioctl's argument would be, and then advances `tail`.
 * The module takes entries, in order, when a frame header arrives on any
 * attached socket (the receive softirq: only buffers the pin-down cache
 * covers; the first that needs pinning leaves the rest to a worker in
 * process context), and at every ioctl of the context. An entry is never
 * lost: a receive the module cannot post completes in the completion ring
 * with O2G_CQE_REFUSED and the errno (EAGAIN when posted receives and
 * completions would not fit the completion ring, as O2G_IOC_POST_RECV's).
 *
 * A post that an unexpected message or a stopped socket is waiting for
 * must not wait for the next frame: after advancing head, user space reads
 * `attention` (with a full barrier between, pairing with the module's);
 * when it is not 0, O2G_IOC_FLUSH_POSTS takes the entries at once. The
 * module sets it when it holds unexpected messages or stops a socket, and
 * clears it in an ioctl that finds neither.
 */
enum o2g_post_op {
	O2G_POST_RECV = 1,	/* as O2G_IOC_POST_RECV; a match always completes in the ring */
	O2G_POST_CANCEL = 2,	/* as O2G_IOC_CANCEL: a receive still posted completes
				 * with ECANCELED; else nothing (its completion is there) */
};

struct o2g_post {
	__u64 cookie;
	__u64 source;
	__u64 tag;
	__u64 ignore;
	__u64 addr;
	__u64 len;
	__u32 op;		/* enum o2g_post_op */
	__u32 flags;		/* O2G_RECV_* */
	__u64 reserved;		/* 0 */
};

struct o2g_post_ring_header {
	__u32 head;		/* written by user space */
	__u32 tail;		/* written by the module */
	__u32 entries;		/* a power of two */
	__u32 entry_size;	/* sizeof(struct o2g_post) */
	__u32 attention;	/* written by the module: see above */
	__u32 reserved;
};
#define O2G_POST_RING_OFFSET 0x10000000ull
#define O2G_POST_RING_BYTES(entries) \
	(O2G_RING_HEADER_BYTES + (entries) * sizeof(struct o2g_post))

#define O2G_MEMLOCK_UNLIMITED (~0ull)

struct o2g_info {
	__u32 abi_version;	/* O2G_ABI_VERSION */
	__u32 ring_entries;
	__u64 max_posted;
	__u64 max_unexpected_bytes;
	__u64 pin_cache_pages;	/* pages a context may hold pinned: in use and cached */
	/*
	 * ABI 5: the pages the caller's context may pin, cached or in use,
	 * with what its process pins elsewhere (mm->pinned_vm): its
	 * RLIMIT_MEMLOCK when it opened the device; O2G_MEMLOCK_UNLIMITED
	 * with CAP_IPC_LOCK or no limit. A pin beyond it evicts unused cached
	 * pins first, then fails with ENOMEM (counter pin_limit).
	 */
	__u64 memlock_pages;
	__u64 reserved[2];
};

/* Counters of the whole module (all contexts) and of the caller's context. */
struct o2g_counters {
	__u64 contexts;		/* open contexts */
	__u64 pinned_pages;	/* pages held pinned now */
	__u64 sockets;		/* attached sockets now */
	__u64 cache_hits;
	__u64 cache_misses;
	__u64 cache_evictions;
	__u64 cache_invalidations; /* ranges dropped by the MMU notifier */
	__u64 frames;		/* frames parsed */
	__u64 delivered;	/* messages copied into posted buffers */
	__u64 delivered_bytes;
	__u64 unexpected;	/* messages buffered unexpected */
	__u64 backpressure;	/* times a socket stopped reading: unexpected space full */
	__u64 bad_header;	/* frames refused: a malformed header */
	__u64 stream_errors;	/* sockets that ended or broke while attached */
	__u64 mem_fail;		/* allocations that failed */
	__u64 pin_fail;		/* buffers that could not be pinned */
	__u64 unmapped_delivery; /* messages for a buffer unmapped meanwhile */
	__u64 refused;		/* ioctls refused for bad arguments */
	__u64 unsupported;	/* frames of a type the module leaves to user space */
	__u64 ring_overflow;	/* completions dropped: user space moved `tail` back */
	__u64 handoffs;		/* frames handed to user space (O2G_ATTACH_HANDOFF) */
	__u64 ring_posts;	/* posting ring entries taken (refused ones included) */
	__u64 ring_post_deferred; /* times the softirq left a ring entry to the worker */
	__u64 rendezvous;	/* tagged rendezvous requests matched to a receive */
	__u64 pin_limit;	/* pins refused (ENOMEM): RLIMIT_MEMLOCK reached */
};

struct o2g_stats {
	struct o2g_counters module;
	__u64 posted;		/* this context: receives posted now */
	__u64 unexpected;	/* this context: unexpected messages held now */
	__u64 unexpected_bytes;
	__u64 pinned_pages;
};

#define O2G_IOC_MAGIC 0xb2
#define O2G_IOC_INFO		_IOR(O2G_IOC_MAGIC, 1, struct o2g_info)
#define O2G_IOC_MATCH		_IOWR(O2G_IOC_MAGIC, 2, struct o2g_match_op)
#define O2G_IOC_ATTACH		_IOW(O2G_IOC_MAGIC, 3, struct o2g_attach)
#define O2G_IOC_DETACH		_IOW(O2G_IOC_MAGIC, 4, __s32)
#define O2G_IOC_POST_RECV	_IOWR(O2G_IOC_MAGIC, 5, struct o2g_recv)
#define O2G_IOC_CANCEL		_IOWR(O2G_IOC_MAGIC, 6, struct o2g_cancel)
#define O2G_IOC_SET_EVENTFD	_IOW(O2G_IOC_MAGIC, 7, __s32)
#define O2G_IOC_STATS		_IOR(O2G_IOC_MAGIC, 8, struct o2g_stats)
#define O2G_IOC_TAKE_FRAME	_IOWR(O2G_IOC_MAGIC, 9, struct o2g_handoff)
#define O2G_IOC_RESUME		_IOW(O2G_IOC_MAGIC, 10, struct o2g_handoff)
#define O2G_IOC_FLUSH_POSTS	_IO(O2G_IOC_MAGIC, 11)
#define O2G_IOC_PEEK		_IOWR(O2G_IOC_MAGIC, 12, struct o2g_peek)

#endif /* _UAPI_LINUX_O2G_H */
