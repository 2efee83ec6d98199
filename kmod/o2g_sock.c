// SPDX-License-Identifier: GPL-2.0-only
/*
 * Attached sockets: the module takes over a connected TCP socket's
 * sk_data_ready and sk_state_change (as net/kcm and net/strparser do), cuts the byte stream
 * into frames, matches each eager message as its header arrives and copies
 * the payload from the skbs straight into the posted receive's pinned pages,
 * or, when nothing is posted, into a bounded unexpected buffer. A tagged
 * rendezvous request (rts, no payload) is matched the same way, so that
 * tagged messages of every size keep MPI's order in one engine; its
 * receive completes with O2G_CQE_RENDEZVOUS and user space fetches the
 * data (the data frames are handed off). When that
 * space is full the socket is simply not read: the bytes stay in TCP's
 * receive queue, the window closes and the sender is pushed back. Posting a
 * receive kicks the stopped sockets.
 *
 * The parser's contract: o2g_sock_read() consumes what it can and leaves
 * the socket either between frames, inside one, or stopped at a header it
 * cannot place yet (O2G_RX_DISPATCH); it never reads past that header.
 * With O2G_ATTACH_HANDOFF a frame it does not take is handed to user space
 * (O2G_RX_USER): the header stays here for O2G_IOC_TAKE_FRAME, the payload
 * in the socket for user space's own recv(), until O2G_IOC_RESUME.
 *
 * Where it runs: the receive softirq with the lower socket lock held
 * (bh_lock_sock) when the socket is not owned by a user; otherwise the
 * socket's worker, under lock_sock. Either way one reader at a time per
 * socket; the context lock is taken inside for matching and completing.
 */
#include <linux/file.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <net/inet_connection_sock.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "o2g_context.h"
#include "o2g_frame.h"
#include "o2g_stats.h"

enum o2g_rx_state {
	O2G_RX_HEADER,		/* collecting a header */
	O2G_RX_DISPATCH,	/* a whole header waiting for a receive or unexpected space */
	O2G_RX_TO_RECV,		/* payload into a posted receive */
	O2G_RX_TO_BUFFER,	/* payload into an unexpected buffer */
	O2G_RX_STOPPED,		/* a bad frame or the end: nothing more is read */
	O2G_RX_USER,		/* a frame handed to user space: nothing read until RESUME */
};

struct o2g_socket {
	struct list_head link;	/* o2g_context.sockets; ioctl_mutex */
	struct o2g_context *ctx;
	struct sock *sk;
	struct file *file;	/* the socket's file, held while attached */
	int fd;			/* as given to O2G_IOC_ATTACH: the events' cookie */
	u64 source;
	u32 flags;		/* O2G_ATTACH_* */
	u32 handoff_index;	/* O2G_RX_USER: the ring index of its event */
	void (*saved_data_ready)(struct sock *sk);
	void (*saved_state_change)(struct sock *sk); /* a reset calls only this */
	struct delayed_work rx_work;	/* reads when the softirq may not */

	/*
	 * O2G_RX_DISPATCH is entered under the context lock, in the same
	 * section that found no receive and no space, and kicks look for it
	 * under that lock: a receive posted or space freed meanwhile always
	 * finds the socket stopped, or the socket finds the receive or space.
	 */

	/* The parser: one reader at a time (see the top of this file). */
	enum o2g_rx_state state;
	u8 header[O2G_FRAME_HEADER_SIZE];
	u32 header_have;
	struct o2g_frame frame;
	u64 payload_done;
	struct o2g_recv_slot *target;	/* O2G_RX_TO_RECV */
	struct o2g_buffered *buffer;	/* O2G_RX_TO_BUFFER */
	gfp_t gfp;		/* O2G_GFP_SOFTIRQ or O2G_GFP_WORKER: for unexpected buffers */
	bool ended;		/* the last event was pushed */
};

