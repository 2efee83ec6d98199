// SPDX-License-Identifier: GPL-2.0-only
/*
 * o2g: the module, its parameters, and /dev/o2g (a misc device). Each open
 * file is a context (o2g_context.h); this file creates and destroys
 * contexts and routes their ioctls, mmap and poll. Everything here runs in
 * process context.
 */
#include <linux/capability.h>
#include <linux/eventfd.h>
#include <linux/fs.h>
#include <linux/log2.h>
#include <linux/memcontrol.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "o2g_context.h"
#include "o2g_stats.h"

#define O2G_VERSION "0.1.0"

struct workqueue_struct *o2g_wq;

unsigned int o2g_ring_entries = 1024;
module_param_named(ring_entries, o2g_ring_entries, uint, 0444);
MODULE_PARM_DESC(ring_entries, "completion ring entries per context (a power of two, 64 to 65536)");

unsigned int o2g_max_posted = 512;
module_param_named(max_posted, o2g_max_posted, uint, 0444);
MODULE_PARM_DESC(max_posted, "receives posted at once per context (below ring_entries - 2 * max_sockets)");

unsigned int o2g_max_sockets = 64;
module_param_named(max_sockets, o2g_max_sockets, uint, 0444);
MODULE_PARM_DESC(max_sockets, "sockets attached at once per context");

unsigned long o2g_max_unexpected_bytes = 4UL << 20;
module_param_named(max_unexpected_bytes, o2g_max_unexpected_bytes, ulong, 0444);
MODULE_PARM_DESC(max_unexpected_bytes,
		 "payload bytes held for unexpected messages per context; when full, sockets stop being read");

unsigned int o2g_max_unexpected_msgs = 1024;
module_param_named(max_unexpected_msgs, o2g_max_unexpected_msgs, uint, 0444);
MODULE_PARM_DESC(max_unexpected_msgs, "unexpected messages held per context");

unsigned long o2g_pin_cache_pages = 16384;
module_param_named(pin_cache_pages, o2g_pin_cache_pages, ulong, 0444);
MODULE_PARM_DESC(pin_cache_pages,
		 "pages a context keeps pinned beyond its receives in flight (which pin 1 MiB each at most); at least 257");

bool o2g_pin_cache_bypass;
module_param_named(pin_cache_bypass, o2g_pin_cache_bypass, bool, 0644);
MODULE_PARM_DESC(pin_cache_bypass,
		 "for benchmarks: every pin-down cache lookup misses (pinned per receive, unpinned after); may change at any time");

static int o2g_open(struct inode *inode, struct file *file)
{
	struct o2g_context *ctx;
	int err;

	/* A context belongs to a process's address space; kernel threads have none. */
	if (!current->mm)
		return -EPERM;
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx) {
		O2G_COUNT(mem_fail);
		return -ENOMEM;
	}
	err = o2g_ring_init(&ctx->ring);
	if (!err) {
		err = o2g_post_ring_init(ctx);
		if (err)
			o2g_ring_free(&ctx->ring);
	}
	if (err) {
		O2G_COUNT(mem_fail);
		kfree(ctx);
		return err;
	}
	mutex_init(&ctx->ioctl_mutex);
	spin_lock_init(&ctx->lock);
	ctx->mode = O2G_MODE_NONE;
	o2g_matcher_init(&ctx->engines[O2G_TAGGED]);
	o2g_matcher_init(&ctx->engines[O2G_UNTAGGED]);
	INIT_LIST_HEAD(&ctx->sockets);
	o2g_pin_cache_init(&ctx->pins);
	init_waitqueue_head(&ctx->waiters);
	/* Receive buffers are pinned in this mm only; held until release. */
	ctx->mm = current->mm;
	mmgrab(ctx->mm);
	ctx->memcg = get_mem_cgroup_from_mm(ctx->mm);
	/* What its pins may add up to: as RDMA's, the opener's RLIMIT_MEMLOCK. */
	if (capable(CAP_IPC_LOCK) || rlimit(RLIMIT_MEMLOCK) == RLIM_INFINITY)
		ctx->pins.memlock_pages = ULONG_MAX;
	else
		ctx->pins.memlock_pages = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	file->private_data = ctx;
	O2G_COUNT(contexts);
	return 0;
}

/*
 * The last reference to the file is gone: on close, or when a killed
 * process's files are put. Sockets first (no more receive callbacks), then
 * receives and buffers, then the pins they held.
 */
static int o2g_release(struct inode *inode, struct file *file)
{
	struct o2g_context *ctx = file->private_data;

	o2g_sock_detach_all(ctx);
	o2g_post_ring_free(ctx);
	if (ctx->mode == O2G_MODE_MATCH_TEST)
		o2g_match_test_free(ctx);
	else
		o2g_recv_free_all(ctx);
	o2g_pin_cache_destroy(ctx);
	o2g_ring_free(&ctx->ring);
	if (ctx->eventfd)
		eventfd_ctx_put(ctx->eventfd);
	mem_cgroup_put(ctx->memcg);
	mmdrop(ctx->mm);
	kfree(ctx);
	O2G_SUB(contexts, 1);
	return 0;
}

