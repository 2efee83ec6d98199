// SPDX-License-Identifier: BSD-3-Clause
// A posted receive as an op (engine/operations.hpp), the same for every
// receive backend: what libfabric handed in, before any matching.
#pragma once

#include "transport/engine/operations.hpp"
#include "transport/recv/receive_backend.hpp"
#include "transport/send/send_scheduler.hpp"

#include <algorithm>
#include <cstring>

namespace hashi::fi {

inline op* new_recv_op(operations& ops, const recv_request& r)
{
    op* o = ops.new_op();
    o->k = (r.flags & FI_MULTI_RECV) ? op::kind::multi_recv : op::kind::recv;
    o->tagged = r.tagged;
    o->completion = r.completion;
    o->context = r.context;
    o->iov_count = r.count;
    std::copy(r.iov, r.iov + r.count, o->iov.begin());
    o->length = total_length(r.iov, r.count);
    o->addr = r.src;
    o->tag = r.tag;
    o->ignore = r.ignore;
    return o;
}

// Copies `len` bytes from `src` into the buffer described by `iov`.
inline void scatter(const iovec* iov, std::size_t count, const std::uint8_t* src, std::size_t len)
{
    for (std::size_t i = 0; i < count && len > 0; ++i) {
        const std::size_t m = std::min(iov[i].iov_len, len);
        if (m > 0)
            std::memcpy(iov[i].iov_base, src, m);
        src += m;
        len -= m;
    }
}

} // namespace hashi::fi