#define O2G_RETRY_DELAY (HZ / 100)	/* after a failed allocation */
/*
 * Unexpected buffers are charged to the context's memory cgroup
 * (o2g_buffer.c): in the softirq without the atomic reserves (GFP_ATOMIC
 * would be charged past the cgroup's limit), in the worker with reclaim
 * but no OOM kill (the cgroup's limit stops the socket, as
 * max_unexpected_bytes does, until a receive is posted or memory frees).
 */
#define O2G_GFP_SOFTIRQ GFP_NOWAIT
#define O2G_GFP_WORKER (GFP_KERNEL | __GFP_NORETRY)

static void o2g_sock_schedule(struct o2g_socket *osk, unsigned long delay)
{
	queue_delayed_work(o2g_wq, &osk->rx_work, delay);
}

/* Only tagged rts frames reach matching (o2g_frame_decode). */
static bool o2g_frame_is_rts(const struct o2g_frame *f)
{
	return f->type == O2G_FRAME_RTS;
}

static enum o2g_engine o2g_frame_engine(const struct o2g_frame *f)
{
	return f->type == O2G_FRAME_TAGGED || o2g_frame_is_rts(f) ? O2G_TAGGED : O2G_UNTAGGED;
}

/* The message as the engine and the completions see it. */
static void o2g_frame_msg(const struct o2g_socket *osk, struct o2g_unexpected *msg)
{
	memset(msg, 0, sizeof(*msg));
	msg->source = osk->source;
	/* Untagged messages match on source only, as in the user backend. */
	msg->tag = o2g_frame_engine(&osk->frame) == O2G_TAGGED ? osk->frame.tag : 0;
	msg->data = osk->frame.data;
	/* A rendezvous request carries no payload, only the message's length. */
	msg->length = o2g_frame_is_rts(&osk->frame) ? osk->frame.a : osk->frame.length;
}

/* Whom user space asks for a rendezvous message's data. */
static struct o2g_rndv o2g_frame_rndv(const struct o2g_socket *osk)
{
	struct o2g_rndv r = { .sender_op = osk->frame.b, .sock = osk->fd };

	return r;
}

static u32 o2g_frame_cqe_flags(const struct o2g_frame *f)
{
	return f->flags & O2G_FRAME_FLAG_REMOTE_DATA ? O2G_CQE_REMOTE_DATA : 0;
}

/* The socket's one last event (a bad frame, the end). Context lock held. */
static void o2g_sock_event(struct o2g_socket *osk, u32 status)
{
	struct o2g_completion cqe = {
		.source = osk->source,
		.status = status,
		.flags = O2G_CQE_SOCKET,
	};

	if (osk->ended)
		return;
	osk->ended = true;
	O2G_COUNT(stream_errors);
	/* What user space named the socket with (never a kernel address). */
	cqe.cookie = (u32)osk->fd;
	o2g_ring_push(osk->ctx, &cqe);
}

/* The reader (socket lock held) stops for good; takes the context lock. */
static void o2g_sock_stop(struct o2g_socket *osk, u32 status)
{
	spin_lock_bh(&osk->ctx->lock);
	o2g_sock_event(osk, status);
	spin_unlock_bh(&osk->ctx->lock);
	osk->state = O2G_RX_STOPPED;
}

/* The reader, or attach before the socket is ours. */
static void o2g_sock_next_frame(struct o2g_socket *osk)
{
	osk->state = O2G_RX_HEADER;
	osk->header_have = 0;
	osk->payload_done = 0;
	osk->target = NULL;
	osk->buffer = NULL;
}

/*
 * The payload is in: complete the receive, or queue (or match) the buffer.
 * The reader; takes the context lock.
 */