/* Fixes the context's mode on its first use; EINVAL on a mix. ioctl_mutex held. */
static int o2g_claim_mode(struct o2g_context *ctx, enum o2g_mode mode)
{
	if (ctx->mode == O2G_MODE_NONE)
		ctx->mode = mode;
	return ctx->mode == mode ? 0 : -EINVAL;
}

static long o2g_info(struct o2g_context *ctx, void __user *arg)
{
	struct o2g_info info = {
		.abi_version = O2G_ABI_VERSION,
		.ring_entries = o2g_ring_entries,
		.max_posted = o2g_max_posted,
		.max_unexpected_bytes = o2g_max_unexpected_bytes,
		.pin_cache_pages = o2g_pin_cache_pages,
		.memlock_pages = ctx->pins.memlock_pages == ULONG_MAX ? O2G_MEMLOCK_UNLIMITED :
			ctx->pins.memlock_pages,
	};

	return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long o2g_stats_ioctl(struct o2g_context *ctx, void __user *arg)
{
	struct o2g_stats st;

	memset(&st, 0, sizeof(st));
	o2g_stats_read(&st.module);
	spin_lock_bh(&ctx->lock);
	st.posted = ctx->engines[0].posted_count + ctx->engines[1].posted_count;
	st.unexpected = ctx->engines[0].unexpected_count + ctx->engines[1].unexpected_count;
	st.unexpected_bytes = ctx->unexpected_bytes;
	st.pinned_pages = ctx->pins.pinned_pages;
	spin_unlock_bh(&ctx->lock);
	return copy_to_user(arg, &st, sizeof(st)) ? -EFAULT : 0;
}

static long o2g_set_eventfd(struct o2g_context *ctx, void __user *arg)
{
	struct eventfd_ctx *ev;
	s32 fd;

	if (get_user(fd, (s32 __user *)arg))
		return -EFAULT;
	if (ctx->eventfd)
		return -EBUSY;
	ev = eventfd_ctx_fdget(fd);
	if (IS_ERR(ev))
		return PTR_ERR(ev);
	spin_lock_bh(&ctx->lock);
	ctx->eventfd = ev;
	spin_unlock_bh(&ctx->lock);
	return 0;
}

static bool o2g_is_socket_cmd(unsigned int cmd)
{
	return cmd == O2G_IOC_ATTACH || cmd == O2G_IOC_DETACH || cmd == O2G_IOC_POST_RECV ||
	       cmd == O2G_IOC_CANCEL || cmd == O2G_IOC_SET_EVENTFD || cmd == O2G_IOC_TAKE_FRAME ||
	       cmd == O2G_IOC_RESUME || cmd == O2G_IOC_FLUSH_POSTS || cmd == O2G_IOC_PEEK;
}

/* ioctl_mutex held. */
static long o2g_dispatch(struct o2g_context *ctx, unsigned int cmd, void __user *arg)
{
	s32 fd;
	int err;

	switch (cmd) {
	case O2G_IOC_INFO:
		return o2g_info(ctx, arg);
	case O2G_IOC_STATS:
		return o2g_stats_ioctl(ctx, arg);
	case O2G_IOC_MATCH:
		err = o2g_claim_mode(ctx, O2G_MODE_MATCH_TEST);
		return err ? err : o2g_match_ioctl(ctx, arg);
	}
	if (!o2g_is_socket_cmd(cmd))
		return -ENOTTY;

	/* The rest touch this process's memory and sockets. */
	if (current->mm != ctx->mm)
		return -EPERM;
	err = o2g_claim_mode(ctx, O2G_MODE_SOCKETS);
	if (err)
		return err;
	/* Receives written to the posting ring come before this call's. */
	if (o2g_post_drain(ctx))
		o2g_sock_kick_all(ctx);
	o2g_post_attention_settle(ctx);
	switch (cmd) {
	case O2G_IOC_FLUSH_POSTS:
		return 0;
	case O2G_IOC_ATTACH:
		return o2g_sock_attach(ctx, arg);
	case O2G_IOC_DETACH:
		if (get_user(fd, (s32 __user *)arg))
			return -EFAULT;
		return o2g_sock_detach(ctx, fd);
	case O2G_IOC_POST_RECV:
		return o2g_recv_post(ctx, arg);
	case O2G_IOC_CANCEL:
		return o2g_recv_cancel(ctx, arg);
	case O2G_IOC_PEEK:
		return o2g_recv_peek(ctx, arg);
	case O2G_IOC_TAKE_FRAME:
	case O2G_IOC_RESUME:
		return o2g_sock_handoff(ctx, cmd, arg);
	default: /* O2G_IOC_SET_EVENTFD */
		return o2g_set_eventfd(ctx, arg);
	}
}

static long o2g_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct o2g_context *ctx = file->private_data;
	long ret;

	if (_IOC_TYPE(cmd) != O2G_IOC_MAGIC) {
		O2G_COUNT(refused);
		return -ENOTTY;
	}
	mutex_lock(&ctx->ioctl_mutex);
	ret = o2g_dispatch(ctx, cmd, (void __user *)arg);
	mutex_unlock(&ctx->ioctl_mutex);
	if (ret < 0 && ret != -EAGAIN)
		O2G_COUNT(refused);
	return ret;
}

