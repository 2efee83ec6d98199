// SPDX-License-Identifier: BSD-3-Clause
// What the endpoint does with each frame it receives, and how frames are
// queued for sending. The checks here are the second line of defence after
// decode_header(): ids, keys, offsets and lengths in a frame are compared
// with the endpoint's own state before any memory is touched, and a frame
// that does not fit closes the connection with the reason logged.
#include "transport/endpoint.hpp"

#include <algorithm>
#include <cstring>

namespace hashi::fi {

// Points `out` at bytes [offset, offset + len) of the buffer described by
// `iov`. Returns the number of entries used.
std::size_t slice(const iovec* iov, std::size_t count, std::size_t offset, std::size_t len,
    std::array<iovec, provider_iov_limit>& out)
{
    std::size_t n = 0;
    for (std::size_t i = 0; i < count && len > 0; ++i) {
        if (offset >= iov[i].iov_len) {
            offset -= iov[i].iov_len;
            continue;
        }
        const std::size_t m = std::min(iov[i].iov_len - offset, len);
        out[n++] = {static_cast<std::uint8_t*>(iov[i].iov_base) + offset, m};
        len -= m;
        offset = 0;
    }
    return n;
}

void endpoint::queue_frame(peer& p, const wire::frame_header& h0, const iovec* iov, std::size_t iov_count,
    std::unique_ptr<std::uint8_t[]> owned, op* done)
{
    wire::frame_header h = h0;
    h.seq = p.tx_seq++;
    tx_item& t = p.txq.emplace_back();
    t.hdr = wire::encode_header(h);
    t.iov_count = static_cast<std::uint8_t>(iov_count);
    for (std::size_t i = 0; i < iov_count; ++i)
        t.iov[i] = iov[i];
    t.total = wire::header_size + h.length;
    t.owned = std::move(owned);
    t.done = done;
    t.payload_bytes = h.length;
    ++tx_queued_;
}

void endpoint::queue_control(
    peer& p, wire::frame_type type, std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t tag)
{
    wire::frame_header h;
    h.type = type;
    h.a = a;
    h.b = b;
    h.c = c;
    h.tag = tag;
    queue_frame(p, h, nullptr, 0, nullptr, nullptr);
}

bool endpoint::handle_inline_frame(connection& c, const wire::frame_header& h, const std::uint8_t* payload)
{
    peer& p = *c.p;
    switch (h.type) {
    case wire::frame_type::msg:
    case wire::frame_type::tagged:
        ++p.stats.rx_msgs;
        deliver_eager(p, h, payload, h.type == wire::frame_type::tagged);
        return true;
    case wire::frame_type::rts:
        ++p.stats.rx_msgs;
        ++p.stats.rendezvous;
        deliver_rts(p, h);
        return true;
    case wire::frame_type::cts: {
        auto it = rdv_sends_.find(h.a);
        if (it == rdv_sends_.end() || it->second->p != &p || h.c > it->second->length) {
            connection_failed(c, "clear-to-send for an unknown rendezvous or with a bad length");
            return false;
        }
        op& o = *it->second;
        rdv_sends_.erase(it);
        if (h.c == 0) {
            complete_send(o);
        } else {
            for (std::size_t off = 0; off < h.c; off += chunk_size_) {
                const std::size_t n = std::min<std::size_t>(chunk_size_, h.c - off);
                wire::frame_header d;
                d.type = wire::frame_type::data;
                d.a = h.b;
                d.b = off;
                d.length = n;
                std::array<iovec, provider_iov_limit> part {};
                const std::size_t k = slice(o.iov.data(), o.iov_count, off, n, part);
                queue_frame(p, d, part.data(), k, nullptr, off + n == h.c ? &o : nullptr);
            }
        }
        flush(p);
        return true;
    }
    case wire::frame_type::rma_write_ack: {
        auto it = rma_ops_.find(h.a);
        if (it == rma_ops_.end() || it->second->p != &p || it->second->k != op::kind::write) {
            connection_failed(c, "RMA write acknowledgement for an unknown operation");
            return false;
        }
        op& o = *it->second;
        const int status = static_cast<int>(static_cast<std::int64_t>(h.c));
        if (status != 0 || --o.expected == 0) {
            rma_ops_.erase(it);
            complete_rma(o, status);
        }
        return true;
    }
    case wire::frame_type::rma_read_req: {
        ++p.stats.rma_ops;
        // h.a key, h.b offset, h.c initiator's op, h.tag length wanted.
        auto r = domain->regions.find(h.a);
        int status = 0;
        const std::uint64_t len = h.tag;
        if (r == domain->regions.end())
            status = -FI_EKEYREJECTED;
        else if ((r->second->access & FI_REMOTE_READ) == 0)
            status = -FI_EACCES;
        else if (h.b > r->second->length || len > r->second->length - h.b)
            status = -FI_EINVAL;
        if (status != 0) {
            log_warn("refused an RMA read from %s: %s (key %llu)", p.describe().c_str(), fi_strerror(-status),
                static_cast<unsigned long long>(h.a));
            queue_control(p, wire::frame_type::rma_read_resp, h.c, 0, static_cast<std::uint64_t>(status));
        } else if (len == 0) {
            queue_control(p, wire::frame_type::rma_read_resp, h.c, 0, 0);
        } else {
            std::uint8_t* base = r->second->base + h.b;
            for (std::uint64_t off = 0; off < len; off += chunk_size_) {
                const std::size_t n = std::min<std::uint64_t>(chunk_size_, len - off);
                wire::frame_header d;
                d.type = wire::frame_type::rma_read_resp;
                d.a = h.c;
                d.b = off;
                d.length = n;
                const iovec v {base + off, n};
                queue_frame(p, d, &v, 1, nullptr, nullptr);
            }
        }
        flush(p);
        return true;
    }
    case wire::frame_type::rma_read_resp: {
        // Only an error answer or an empty read arrives without payload.
        auto it = rma_ops_.find(h.a);
        if (it == rma_ops_.end() || it->second->p != &p || it->second->k != op::kind::read) {
            connection_failed(c, "RMA read response for an unknown operation");
            return false;
        }
        op& o = *it->second;
        const int status = static_cast<int>(static_cast<std::int64_t>(h.c));
        if (status == 0 && o.length != 0) {
            connection_failed(c, "empty RMA read response for a non-empty read");
            return false;
        }
        rma_ops_.erase(it);
        complete_rma(o, status);
        return true;
    }
    case wire::frame_type::bye:
        c.bye_received = true;
        return true;
    case wire::frame_type::data:
    case wire::frame_type::rma_write:
        // Zero-length: nothing to read, same bookkeeping as with payload.
        if (!begin_direct(c, h))
            return false;
        return true;
    default:
        connection_failed(c, std::string("unexpected ") + wire::frame_type_name(h.type) + " frame");
        return false;
    }
}

bool endpoint::begin_direct(connection& c, const wire::frame_header& h)
{
    peer& p = *c.p;
    auto& s = c.sink;
    s = {};
    s.h = h;
    s.remaining = h.length;
    switch (h.type) {
    case wire::frame_type::data: {
        auto it = rdv_recvs_.find(h.a);
        if (it == rdv_recvs_.end() || it->second->p != &p || h.b != it->second->received ||
            h.length > it->second->expected - it->second->received) {
            connection_failed(c, "rendezvous data for an unknown receive or out of its bounds");
            return false;
        }
        op& o = *it->second;
        s.iov_count = slice(o.iov.data(), o.iov_count, h.b, h.length, s.iov);
        break;
    }
    case wire::frame_type::rma_write: {
        ++p.stats.rma_ops;
        auto r = domain->regions.find(h.a);
        int status = 0;
        if (r == domain->regions.end())
            status = -FI_EKEYREJECTED;
        else if ((r->second->access & FI_REMOTE_WRITE) == 0)
            status = -FI_EACCES;
        else if (h.b > r->second->length || h.length > r->second->length - h.b)
            status = -FI_EINVAL;
        if (status != 0) {
            log_warn("refused an RMA write from %s: %s (key %llu)", p.describe().c_str(), fi_strerror(-status),
                static_cast<unsigned long long>(h.a));
            s.discard = h.length;
            s.h.tag = static_cast<std::uint64_t>(status); // remembered for the ack
        } else {
            s.iov[0] = {r->second->base + h.b, h.length};
            s.iov_count = h.length > 0 ? 1 : 0;
            s.checked_copy = r->second->base == nullptr;
            s.h.tag = 0;
        }
        break;
    }
    case wire::frame_type::rma_read_resp: {
        auto it = rma_ops_.find(h.a);
        if (it == rma_ops_.end() || it->second->p != &p || it->second->k != op::kind::read ||
            h.b != it->second->received || h.length > it->second->length - it->second->received || h.c != 0) {
            connection_failed(c, "RMA read data for an unknown read or out of its bounds");
            return false;
        }
        op& o = *it->second;
        s.iov_count = slice(o.iov.data(), o.iov_count, h.b, h.length, s.iov);
        break;
    }
    default:
        connection_failed(c, std::string("unexpected payload of a ") + wire::frame_type_name(h.type) + " frame");
        return false;
    }
    s.active = true;
    if (s.remaining == 0) {
        s.active = false;
        end_direct(c);
    }
    return c.st != connection::state::closed;
}

void endpoint::end_direct(connection& c)
{
    peer& p = *c.p;
    const wire::frame_header& h = c.sink.h;
    switch (h.type) {
    case wire::frame_type::data: {
        auto it = rdv_recvs_.find(h.a);
        op& o = *it->second;
        o.received += h.length;
        if (o.received == o.expected) {
            rdv_recvs_.erase(it);
            complete_recv(o);
        }
        break;
    }
    case wire::frame_type::rma_write:
        // Delivery complete: the data is in the target's memory now.
        queue_control(p, wire::frame_type::rma_write_ack, h.c, 0, h.tag);
        flush(p);
        break;
    case wire::frame_type::rma_read_resp: {
        auto it = rma_ops_.find(h.a);
        op& o = *it->second;
        o.received += h.length;
        if (o.received == o.length) {
            rma_ops_.erase(it);
            complete_rma(o, 0);
        }
        break;
    }
    default:
        break;
    }
}

} // namespace hashi::fi