static void o2g_sock_frame_done(struct o2g_socket *osk)
{
	struct o2g_context *ctx = osk->ctx;
	struct o2g_unexpected msg;
	struct o2g_posted *p;
	struct o2g_matcher *m;

	spin_lock_bh(&ctx->lock);
	if (osk->state == O2G_RX_TO_RECV) {
		struct o2g_rndv rndv = o2g_frame_rndv(osk);

		o2g_frame_msg(osk, &msg);
		o2g_recv_complete(ctx, osk->target, &msg, o2g_frame_cqe_flags(&osk->frame),
				  min(osk->frame.length, osk->target->len), 0,
				  o2g_frame_is_rts(&osk->frame) ? &rndv : NULL);
	} else {
		/*
		 * The message arrives now, whole: a receive posted while its
		 * payload came in takes it, otherwise it becomes unexpected.
		 */
		m = &ctx->engines[osk->buffer->engine];
		o2g_post_drain_locked(ctx);
		p = o2g_match_find_posted(m, osk->buffer->node.source, osk->buffer->node.tag);
		if (p) {
			o2g_match_unlink_posted(m, p);
			o2g_recv_deliver_buffered(ctx, p->owner, osk->buffer);
		} else {
			o2g_match_queue_unexpected(m, &osk->buffer->node);
			O2G_COUNT(unexpected);
			/* A post written meanwhile takes it from the unexpected queue. */
			o2g_post_attention_locked(ctx);
		}
	}
	spin_unlock_bh(&ctx->lock);
	o2g_sock_next_frame(osk);
}

/*
 * A whole header: find where its payload goes. False when it must wait
 * (no receive and no unexpected space): the socket stops being read.
 * The reader; takes the context lock.
 */
static bool o2g_sock_dispatch(struct o2g_socket *osk)
{
	struct o2g_context *ctx = osk->ctx;
	enum o2g_engine engine = o2g_frame_engine(&osk->frame);
	u64 payload = osk->frame.length;	/* 0 for a rendezvous request */
	struct o2g_unexpected msg;
	struct o2g_buffered *buffer;
	struct o2g_posted *p;
	bool room;

	o2g_frame_msg(osk, &msg);
	spin_lock_bh(&ctx->lock);
	/* Receives written to the posting ring before this header count as posted. */
	o2g_post_drain_locked(ctx);
	p = o2g_match_find_posted(&ctx->engines[engine], msg.source, msg.tag);
	room = ctx->unexpected_msgs < o2g_max_unexpected_msgs &&
	       ctx->unexpected_bytes + payload <= o2g_max_unexpected_bytes;
	/* About to stop: a receive written from now on must not wait for another frame. */
	if (!p && !room && o2g_post_attention_locked(ctx))
		p = o2g_match_find_posted(&ctx->engines[engine], msg.source, msg.tag);
	if (p) {
		o2g_match_unlink_posted(&ctx->engines[engine], p);
		osk->target = p->owner;
		osk->state = O2G_RX_TO_RECV;
		spin_unlock_bh(&ctx->lock);
		goto started;
	}
	if (!room) {
		if (osk->state != O2G_RX_DISPATCH)
			O2G_COUNT(backpressure);
		osk->state = O2G_RX_DISPATCH;	/* under the lock: see o2g_socket */
		spin_unlock_bh(&ctx->lock);
		return false;
	}
	/* Reserved now, so that two sockets cannot both take the last space. */
	ctx->unexpected_msgs++;
	ctx->unexpected_bytes += payload;
	spin_unlock_bh(&ctx->lock);

	buffer = o2g_buffered_alloc(ctx, payload, osk->gfp);
	if (!buffer) {
		O2G_COUNT(mem_fail);
		spin_lock_bh(&ctx->lock);
		ctx->unexpected_msgs--;
		ctx->unexpected_bytes -= payload;
		osk->state = O2G_RX_DISPATCH;
		spin_unlock_bh(&ctx->lock);
		/* The worker tries again a little later, where it may sleep. */
		o2g_sock_schedule(osk, O2G_RETRY_DELAY);
		return false;
	}
	buffer->engine = engine;
	buffer->cqe_flags = o2g_frame_cqe_flags(&osk->frame);
	buffer->node.source = msg.source;
	buffer->node.tag = msg.tag;
	buffer->node.data = msg.data;
	buffer->node.length = msg.length;
	buffer->payload = payload;
	buffer->rendezvous = o2g_frame_is_rts(&osk->frame);
	buffer->rndv = o2g_frame_rndv(osk);
	osk->buffer = buffer;
	osk->state = O2G_RX_TO_BUFFER;
started:
	osk->payload_done = 0;
	if (!osk->frame.length)
		o2g_sock_frame_done(osk);
	return true;
}

