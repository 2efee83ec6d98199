// SPDX-License-Identifier: BSD-3-Clause
// Application operations in flight (sends, receives, RMA) and the one table
// that owns them.
//
// Every op lives in `operations` from new_op() until release(): the table
// owns the memory (so nothing leaks when the endpoint closes with MPICH's
// multi-receive buffers still posted) and hands out plain pointers, which
// the match engine's cookies and the send queues hold for the op's
// lifetime. Frames from a peer name operations by 64-bit id; find() is the
// one place such an id is checked against what the op waits for and the
// peer it belongs to, before any memory is touched.
//
// Progress thread only (FI_THREAD_DOMAIN): nothing here is locked.
#pragma once

#include "transport/info.hpp"

#include <rdma/fabric.h>
#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace hashi::fi {

struct peer;

struct op {
    enum class kind : std::uint8_t { send, recv, multi_recv, read, write };
    // What a frame naming this op's id may do to it.
    enum class waits : std::uint8_t {
        nothing,
        cts, // a rendezvous send: its clear-to-send
        data, // a rendezvous receive: its payload chunks
        rma, // an RMA read or write: the data or the acknowledgements
    };
    kind k = kind::send;
    waits wait = waits::nothing;
    bool tagged = false;
    bool completion = false; // post a CQ entry when done (errors are always posted)
    bool counted = false; // RMA: bump the bound counter when done
    void* context = nullptr;
    std::array<iovec, provider_iov_limit> iov {};
    std::size_t iov_count = 0;
    std::size_t length = 0; // bytes the buffer (iov) holds
    fi_addr_t addr = FI_ADDR_UNSPEC;
    std::uint64_t tag = 0;
    std::uint64_t ignore = 0;
    std::uint64_t data = 0;
    bool has_data = false;
    std::uint64_t id = 0; // how frames refer to it (rendezvous, RMA); 0: no frame may
    peer* p = nullptr;
    // Receive side: the message it matched.
    std::size_t msg_length = 0;
    std::size_t expected = 0; // bytes that will land: min(msg_length, length); RMA write: acks to come
    std::size_t received = 0;
    std::uint64_t msg_tag = 0;
    std::uint64_t msg_data = 0;
    // A multi-receive buffer: bytes used so far.
    std::size_t consumed = 0;
    // RMA.
    std::uint64_t key = 0;
    std::uint64_t raddr = 0;
    // Copy of an injected payload (the caller's buffer is free at return).
    std::unique_ptr<std::uint8_t[]> owned;
    // A striped send's chunks still to be written (on any lane), and
    // whether its last chunk was written before them: the send completes,
    // and gives the application its buffer back, only once every chunk is
    // out (engine::frame_written).
    std::uint32_t chunks_unwritten = 0;
    bool done_deferred = false;
};

class operations {
public:
    operations() = default;
    operations(const operations&) = delete;
    operations& operator=(const operations&) = delete;

    // A fresh op, owned by the table until release().
    op* new_op();
    // The op is done (completed or failed): its id stops resolving, its
    // memory goes back to the pool.
    void release(op* o) noexcept;

    // Gives `o` an id that frames from its peer may name, and says what
    // they may name it for.
    void expect(op& o, op::waits what);
    // The op stops waiting for frames (its id no longer resolves).
    void settle(op& o) noexcept;
    // The op with this id, if it waits for `what` from peer `from`; null
    // otherwise (an unknown id, another peer's op, a stale frame).
    op* find(std::uint64_t id, op::waits what, const peer* from) const noexcept;

    // Every op waiting for frames from `p` (for failing them), and whether
    // any waits at all on a peer that has not failed (closing).
    std::vector<op*> waiting_on(const peer* p) const;
    template <class F> void for_each_waiting(F&& f) const
    {
        for (const auto& [id, o] : by_id_)
            f(*o);
    }
    bool any_waiting() const noexcept { return !by_id_.empty(); }
    std::size_t live() const noexcept { return live_; }

private:
    std::vector<std::unique_ptr<op>> all_; // every op ever made, live or pooled
    std::vector<op*> free_;
    std::unordered_map<std::uint64_t, op*> by_id_;
    std::uint64_t next_id_ = 1;
    std::size_t live_ = 0;
};

} // namespace hashi::fi
