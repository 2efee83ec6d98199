// SPDX-License-Identifier: BSD-3-Clause
// The C entry points of the endpoint. Each turns its libfabric arguments into
// one call on the endpoint object; the completion rules are applied here:
// calls without a flags argument complete unless the CQ was bound with
// FI_SELECTIVE_COMPLETION and the attributes' op_flags lack FI_COMPLETION;
// *msg calls complete only when their flags say FI_COMPLETION (under
// selective completion); inject calls never complete.
#include "transport/domain_gate.hpp"
#include "transport/ep_ops.hpp"

#include "transport/endpoint.hpp"

namespace hashi::fi {

namespace {

endpoint* ep_of(fid_ep* e)
{
    return owner_of<endpoint>(e);
}
endpoint* ep_of(fid_t f)
{
    return owner_of<endpoint>(reinterpret_cast<fid_ep*>(f));
}

iovec one(const void* buf, std::size_t len)
{
    return {const_cast<void*>(buf), len};
}

bool msg_completion(const endpoint* ep, bool tx, std::uint64_t flags)
{
    const bool selective = tx ? ep->selective_tx() : ep->selective_rx();
    return !selective || (flags & FI_COMPLETION) != 0;
}

// ---- fi_ops_ep -------------------------------------------------------------

ssize_t ep_cancel(fid_t f, void* context)
{
    return guarded([&] { return ep_of(f)->cancel(context); });
}
int ep_getopt(fid_t f, int level, int optname, void* optval, std::size_t* optlen)
{
    return ep_of(f)->getopt(level, optname, optval, optlen);
}
int ep_setopt(fid_t f, int level, int optname, const void* optval, std::size_t optlen)
{
    return ep_of(f)->setopt(level, optname, optval, optlen);
}
int ep_tx_ctx(fid_ep*, int, fi_tx_attr*, fid_ep**, void*)
{
    return -FI_ENOSYS;
}
int ep_rx_ctx(fid_ep*, int, fi_rx_attr*, fid_ep**, void*)
{
    return -FI_ENOSYS;
}
ssize_t ep_rx_size_left(fid_ep*)
{
    return static_cast<ssize_t>(provider_rx_size);
}
ssize_t ep_tx_size_left(fid_ep*)
{
    return static_cast<ssize_t>(provider_tx_size);
}

// ---- fi_ops_cm ---------------------------------------------------------------

int cm_setname(fid_t, void*, std::size_t)
{
    return -FI_ENOSYS;
}
int cm_getname(fid_t f, void* addr, std::size_t* addrlen)
{
    return ep_of(f)->getname(addr, addrlen);
}
int cm_getpeer(fid_ep*, void*, std::size_t*)
{
    return -FI_ENOSYS;
}
int cm_connect(fid_ep*, const void*, const void*, std::size_t)
{
    return -FI_ENOSYS;
}
int cm_listen(fid_pep*)
{
    return -FI_ENOSYS;
}
int cm_accept(fid_ep*, const void*, std::size_t)
{
    return -FI_ENOSYS;
}
int cm_reject(fid_pep*, fid_t, const void*, std::size_t)
{
    return -FI_ENOSYS;
}
int cm_shutdown(fid_ep*, std::uint64_t)
{
    return -FI_ENOSYS;
}
int cm_join(fid_ep*, const void*, std::uint64_t, fid_mc**, void*)
{
    return -FI_ENOSYS;
}

// ---- fi_ops_msg ----------------------------------------------------------------

ssize_t msg_recv(fid_ep* e, void* buf, std::size_t len, void*, fi_addr_t src, void* ctx)
{
    return guarded([&] {
        auto* ep = ep_of(e);
        const iovec v = one(buf, len);
        return ep->post_recv(&v, 1, src, 0, 0, false, 0, ep->rx_completion_default(), ctx);
    });
}
ssize_t msg_recvv(fid_ep* e, const iovec* iov, void**, std::size_t count, fi_addr_t src, void* ctx)
{
    return guarded([&] {
        auto* ep = ep_of(e);
        return ep->post_recv(iov, count, src, 0, 0, false, 0, ep->rx_completion_default(), ctx);
    });
}
ssize_t msg_recvmsg(fid_ep* e, const fi_msg* m, std::uint64_t flags)
{
    return guarded([&] {
        auto* ep = ep_of(e);
        return ep->post_recv(
            m->msg_iov, m->iov_count, m->addr, 0, 0, false, flags, msg_completion(ep, false, flags), m->context);
    });
}
ssize_t msg_send(fid_ep* e, const void* buf, std::size_t len, void*, fi_addr_t dest, void* ctx)
{
    return guarded([&] {
        auto* ep = ep_of(e);
        const iovec v = one(buf, len);
        return ep->post_send(&v, 1, dest, 0, 0, false, false, false, ep->tx_completion_default(), ctx);
    });
}
ssize_t msg_sendv(fid_ep* e, const iovec* iov, void**, std::size_t count, fi_addr_t dest, void* ctx)
{
    return guarded([&] {
        auto* ep = ep_of(e);
        return ep->post_send(iov, count, dest, 0, 0, false, false, false, ep->tx_completion_default(), ctx);
    });
}
ssize_t msg_sendmsg(fid_ep* e, const fi_msg* m, std::uint64_t flags)
{
    return guarded([&] {
        auto* ep = ep_of(e);
        const bool inject = flags & FI_INJECT;
        return ep->post_send(m->msg_iov, m->iov_count, m->addr, 0, m->data, flags & FI_REMOTE_CQ_DATA, false, false,
            !inject && msg_completion(ep, true, flags), m->context);
    });
}
ssize_t msg_inject(fid_ep* e, const void* buf, std::size_t len, fi_addr_t dest)
{
    return guarded([&] {
        const iovec v = one(buf, len);
        return ep_of(e)->post_send(&v, 1, dest, 0, 0, false, false, true, false, nullptr);
    });
}
ssize_t msg_senddata(fid_ep* e, const void* buf, std::size_t len, void*, std::uint64_t data, fi_addr_t dest, void* ctx)
{
    return guarded([&] {
        auto* ep = ep_of(e);
        const iovec v = one(buf, len);
        return ep->post_send(&v, 1, dest, 0, data, true, false, false, ep->tx_completion_default(), ctx);
    });
}
ssize_t msg_injectdata(fid_ep* e, const void* buf, std::size_t len, std::uint64_t data, fi_addr_t dest)
{
    return guarded([&] {
        const iovec v = one(buf, len);
        return ep_of(e)->post_send(&v, 1, dest, 0, data, true, false, true, false, nullptr);
    });
}

// ---- fi_ops_tagged -------------------------------------------------------------

ssize_t tag_recv(
    fid_ep* e, void* buf, std::size_t len, void*, fi_addr_t src, std::uint64_t tag, std::uint64_t ignore, void* ctx)
{
    return guarded([&] {
        auto* ep = ep_of(e);
        const iovec v = one(buf, len);
        return ep->post_recv(&v, 1, src, tag, ignore, true, 0, ep->rx_completion_default(), ctx);
    });
}
ssize_t tag_recvv(fid_ep* e, const iovec* iov, void**, std::size_t count, fi_addr_t src, std::uint64_t tag,
    std::uint64_t ignore, void* ctx)
{
    return guarded([&] {
        auto* ep = ep_of(e);
        return ep->post_recv(iov, count, src, tag, ignore, true, 0, ep->rx_completion_default(), ctx);
    });
}
ssize_t tag_recvmsg(fid_ep* e, const fi_msg_tagged* m, std::uint64_t flags)
{
    return guarded([&] {
        auto* ep = ep_of(e);
        return ep->post_recv(m->msg_iov, m->iov_count, m->addr, m->tag, m->ignore, true, flags,
            msg_completion(ep, false, flags), m->context);
    });
}
ssize_t tag_send(fid_ep* e, const void* buf, std::size_t len, void*, fi_addr_t dest, std::uint64_t tag, void* ctx)
{
    return guarded([&] {
        auto* ep = ep_of(e);
        const iovec v = one(buf, len);
        return ep->post_send(&v, 1, dest, tag, 0, false, true, false, ep->tx_completion_default(), ctx);
    });
}
ssize_t tag_sendv(fid_ep* e, const iovec* iov, void**, std::size_t count, fi_addr_t dest, std::uint64_t tag, void* ctx)
{
    return guarded([&] {
        auto* ep = ep_of(e);
        return ep->post_send(iov, count, dest, tag, 0, false, true, false, ep->tx_completion_default(), ctx);
    });
}
ssize_t tag_sendmsg(fid_ep* e, const fi_msg_tagged* m, std::uint64_t flags)
{
    return guarded([&] {
        auto* ep = ep_of(e);
        const bool inject = flags & FI_INJECT;
        return ep->post_send(m->msg_iov, m->iov_count, m->addr, m->tag, m->data, flags & FI_REMOTE_CQ_DATA, true, false,
            !inject && msg_completion(ep, true, flags), m->context);
    });
}
ssize_t tag_inject(fid_ep* e, const void* buf, std::size_t len, fi_addr_t dest, std::uint64_t tag)
{
    return guarded([&] {
        const iovec v = one(buf, len);
        return ep_of(e)->post_send(&v, 1, dest, tag, 0, false, true, true, false, nullptr);
    });
}
ssize_t tag_senddata(fid_ep* e, const void* buf, std::size_t len, void*, std::uint64_t data, fi_addr_t dest,
    std::uint64_t tag, void* ctx)
{
    return guarded([&] {
        auto* ep = ep_of(e);
        const iovec v = one(buf, len);
        return ep->post_send(&v, 1, dest, tag, data, true, true, false, ep->tx_completion_default(), ctx);
    });
}
ssize_t tag_injectdata(
    fid_ep* e, const void* buf, std::size_t len, std::uint64_t data, fi_addr_t dest, std::uint64_t tag)
{
    return guarded([&] {
        const iovec v = one(buf, len);
        return ep_of(e)->post_send(&v, 1, dest, tag, data, true, true, true, false, nullptr);
    });
}

// ---- fi_ops_rma ----------------------------------------------------------------

ssize_t rma_read(
    fid_ep* e, void* buf, std::size_t len, void*, fi_addr_t src, std::uint64_t addr, std::uint64_t key, void* ctx)
{
    return guarded([&] {
        auto* ep = ep_of(e);
        const iovec v = one(buf, len);
        return ep->post_rma(op::kind::read, &v, 1, src, addr, key, false, ep->tx_completion_default(), ctx);
    });
}
ssize_t rma_readv(fid_ep* e, const iovec* iov, void**, std::size_t count, fi_addr_t src, std::uint64_t addr,
    std::uint64_t key, void* ctx)
{
    return guarded([&] {
        auto* ep = ep_of(e);
        return ep->post_rma(op::kind::read, iov, count, src, addr, key, false, ep->tx_completion_default(), ctx);
    });
}
ssize_t rma_readmsg(fid_ep* e, const fi_msg_rma* m, std::uint64_t flags)
{
    return guarded([&]() -> ssize_t {
        auto* ep = ep_of(e);
        if (m->rma_iov_count != 1)
            return -FI_EINVAL;
        return ep->post_rma(op::kind::read, m->msg_iov, m->iov_count, m->addr, m->rma_iov[0].addr, m->rma_iov[0].key,
            false, msg_completion(ep, true, flags), m->context);
    });
}
ssize_t rma_write(fid_ep* e, const void* buf, std::size_t len, void*, fi_addr_t dest, std::uint64_t addr,
    std::uint64_t key, void* ctx)
{
    return guarded([&] {
        auto* ep = ep_of(e);
        const iovec v = one(buf, len);
        return ep->post_rma(op::kind::write, &v, 1, dest, addr, key, false, ep->tx_completion_default(), ctx);
    });
}
ssize_t rma_writev(fid_ep* e, const iovec* iov, void**, std::size_t count, fi_addr_t dest, std::uint64_t addr,
    std::uint64_t key, void* ctx)
{
    return guarded([&] {
        auto* ep = ep_of(e);
        return ep->post_rma(op::kind::write, iov, count, dest, addr, key, false, ep->tx_completion_default(), ctx);
    });
}
ssize_t rma_writemsg(fid_ep* e, const fi_msg_rma* m, std::uint64_t flags)
{
    return guarded([&]() -> ssize_t {
        auto* ep = ep_of(e);
        if (m->rma_iov_count != 1)
            return -FI_EINVAL;
        // Remote CQ data with a write would need FI_RMA_EVENT at the target.
        if (flags & FI_REMOTE_CQ_DATA)
            return -FI_EOPNOTSUPP;
        return ep->post_rma(op::kind::write, m->msg_iov, m->iov_count, m->addr, m->rma_iov[0].addr, m->rma_iov[0].key,
            (flags & FI_INJECT) != 0, msg_completion(ep, true, flags), m->context);
    });
}
ssize_t rma_inject(fid_ep* e, const void* buf, std::size_t len, fi_addr_t dest, std::uint64_t addr, std::uint64_t key)
{
    return guarded([&] {
        const iovec v = one(buf, len);
        return ep_of(e)->post_rma(op::kind::write, &v, 1, dest, addr, key, true, false, nullptr);
    });
}
ssize_t rma_writedata(
    fid_ep*, const void*, std::size_t, void*, std::uint64_t, fi_addr_t, std::uint64_t, std::uint64_t, void*)
{
    return -FI_EOPNOTSUPP;
}
ssize_t rma_injectdata(fid_ep*, const void*, std::size_t, std::uint64_t, fi_addr_t, std::uint64_t, std::uint64_t)
{
    return -FI_EOPNOTSUPP;
}

// ---- fi_ops_atomic: not offered (no FI_ATOMIC in caps) ---------------------------

ssize_t at_write(
    fid_ep*, const void*, std::size_t, void*, fi_addr_t, std::uint64_t, std::uint64_t, fi_datatype, fi_op, void*)
{
    return -FI_ENOSYS;
}
ssize_t at_writev(
    fid_ep*, const fi_ioc*, void**, std::size_t, fi_addr_t, std::uint64_t, std::uint64_t, fi_datatype, fi_op, void*)
{
    return -FI_ENOSYS;
}
ssize_t at_writemsg(fid_ep*, const fi_msg_atomic*, std::uint64_t)
{
    return -FI_ENOSYS;
}
ssize_t at_inject(fid_ep*, const void*, std::size_t, fi_addr_t, std::uint64_t, std::uint64_t, fi_datatype, fi_op)
{
    return -FI_ENOSYS;
}
ssize_t at_readwrite(fid_ep*, const void*, std::size_t, void*, void*, void*, fi_addr_t, std::uint64_t, std::uint64_t,
    fi_datatype, fi_op, void*)
{
    return -FI_ENOSYS;
}
ssize_t at_readwritev(fid_ep*, const fi_ioc*, void**, std::size_t, fi_ioc*, void**, std::size_t, fi_addr_t,
    std::uint64_t, std::uint64_t, fi_datatype, fi_op, void*)
{
    return -FI_ENOSYS;
}
ssize_t at_readwritemsg(fid_ep*, const fi_msg_atomic*, fi_ioc*, void**, std::size_t, std::uint64_t)
{
    return -FI_ENOSYS;
}
ssize_t at_compwrite(fid_ep*, const void*, std::size_t, void*, const void*, void*, void*, void*, fi_addr_t,
    std::uint64_t, std::uint64_t, fi_datatype, fi_op, void*)
{
    return -FI_ENOSYS;
}
ssize_t at_compwritev(fid_ep*, const fi_ioc*, void**, std::size_t, const fi_ioc*, void**, std::size_t, fi_ioc*, void**,
    std::size_t, fi_addr_t, std::uint64_t, std::uint64_t, fi_datatype, fi_op, void*)
{
    return -FI_ENOSYS;
}
ssize_t at_compwritemsg(
    fid_ep*, const fi_msg_atomic*, const fi_ioc*, void**, std::size_t, fi_ioc*, void**, std::size_t, std::uint64_t)
{
    return -FI_ENOSYS;
}
int at_valid(fid_ep*, fi_datatype, fi_op, std::size_t*)
{
    return -FI_EOPNOTSUPP;
}

} // namespace

fi_ops_ep ep_base_ops = {
    .size = sizeof(fi_ops_ep),
    .cancel = gated<ep_cancel>,
    .getopt = gated<ep_getopt>,
    .setopt = gated<ep_setopt>,
    .tx_ctx = gated<ep_tx_ctx>,
    .rx_ctx = gated<ep_rx_ctx>,
    .rx_size_left = gated<ep_rx_size_left>,
    .tx_size_left = gated<ep_tx_size_left>,
};

fi_ops_cm ep_cm_ops = {
    .size = sizeof(fi_ops_cm),
    .setname = gated<cm_setname>,
    .getname = gated<cm_getname>,
    .getpeer = gated<cm_getpeer>,
    .connect = gated<cm_connect>,
    .listen = gated<cm_listen>,
    .accept = gated<cm_accept>,
    .reject = gated<cm_reject>,
    .shutdown = gated<cm_shutdown>,
    .join = gated<cm_join>,
};

fi_ops_msg ep_msg_ops = {
    .size = sizeof(fi_ops_msg),
    .recv = gated<msg_recv>,
    .recvv = gated<msg_recvv>,
    .recvmsg = gated<msg_recvmsg>,
    .send = gated<msg_send>,
    .sendv = gated<msg_sendv>,
    .sendmsg = gated<msg_sendmsg>,
    .inject = gated<msg_inject>,
    .senddata = gated<msg_senddata>,
    .injectdata = gated<msg_injectdata>,
};

fi_ops_tagged ep_tagged_ops = {
    .size = sizeof(fi_ops_tagged),
    .recv = gated<tag_recv>,
    .recvv = gated<tag_recvv>,
    .recvmsg = gated<tag_recvmsg>,
    .send = gated<tag_send>,
    .sendv = gated<tag_sendv>,
    .sendmsg = gated<tag_sendmsg>,
    .inject = gated<tag_inject>,
    .senddata = gated<tag_senddata>,
    .injectdata = gated<tag_injectdata>,
};

fi_ops_rma ep_rma_ops = {
    .size = sizeof(fi_ops_rma),
    .read = gated<rma_read>,
    .readv = gated<rma_readv>,
    .readmsg = gated<rma_readmsg>,
    .write = gated<rma_write>,
    .writev = gated<rma_writev>,
    .writemsg = gated<rma_writemsg>,
    .inject = gated<rma_inject>,
    .writedata = gated<rma_writedata>,
    .injectdata = gated<rma_injectdata>,
};

fi_ops_atomic ep_atomic_ops = {
    .size = sizeof(fi_ops_atomic),
    .write = at_write,
    .writev = at_writev,
    .writemsg = at_writemsg,
    .inject = at_inject,
    .readwrite = at_readwrite,
    .readwritev = at_readwritev,
    .readwritemsg = at_readwritemsg,
    .compwrite = at_compwrite,
    .compwritev = at_compwritev,
    .compwritemsg = at_compwritemsg,
    .writevalid = at_valid,
    .readwritevalid = at_valid,
    .compwritevalid = at_valid,
};

} // namespace hashi::fi