/*
 * A frame for user space: the reader stops at it and tells user space, once
 * (the event takes the slot of the socket's message in flight: see
 * o2g_sock_resume). The reader; takes the context lock.
 */
static void o2g_sock_hand_off(struct o2g_socket *osk)
{
	struct o2g_completion cqe = {
		.source = osk->source,
		.flags = O2G_CQE_SOCKET | O2G_CQE_HANDOFF,
		.cookie = (u32)osk->fd,
	};

	O2G_COUNT(handoffs);
	spin_lock_bh(&osk->ctx->lock);
	osk->handoff_index = osk->ctx->ring.head;
	osk->state = O2G_RX_USER;
	o2g_ring_push(osk->ctx, &cqe);
	spin_unlock_bh(&osk->ctx->lock);
}

/* The reader, with 56 header bytes in osk->header. */
static void o2g_sock_header_done(struct o2g_socket *osk)
{
	O2G_COUNT(frames);
	switch (o2g_frame_decode(osk->header, &osk->frame)) {
	case O2G_FRAME_EAGER:
		if (osk->frame.type != O2G_FRAME_TAGGED && (osk->flags & O2G_ATTACH_TAGGED_ONLY)) {
			o2g_sock_hand_off(osk);
			return;
		}
		o2g_sock_dispatch(osk);
		return;
	case O2G_FRAME_RENDEZVOUS:
		/* Matched here like an eager message; the data stays user space's. */
		o2g_sock_dispatch(osk);
		return;
	case O2G_FRAME_UNSUPPORTED:
		if (osk->flags & O2G_ATTACH_HANDOFF) {
			o2g_sock_hand_off(osk);
			return;
		}
		O2G_COUNT(unsupported);
		break;
	case O2G_FRAME_BAD:
		O2G_COUNT(bad_header);
		break;
	}
	o2g_sock_stop(osk, EPROTO);
}

/*
 * Payload bytes into the receive's pinned pages; beyond its length they are
 * dropped. The reader; no lock needed: the receive left the queue, it is
 * this socket's alone until completed.
 */
static void o2g_sock_copy_to_recv(struct o2g_socket *osk, const struct sk_buff *skb, int offset,
				  size_t n)
{
	struct o2g_recv_slot *slot = osk->target;
	u64 at = osk->payload_done;

	/* Only the pinned head of the buffer: eager payloads never reach past it. */
	while (n && at < o2g_recv_pinned_len(slot->len) && !slot->pin->unmapped) {
		size_t room;
		void *dst = o2g_pin_map(slot->pin, slot->addr + at, &room);
		size_t chunk = min_t(u64, min_t(size_t, n, room), slot->len - at);

		WARN_ON_ONCE(skb_copy_bits(skb, offset, dst, chunk));
		o2g_pin_unmap(slot->pin, slot->addr + at, dst);
		at += chunk;
		offset += chunk;
		n -= chunk;
	}
}

/* tcp_read_sock's actor: consumes up to len bytes of skb from offset. The reader. */
static int o2g_sock_recv_actor(read_descriptor_t *desc, struct sk_buff *skb, unsigned int offset,
			       size_t len)
{
	struct o2g_socket *osk = desc->arg.data;
	size_t used = 0, n;

	while (used < len) {
		switch (osk->state) {
		case O2G_RX_HEADER:
			n = min_t(size_t, len - used, O2G_FRAME_HEADER_SIZE - osk->header_have);
			WARN_ON_ONCE(skb_copy_bits(skb, offset + used,
						   osk->header + osk->header_have, n));
			osk->header_have += n;
			used += n;
			if (osk->header_have == O2G_FRAME_HEADER_SIZE)
				o2g_sock_header_done(osk);
			break;
		case O2G_RX_TO_RECV:
		case O2G_RX_TO_BUFFER:
			n = min_t(u64, len - used, osk->frame.length - osk->payload_done);
			if (osk->state == O2G_RX_TO_RECV)
				o2g_sock_copy_to_recv(osk, skb, offset + used, n);
			else
				o2g_buffered_fill(osk->buffer, osk->payload_done, skb,
						  offset + used, n);
			osk->payload_done += n;
			used += n;
			if (osk->payload_done == osk->frame.length)
				o2g_sock_frame_done(osk);
			break;
		case O2G_RX_DISPATCH:
		case O2G_RX_STOPPED:
		case O2G_RX_USER:
			desc->count = 0;	/* leave the rest in the socket */
			return used;
		}
	}
	return used;
}