static int o2g_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct o2g_context *ctx = file->private_data;
	int err;

	mutex_lock(&ctx->ioctl_mutex);
	if (vma->vm_pgoff == O2G_POST_RING_OFFSET >> PAGE_SHIFT)
		err = o2g_post_ring_mmap(&ctx->posts, vma);
	else
		err = o2g_ring_mmap(&ctx->ring, vma);
	mutex_unlock(&ctx->ioctl_mutex);
	if (err)
		O2G_COUNT(refused);
	return err;
}

static __poll_t o2g_poll(struct file *file, poll_table *wait)
{
	struct o2g_context *ctx = file->private_data;

	poll_wait(file, &ctx->waiters, wait);
	return o2g_ring_unread(&ctx->ring) ? EPOLLIN | EPOLLRDNORM : 0;
}

static const struct file_operations o2g_fops = {
	.owner = THIS_MODULE,
	.open = o2g_open,
	.release = o2g_release,
	.unlocked_ioctl = o2g_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = o2g_mmap,
	.poll = o2g_poll,
	.llseek = noop_llseek,
};

static struct miscdevice o2g_device = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "o2g",
	.fops = &o2g_fops,
	.groups = o2g_stats_groups,
	.mode = 0666,
};

static int o2g_check_params(void)
{
	if (!is_power_of_2(o2g_ring_entries) || o2g_ring_entries < 64 ||
	    o2g_ring_entries > 65536) {
		pr_err("o2g: ring_entries=%u must be a power of two from 64 to 65536\n",
		       o2g_ring_entries);
		return -EINVAL;
	}
	/*
	 * Every posted receive, and per socket a message in flight and its
	 * last event, must fit the ring.
	 */
	if (!o2g_max_posted || !o2g_max_sockets ||
	    (u64)o2g_max_posted + 2ULL * o2g_max_sockets >= o2g_ring_entries) {
		pr_err("o2g: max_posted=%u + 2 * max_sockets=%u must be at least 1 each and below ring_entries=%u\n",
		       o2g_max_posted, o2g_max_sockets, o2g_ring_entries);
		return -EINVAL;
	}
	/* One eager frame's worth each: 1 MiB, at any alignment for the pins. */
	if (!o2g_max_unexpected_msgs || o2g_max_unexpected_bytes < (1UL << 20) ||
	    o2g_pin_cache_pages < (O2G_FRAME_MAX_EAGER >> PAGE_SHIFT) + 1) {
		pr_err("o2g: max_unexpected_msgs must be at least 1, max_unexpected_bytes at least 1 MiB (one eager frame), pin_cache_pages at least %lu (one eager frame's pages)\n",
		       (unsigned long)(O2G_FRAME_MAX_EAGER >> PAGE_SHIFT) + 1);
		return -EINVAL;
	}
	return 0;
}

static int __init o2g_init(void)
{
	int err = o2g_check_params();

	if (err)
		return err;
	/*
	 * High priority, as nvme-tcp's socket work: a read deferred because
	 * the rank held its socket (writing) is on the latency path of the
	 * message, and the ranks spin; at normal priority the worker waited
	 * behind them (8-byte latency 3.95x the user backend's in the VM).
	 */
	o2g_wq = alloc_workqueue("o2g", WQ_HIGHPRI, 0);
	if (!o2g_wq)
		return -ENOMEM;
	err = misc_register(&o2g_device);
	if (err) {
		pr_err("o2g: cannot register /dev/o2g: %d\n", err);
		destroy_workqueue(o2g_wq);
		return err;
	}
	pr_info("o2g: version %s, ABI %d, /dev/o2g ready\n", O2G_VERSION, O2G_ABI_VERSION);
	return 0;
}

static void __exit o2g_exit(void)
{
	/* Open contexts hold a module reference: none is left here. */
	misc_deregister(&o2g_device);
	destroy_workqueue(o2g_wq);
	pr_info("o2g: unloaded\n");
}

module_init(o2g_init);
module_exit(o2g_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("Hashi MPI");
MODULE_DESCRIPTION("o2g: MPI receive matching in the TCP receive path, with a pin-down cache");
MODULE_VERSION(O2G_VERSION);
