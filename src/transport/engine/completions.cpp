// SPDX-License-Identifier: BSD-3-Clause
// Completion entries and counters for finished operations (completions.hpp).
#include "transport/engine/completions.hpp"

#include "transport/common.hpp"
#include "transport/engine/peer_table.hpp"

namespace hashi::fi {

void completions::post(cq_obj* cq, const op& o, std::uint64_t flags, std::size_t len, void* buf)
{
    fi_cq_tagged_entry e {};
    e.op_context = o.context;
    e.flags = flags;
    e.len = len;
    e.buf = buf;
    e.data = o.msg_data;
    e.tag = o.msg_tag;
    cq->push(e);
}

void completions::inject_done()
{
    if (b_.send_cntr != nullptr)
        ++b_.send_cntr->value;
}

void completions::send_done(op& o)
{
    if (o.completion)
        post(b_.tx_cq, o, FI_SEND | (o.tagged ? FI_TAGGED : FI_MSG), 0, nullptr);
    if (b_.send_cntr != nullptr)
        ++b_.send_cntr->value;
    ops_.release(&o);
}

void completions::recv_done(op& o)
{
    if (o.expected < o.msg_length) {
        error(o, FI_ETRUNC, o.msg_length - o.expected);
        return;
    }
    if (o.completion) {
        const std::uint64_t flags = FI_RECV | (o.tagged ? FI_TAGGED : FI_MSG) | (o.has_data ? FI_REMOTE_CQ_DATA : 0);
        post(b_.rx_cq, o, flags, o.received, o.iov_count > 0 ? o.iov[0].iov_base : nullptr);
    }
    if (b_.recv_cntr != nullptr)
        ++b_.recv_cntr->value;
    ops_.release(&o);
}

void completions::rma_done(op& o, int status)
{
    cntr_obj* c = o.k == op::kind::read ? b_.read_cntr : b_.write_cntr;
    if (status != 0) {
        log_error("RMA %s of %zu bytes at %s failed: %s", o.k == op::kind::read ? "read" : "write", o.length,
            o.p->describe().c_str(), fi_strerror(-status));
        if (c != nullptr)
            ++c->errors;
        fi_cq_err_entry e {};
        e.op_context = o.context;
        e.flags = FI_RMA | (o.k == op::kind::read ? FI_READ : FI_WRITE);
        e.err = -status;
        e.prov_errno = -status;
        b_.tx_cq->push_error(e);
        ops_.release(&o);
        return;
    }
    if (c != nullptr && o.counted)
        ++c->value;
    if (o.completion)
        post(b_.tx_cq, o, FI_RMA | (o.k == op::kind::read ? FI_READ : FI_WRITE), 0, nullptr);
    ops_.release(&o);
}

void completions::error(op& o, int err, std::size_t olen)
{
    fi_cq_err_entry e {};
    e.op_context = o.context;
    cq_obj* cq = b_.rx_cq;
    switch (o.k) {
    case op::kind::send:
        e.flags = FI_SEND | (o.tagged ? FI_TAGGED : FI_MSG);
        cq = b_.tx_cq;
        break;
    case op::kind::read:
        e.flags = FI_RMA | FI_READ;
        cq = b_.tx_cq;
        break;
    case op::kind::write:
        e.flags = FI_RMA | FI_WRITE;
        cq = b_.tx_cq;
        break;
    default:
        e.flags = FI_RECV | (o.tagged ? FI_TAGGED : FI_MSG) | (o.has_data ? FI_REMOTE_CQ_DATA : 0);
        break;
    }
    e.len = o.received;
    e.buf = o.iov_count > 0 ? o.iov[0].iov_base : nullptr;
    e.data = o.msg_data;
    e.tag = o.msg_tag;
    e.olen = olen;
    e.err = err;
    e.prov_errno = err;
    cq->push_error(e);
    cntr_obj* c = (o.k == op::kind::send)                   ? b_.send_cntr
        : (o.k == op::kind::read || o.k == op::kind::write) ? nullptr
                                                            : b_.recv_cntr;
    if (c != nullptr)
        ++c->errors;
    ops_.release(&o);
}

void completions::multi_recv_part(
    op& o, void* at, std::size_t n, std::size_t len, bool has_data, std::uint64_t data, bool used_up)
{
    std::uint64_t flags = FI_RECV | FI_MSG | (has_data ? FI_REMOTE_CQ_DATA : 0);
    if (used_up)
        flags |= FI_MULTI_RECV;
    if (n < len) {
        fi_cq_err_entry e {};
        e.op_context = o.context;
        e.flags = flags;
        e.len = n;
        e.buf = at;
        e.data = data;
        e.olen = len - n;
        e.err = FI_ETRUNC;
        e.prov_errno = FI_ETRUNC;
        b_.rx_cq->push_error(e);
    } else {
        fi_cq_tagged_entry e {};
        e.op_context = o.context;
        e.flags = flags;
        e.len = n;
        e.buf = at;
        e.data = data;
        b_.rx_cq->push(e);
    }
    if (b_.recv_cntr != nullptr)
        ++b_.recv_cntr->value;
    if (used_up)
        ops_.release(&o);
}

void completions::peek_result(void* context, bool tagged, bool found, std::size_t len, std::uint64_t tag,
    std::uint64_t data, bool has_data)
{
    const std::uint64_t flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG);
    if (!found) {
        fi_cq_err_entry err {};
        err.op_context = context;
        err.flags = flags;
        err.err = FI_ENOMSG;
        err.prov_errno = FI_ENOMSG;
        b_.rx_cq->push_error(err);
        return;
    }
    fi_cq_tagged_entry e {};
    e.op_context = context;
    e.flags = flags | (has_data ? FI_REMOTE_CQ_DATA : 0);
    e.len = len;
    e.tag = tag;
    e.data = data;
    b_.rx_cq->push(e);
}

} // namespace hashi::fi