/* Reads what the socket has, as far as the parser may. One reader at a time. */
static void o2g_sock_read(struct o2g_socket *osk, gfp_t gfp)
{
	read_descriptor_t desc = { .arg.data = osk, .count = 1 };
	struct sock *sk = osk->sk;

	osk->gfp = gfp;
	/* A handed-off stream is user space's: it sees the end itself. */
	if (osk->state == O2G_RX_STOPPED || osk->state == O2G_RX_USER)
		return;
	if (osk->state == O2G_RX_DISPATCH && !o2g_sock_dispatch(osk))
		return;
	tcp_read_sock(sk, &desc, o2g_sock_recv_actor);
	/*
	 * The peer is done (FIN) or gone (a reset sets RCV_SHUTDOWN too), and
	 * every byte that came was taken: the stream ended.
	 */
	if (osk->state != O2G_RX_STOPPED && (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN) &&
	    skb_queue_empty_lockless(&sk->sk_receive_queue))
		o2g_sock_stop(osk, ECONNRESET);
}

/* sk_data_ready. Lower socket lock held (bh_lock_sock), or the socket is owned. */
static void o2g_sock_data_ready(struct sock *sk)
{
	struct o2g_socket *osk;

	read_lock_bh(&sk->sk_callback_lock);
	osk = sk->sk_user_data;
	if (likely(osk)) {
		/* User space reads a handed-off frame's payload: wake it. */
		if (READ_ONCE(osk->state) == O2G_RX_USER)
			osk->saved_data_ready(sk);
		/*
		 * A user thread owns the socket (or this runs from its backlog
		 * at release_sock): the worker reads once it can lock it.
		 */
		if (sock_owned_by_user_nocheck(sk))
			o2g_sock_schedule(osk, 0);
		else
			o2g_sock_read(osk, O2G_GFP_SOFTIRQ);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/*
 * sk_state_change: a reset (or the peer's FIN) changes the state without a
 * data-ready call, so the stream's end is looked for here too. Same
 * context as o2g_sock_data_ready; the socket's own waiters are woken first.
 */
static void o2g_sock_state_change(struct sock *sk)
{
	struct o2g_socket *osk;

	read_lock_bh(&sk->sk_callback_lock);
	osk = sk->sk_user_data;
	if (likely(osk)) {
		osk->saved_state_change(sk);
		if (sock_owned_by_user_nocheck(sk))
			o2g_sock_schedule(osk, 0);
		else
			o2g_sock_read(osk, O2G_GFP_SOFTIRQ);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/* The worker: process context, takes the socket lock. */
static void o2g_sock_rx_work(struct work_struct *work)
{
	struct o2g_socket *osk = container_of(to_delayed_work(work), struct o2g_socket, rx_work);

	lock_sock(osk->sk);
	o2g_sock_read(osk, O2G_GFP_WORKER);
	release_sock(osk->sk);
}

/* Is this a connected TCP socket the module may take over? Socket locked. */
static int o2g_sock_check(struct sock *sk)
{
	if ((sk->sk_family != AF_INET && sk->sk_family != AF_INET6) ||
	    sk->sk_type != SOCK_STREAM || sk->sk_protocol != IPPROTO_TCP)
		return -EPROTONOSUPPORT;
	if (sk->sk_state != TCP_ESTABLISHED)
		return -ENOTCONN;
	/* kTLS and other upper layers own the receive path already. */
	if (inet_csk(sk)->icsk_ulp_ops)
		return -EBUSY;
	return 0;
}

/* O2G_IOC_ATTACH. ioctl_mutex held; takes the socket lock, then its callback lock. */
long o2g_sock_attach(struct o2g_context *ctx, void __user *arg)
{
	struct o2g_socket *osk;
	struct o2g_attach a;
	struct socket *sock;
	struct file *file;
	struct sock *sk;
	int err;

	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (a.flags & ~O2G_ATTACH_FLAGS_ALL)
		return -EINVAL;
	if (ctx->socket_count >= o2g_max_sockets)
		return -ENOSPC;
	file = fget(a.fd);
	if (!file)
		return -EBADF;
	sock = sock_from_file(file);
	if (!sock || !sock->sk) {
		fput(file);
		return -ENOTSOCK;
	}
	sk = sock->sk;
	osk = kzalloc(sizeof(*osk), GFP_KERNEL);
	if (!osk) {
		O2G_COUNT(mem_fail);
		fput(file);
		return -ENOMEM;
	}
	osk->ctx = ctx;
	osk->sk = sk;
	osk->file = file;
	osk->fd = a.fd;
	osk->source = a.source;
	osk->flags = a.flags;
	INIT_DELAYED_WORK(&osk->rx_work, o2g_sock_rx_work);
	o2g_sock_next_frame(osk);

	spin_lock_bh(&ctx->lock);
	/* Its last event and a frame in flight must fit in the ring too. */
	if (ctx->engines[0].posted_count + ctx->engines[1].posted_count +
	    o2g_ring_unread(&ctx->ring) + 2 * (ctx->socket_count + 1) > o2g_ring_entries)
		err = -EAGAIN;
	else
		err = 0;
	spin_unlock_bh(&ctx->lock);
	if (err)
		goto fail;

	lock_sock(sk);
	err = o2g_sock_check(sk);
	if (!err) {
		write_lock_bh(&sk->sk_callback_lock);
		if (sk->sk_user_data) {
			err = -EBUSY;	/* attached already, or another layer's */
		} else {
			osk->saved_data_ready = sk->sk_data_ready;
			osk->saved_state_change = sk->sk_state_change;
			sk->sk_user_data = osk;
			sk->sk_data_ready = o2g_sock_data_ready;
			sk->sk_state_change = o2g_sock_state_change;
		}
		write_unlock_bh(&sk->sk_callback_lock);
	}
	release_sock(sk);
	if (err)
		goto fail;

	spin_lock_bh(&ctx->lock);
	ctx->socket_count++;
	spin_unlock_bh(&ctx->lock);
	list_add_tail(&osk->link, &ctx->sockets);
	O2G_COUNT(sockets);
	/* Bytes that came before the callback was ours. */
	o2g_sock_schedule(osk, 0);
	return 0;

fail:
	kfree(osk);
	fput(file);
	return err;
}

/* Gives the socket back to the kernel's own callbacks. ioctl_mutex held or release. */
static void o2g_sock_release(struct o2g_context *ctx, struct o2g_socket *osk)
{
	struct sock *sk = osk->sk;
	struct o2g_unexpected msg;

	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_data_ready = osk->saved_data_ready;
	sk->sk_state_change = osk->saved_state_change;
	sk->sk_user_data = NULL;
	write_unlock_bh(&sk->sk_callback_lock);
	/* No softirq reader can start now; wait for the worker. */
	cancel_delayed_work_sync(&osk->rx_work);
	/* Bytes the module left in the socket are user space's again: wake its readers. */
	if (!skb_queue_empty_lockless(&sk->sk_receive_queue))
		osk->saved_data_ready(sk);

	spin_lock_bh(&ctx->lock);
	if (osk->state == O2G_RX_TO_RECV) {
		/* Cut off mid-message: the receive ends with an error. */
		o2g_frame_msg(osk, &msg);
		o2g_recv_complete(ctx, osk->target, &msg, 0, 0, ECONNRESET, NULL);
	} else if (osk->state == O2G_RX_TO_BUFFER) {
		o2g_buffered_free(ctx, osk->buffer);
	}
	ctx->socket_count--;
	spin_unlock_bh(&ctx->lock);

	list_del(&osk->link);
	fput(osk->file);
	kfree(osk);
	O2G_SUB(sockets, 1);
}

/* The context's socket for a descriptor, or NULL. ioctl_mutex held. */
static struct o2g_socket *o2g_sock_find(struct o2g_context *ctx, struct file *file)
{
	struct o2g_socket *osk;

	list_for_each_entry(osk, &ctx->sockets, link)
		if (osk->file == file)
			return osk;
	return NULL;
}

/* O2G_IOC_DETACH. ioctl_mutex held. */
long o2g_sock_detach(struct o2g_context *ctx, int fd)
{
	struct o2g_socket *osk;
	struct file *file = fget(fd);

	if (!file)
		return -EBADF;
	osk = o2g_sock_find(ctx, file);
	if (osk)
		o2g_sock_release(ctx, osk);
	fput(file);
	return osk ? 0 : -ENOENT;
}

/*
 * O2G_IOC_TAKE_FRAME and O2G_IOC_RESUME. ioctl_mutex held; takes the
 * socket lock (the reader's), then the context lock.
 */
long o2g_sock_handoff(struct o2g_context *ctx, unsigned int cmd, void __user *arg)
{
	struct o2g_socket *osk;
	struct o2g_handoff h;
	struct file *file;
	long err = 0;
	u32 tail;

	if (copy_from_user(&h, arg, sizeof(h)))
		return -EFAULT;
	if (h.flags)
		return -EINVAL;
	file = fget(h.fd);
	if (!file)
		return -EBADF;
	osk = o2g_sock_find(ctx, file);
	fput(file);
	if (!osk)
		return -ENOENT;

	lock_sock(osk->sk);
	if (osk->state != O2G_RX_USER) {
		err = -EAGAIN;	/* the module's: nothing handed over */
	} else if (cmd == O2G_IOC_TAKE_FRAME) {
		memcpy(h.header, osk->header, sizeof(h.header));
	} else {
		/*
		 * The handoff event holds the slot of the socket's message in
		 * flight (o2g_recv.c's bound) until user space consumed it.
		 */
		tail = READ_ONCE(ctx->ring.header->tail);
		if ((s32)(tail - osk->handoff_index) <= 0) {
			err = -EAGAIN;
		} else {
			o2g_sock_next_frame(osk);
			o2g_sock_schedule(osk, 0);	/* bytes that came meanwhile */
		}
	}
	release_sock(osk->sk);
	if (!err && cmd == O2G_IOC_TAKE_FRAME && copy_to_user(arg, &h, sizeof(h)))
		err = -EFAULT;
	return err;
}

/* At release: no ioctl can run any more. */
void o2g_sock_detach_all(struct o2g_context *ctx)
{
	while (!list_empty(&ctx->sockets))
		o2g_sock_release(ctx, list_first_entry(&ctx->sockets, struct o2g_socket, link));
}

/* Is a socket stopped at a header, waiting for a receive or space? ioctl_mutex (the list) and context lock (the states) held. */
bool o2g_sock_any_waiting_locked(struct o2g_context *ctx)
{
	struct o2g_socket *osk;

	list_for_each_entry(osk, &ctx->sockets, link)
		if (osk->state == O2G_RX_DISPATCH)
			return true;
	return false;
}

/* Sockets stopped at a header try again. ioctl_mutex held. */
void o2g_sock_kick_all(struct o2g_context *ctx)
{
	struct o2g_socket *osk;

	spin_lock_bh(&ctx->lock);
	list_for_each_entry(osk, &ctx->sockets, link)
		if (osk->state == O2G_RX_DISPATCH)
			o2g_sock_schedule(osk, 0);
	spin_unlock_bh(&ctx->lock);
}
