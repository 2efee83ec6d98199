// SPDX-License-Identifier: BSD-3-Clause
// The receive backend: everything that happens to a frame between the
// socket and the application's buffer. An endpoint has exactly one.
//
// Implementations:
//   user_backend (recv/user_backend.hpp)  reads attached paths in user
//       space, restores sequence order (path/reorder.hpp), matches with the
//       user-space engine (match/match_engine.hpp) and copies payloads.
//   kernel_backend (recv/kernel_backend.hpp)  the o2g module (kmod/) does
//       the reading, matching and copying of eager tagged messages in the
//       TCP receive handler and reports completions through a ring; the
//       rest it hands back to a user_backend. FI_HASHI_RECV chooses
//       (recv/backend_choice.hpp).
//
// Contract: receives are posted, peeked, claimed and cancelled here with
// libfabric's semantics (fi_trecvmsg's FI_PEEK, FI_CLAIM, FI_DISCARD,
// FI_MULTI_RECV) and MPI's matching rules (match/match_backend.hpp);
// completions go to the endpoint's CQs and counters (engine/completions.hpp);
// frames that are not the backend's business (clear-to-send, RMA requests
// and acks, goodbyes) go up through receive_events. Progress thread only.
#pragma once

#include "transport/engine/peer_table.hpp"
#include "transport/wire/frame.hpp"

#include <rdma/fabric.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hashi::fi {

class path;

// A receive as libfabric posts it.
struct recv_request {
    const iovec* iov = nullptr;
    std::size_t count = 0;
    fi_addr_t src = FI_ADDR_UNSPEC;
    std::uint64_t tag = 0;
    std::uint64_t ignore = 0;
    bool tagged = false;
    std::uint64_t flags = 0; // FI_PEEK, FI_CLAIM, FI_DISCARD, FI_MULTI_RECV
    bool completion = true;
    void* context = nullptr;
};

// What the backend hands up to the endpoint's engine.
class receive_events {
public:
    // A frame for the sending side of the protocol (cts, rma_write_ack,
    // rma_read_req, rma_read_resp without payload, bye). False when it
    // closed the path (a frame that does not fit).
    virtual bool control_frame(path& via, peer& from, const wire::frame_header& h) = 0;
    // An RMA write landed (or was refused with `status`): acknowledge it.
    virtual void rma_write_landed(peer& from, const wire::frame_header& h, int status) = 0;
    // A matched rendezvous: tell the sender to go ahead with `bytes`.
    virtual void clear_to_send(peer& to, std::uint64_t sender_op, std::uint64_t receiver_op, std::uint64_t bytes) = 0;
    // An RMA read's data arrived in full: the read is done.
    virtual void rma_read_done(op& o) = 0;
    // The path broke (bad bytes, a reset, an end without goodbye).
    virtual void path_failed(path& p, const std::string& why) = 0;
    // The peer closed the path after its goodbye (or while we close).
    virtual void path_ended(path& p) = 0;
    // The endpoint is closing: a peer that closes without a goodbye is no
    // longer a failure.
    virtual bool closing() const noexcept = 0;

protected:
    ~receive_events() = default;
};

class receive_backend : public peer_failure_listener {
public:
    virtual ~receive_backend() = default;

    // The path's handshake is done: its frames are the backend's from now
    // on (bytes already buffered in the path included).
    virtual void attach(path& p) = 0;
    // The path is closing (its descriptor may be closed already): forget it.
    virtual void detach(path& /*p*/) {}
    // The path is readable (or has buffered bytes): read and deliver.
    // Returns whether anything moved.
    virtual bool on_readable(path& p) = 0;
    // Completions produced outside on_readable (a kernel ring); false when
    // there were none.
    virtual bool poll() = 0;

    virtual ssize_t post(const recv_request& r) = 0;
    virtual ssize_t cancel(void* context) = 0;

    // The peer was just numbered in the AV: what it sent so far may now
    // match directed receives.
    virtual void renumber(peer& p) = 0;
    // The AV indices directed receives wait on (liveness).
    virtual void directed_sources(std::vector<fi_addr_t>& out) const = 0;
    // Operations the backend still holds at close (freed with the op table).
    virtual std::size_t posted() const noexcept = 0;
    // Messages it keeps that no receive has taken yet: unexpected ones and
    // those an FI_PEEK|FI_CLAIM reserved. The statistics already count this
    // per peer (peer_stats::unexpected_now); the total is asked here so that
    // every backend answers it, also one whose queue lives in the kernel
    // (o2g), and so that the match vectors' depth checks run through this
    // interface (tests/unit/transport/test_backend_vectors.cpp).
    virtual std::size_t unexpected() const noexcept = 0;
};

} // namespace hashi::fi
