// SPDX-License-Identifier: BSD-3-Clause
// Completion queues. Entries are kept in the richest (tagged) format and cut
// down to the format the queue was opened with when read. Reading drives
// progress, as manual progress requires.
#include "transport/domain_gate.hpp"
#include "transport/objects.hpp"

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include <chrono>
#include <cstring>

namespace hashi::fi {

namespace {

int cq_close(fid* f)
{
    auto* cq = owner_of<cq_obj>(reinterpret_cast<fid_cq*>(f));
    if (cq->refs > 0)
        return -FI_EBUSY;
    cq->domain->refs--;
    delete cq;
    return 0;
}

int cq_control(fid*, int command, void*)
{
    // No wait objects: FI_GETWAIT has nothing to give.
    return command == FI_GETWAIT ? -FI_ENODATA : -FI_ENOSYS;
}

fi_ops cq_fid_ops = {
    .size = sizeof(fi_ops),
    .close = gated<cq_close>,
    .bind = no_bind,
    .control = gated<cq_control>,
    .ops_open = no_ops_open,
    .tostr = no_tostr,
    .ops_set = no_ops_set,
};

std::size_t entry_size(fi_cq_format f)
{
    switch (f) {
    case FI_CQ_FORMAT_CONTEXT:
        return sizeof(fi_cq_entry);
    case FI_CQ_FORMAT_MSG:
        return sizeof(fi_cq_msg_entry);
    case FI_CQ_FORMAT_DATA:
        return sizeof(fi_cq_data_entry);
    case FI_CQ_FORMAT_TAGGED:
        return sizeof(fi_cq_tagged_entry);
    default:
        return 0;
    }
}

void write_entry(fi_cq_format f, void* dst, const fi_cq_tagged_entry& e)
{
    switch (f) {
    case FI_CQ_FORMAT_CONTEXT:
        static_cast<fi_cq_entry*>(dst)->op_context = e.op_context;
        break;
    case FI_CQ_FORMAT_MSG:
        *static_cast<fi_cq_msg_entry*>(dst) = {e.op_context, e.flags, e.len};
        break;
    case FI_CQ_FORMAT_DATA:
        *static_cast<fi_cq_data_entry*>(dst) = {e.op_context, e.flags, e.len, e.buf, e.data};
        break;
    default:
        *static_cast<fi_cq_tagged_entry*>(dst) = e;
        break;
    }
}

ssize_t drain(cq_obj* cq, void* buf, std::size_t count)
{
    if (!cq->errors.empty())
        return -FI_EAVAIL;
    if (cq->entries.empty())
        return -FI_EAGAIN;
    const std::size_t size = entry_size(cq->format);
    std::size_t n = 0;
    auto* out = static_cast<std::uint8_t*>(buf);
    while (n < count && !cq->entries.empty()) {
        write_entry(cq->format, out + n * size, cq->entries.front());
        cq->entries.pop_front();
        ++n;
    }
    return static_cast<ssize_t>(n);
}

ssize_t cq_read(fid_cq* f, void* buf, std::size_t count)
{
    return guarded([&]() -> ssize_t {
        auto* cq = owner_of<cq_obj>(f);
        cq->domain->progress();
        return drain(cq, buf, count);
    });
}

ssize_t cq_readfrom(fid_cq* f, void* buf, std::size_t count, fi_addr_t* src)
{
    const ssize_t n = cq_read(f, buf, count);
    // We do not offer FI_SOURCE, so the source is not known.
    for (ssize_t i = 0; src != nullptr && i < n; ++i)
        src[i] = FI_ADDR_NOTAVAIL;
    return n;
}

ssize_t cq_readerr(fid_cq* f, fi_cq_err_entry* buf, std::uint64_t /*flags*/)
{
    auto* cq = owner_of<cq_obj>(f);
    if (cq->errors.empty())
        return -FI_EAGAIN;
    fi_cq_err_entry e = cq->errors.front();
    cq->errors.pop_front();
    // API >= 1.5: err_data is the caller's buffer; we have no extra data.
    e.err_data = buf->err_data;
    e.err_data_size = 0;
    *buf = e;
    return 1;
}

ssize_t cq_sread(fid_cq* f, void* buf, std::size_t count, const void* /*cond*/, int timeout_ms)
{
    auto* cq = owner_of<cq_obj>(f);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
        const ssize_t n = cq_read(f, buf, count);
        if (n != -FI_EAGAIN)
            return n;
        if (timeout_ms >= 0 && std::chrono::steady_clock::now() >= deadline)
            return -FI_EAGAIN;
        (void)cq;
    }
}

ssize_t cq_sreadfrom(fid_cq* f, void* buf, std::size_t count, fi_addr_t* src, const void* cond, int timeout_ms)
{
    const ssize_t n = cq_sread(f, buf, count, cond, timeout_ms);
    for (ssize_t i = 0; src != nullptr && i < n; ++i)
        src[i] = FI_ADDR_NOTAVAIL;
    return n;
}

int cq_signal(fid_cq*)
{
    return -FI_ENOSYS;
}

const char* cq_strerror(fid_cq*, int prov_errno, const void*, char* buf, std::size_t len)
{
    const char* s = fi_strerror(prov_errno);
    if (buf != nullptr && len > 0) {
        std::snprintf(buf, len, "%s", s);
        return buf;
    }
    return s;
}

fi_ops_cq cq_ops = {
    .size = sizeof(fi_ops_cq),
    .read = gated<cq_read>,
    .readfrom = gated<cq_readfrom>,
    .readerr = gated<cq_readerr>,
    .sread = gated<cq_sread>,
    .sreadfrom = gated<cq_sreadfrom>,
    .signal = gated<cq_signal>,
    .strerror = gated<cq_strerror>,
};

} // namespace

int cq_open(fid_domain* domain, fi_cq_attr* attr, fid_cq** out, void* context)
{
    return guarded([&]() -> int {
        auto* dom = owner_of<domain_obj>(domain);
        fi_cq_format format = attr != nullptr ? attr->format : FI_CQ_FORMAT_CONTEXT;
        if (format == FI_CQ_FORMAT_UNSPEC)
            format = FI_CQ_FORMAT_CONTEXT;
        if (entry_size(format) == 0)
            return -FI_ENOSYS;
        if (attr != nullptr && attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC)
            return -FI_ENOSYS;
        auto* cq = new cq_obj;
        cq->box.owner = cq;
        cq->domain = dom;
        cq->format = format;
        cq->box.fid.fid.fclass = FI_CLASS_CQ;
        cq->box.fid.fid.context = context;
        cq->box.fid.fid.ops = &cq_fid_ops;
        cq->box.fid.ops = &cq_ops;
        dom->refs++;
        *out = &cq->box.fid;
        return 0;
    });
}

} // namespace hashi::fi
