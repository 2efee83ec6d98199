// SPDX-License-Identifier: BSD-3-Clause
// A path: one TCP connection to a peer, and everything that belongs to the
// connection rather than to the peer: its descriptor and epoll
// registration, the handshake state (path/handshake.cpp), the receive
// buffer the reader cuts frames from (path/stream_parser.hpp), a payload
// being read straight into memory, and the frames committed to it by the
// peer's send scheduler, written with gathering sendmsg.
//
// Threads: the progress thread only.
#pragma once

#include "transport/engine/job_key.hpp"
#include "transport/engine/progress.hpp"
#include "transport/secure/byte_stream.hpp"
#include "transport/secure/protection.hpp"
#include "transport/send/pacer.hpp"
#include "transport/send/tx_frame.hpp"
#include "transport/wire/frame.hpp"
#include "transport/wire/handshake.hpp"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace hashi::fi {

struct peer;

// Whoever owns the paths is told about their events (engine.cpp).
class path_owner {
public:
    virtual void on_path_events(class path& p, std::uint32_t events) = 0;

protected:
    ~path_owner() = default;
};

class path final : public event_handler {
public:
    // The handshake (path/handshake.cpp) moves a path through these.
    enum class state : std::uint8_t {
        dialing, // connector: non-blocking connect in progress
        await_route_challenge, // connector through a relay: route_request sent (path/relay_dial.cpp)
        await_route_result, // connector through a relay: route_proof sent
        await_challenge, // connector: hello sent
        await_hello, // acceptor: accepted, nothing proved yet
        await_proof, // acceptor: challenge sent
        open, // frames flow
        closed,
    };

    path(int fd, bool outgoing, path_owner& owner) : fd_(fd), outgoing_(outgoing), owner_(owner) {}
    ~path() { close(); }
    path(const path&) = delete;
    path& operator=(const path&) = delete;

    int fd() const noexcept { return fd_; }
    bool outgoing() const noexcept { return outgoing_; }
    void on_events(std::uint32_t events) override { owner_.on_path_events(*this, events); }

    // Joins the progress loop; `reads` false for the sending end of the
    // loopback pair to self, which only writes.
    void watch(progress_loop& loop, bool reads, bool writes);
    // Arms or disarms EPOLLOUT.
    void want_write(bool on);
    void close() noexcept; // idempotent; the registration goes with the descriptor

    // Handshake bytes (written before any frame). Returns false when the
    // socket would block (EPOLLOUT armed) or failed (`error` set).
    bool flush_handshake(std::string& error);

    enum class write_result : std::uint8_t { done, blocked, paced, failed };
    // Writes committed frames in one gathering sendmsg per round, as many as
    // the pacer allows; `written(frame)` is called for each frame fully
    // written, in order. On `paced`, nothing more may leave before
    // pace.ready_at(now).
    template <class F> write_result write(pacer& pace, std::uint64_t now, std::string& error, F&& written);
    // Bytes written but not yet acknowledged by the peer's kernel
    // (SIOCOUTQ), or still sealed in the protected stream.
    std::size_t unsent_bytes() const noexcept;
    // Bytes the kernel holds that it has not sent yet (SIOCOUTQNSD).
    std::size_t kernel_unsent_bytes() const noexcept;

    // Reading, through the protected stream when there is one (like recv and
    // readv; -1 with EBADMSG when the peer's bytes fail authentication).
    ssize_t read_bytes(void* buf, std::size_t len);
    ssize_t read_into(const iovec* iov, int count);
    // At most this many more bytes are read from the socket (reads past it
    // fail with EAGAIN): the kernel receive backend lets user space read
    // one frame and not a byte of the next, which is the module's.
    static constexpr std::size_t unlimited = ~std::size_t {0};
    std::size_t read_budget = unlimited;
    // Input the stream has decoded that epoll cannot see.
    bool buffered_input() const { return stream && stream->buffered_input(); }
    // Why the last read failed, for messages.
    std::string read_error(int err) const;
    std::size_t committed_bytes() const noexcept { return committed_bytes_; }

    state st = state::closed;
    peer* p = nullptr; // null for an accepted path until the connector's proof checked
    bool rx_only = false; // the receiving end of the loopback pair to self
    // Which of its peer's paths this is (the hello's lane): 0 carries
    // everything, 1.. are stripe lanes through the other trunks, which
    // carry chunks of large transfers only (engine::flush).
    std::uint8_t lane = 0;
    // The reorder stage was full when this path's next frame came: read it
    // again once the stage moved (user_backend::poll).
    bool stalled = false;
    bool attached = false; // the receive backend reads it (after the handshake)
    handshake_transcript hs {};
    std::uint64_t hs_deadline_ns = 0; // acceptor: the handshake must be done by then
    // A connector's path through a local relay (path/relay_dial.cpp): the
    // relay, the route handshake's transcript, and by when the relay must
    // have answered the route.
    struct relay_hop {
        bool active = false;
        std::uint32_t ipv4 = 0; // host order
        std::uint16_t port = 0;
        std::uint8_t trunk = 0;
        relay_route_transcript hs {};
        std::uint64_t deadline_ns = 0;
    } relay;
    bool ack_pending = false; // connector: open, the acceptor's hello_ack not read yet
    std::vector<std::uint8_t> hs_out;
    std::size_t hs_sent = 0;
    // Receive buffer: frames are parsed from rx[head, tail).
    std::vector<std::uint8_t> rx;
    std::size_t head = 0, tail = 0;
    bool bye_received = false;
    bool eof = false;
    std::uint64_t pacing_generation = 0; // the WAN share last applied (wan_pacing)
    bool wan_tuned = false; // the WAN socket options set (wan_pacing)
    // Protection (src/transport/secure): decided when the handshake is done;
    // while `securing`, the stream's own handshake runs and no frame moves.
    secure::protection protect = secure::protection::none;
    bool securing = false;
    std::unique_ptr<secure::byte_stream> stream;
    // Frames committed by the send scheduler, numbered, in wire order.
    std::deque<tx_frame> wq;
    // A payload being read straight into memory (rendezvous data, RMA).
    struct direct_sink {
        bool active = false;
        wire::frame_header h {};
        std::array<iovec, provider_iov_limit> iov {};
        std::size_t iov_count = 0;
        std::size_t remaining = 0; // bytes still to read, including discarded ones
        std::size_t discard = 0; // bytes to drop after the iov is full
        // The destination is an address the peer chose inside a region that
        // spans the address space (MPICH's dynamic windows register NULL,
        // UINTPTR_MAX): copy through the kernel, which answers EFAULT for an
        // unmapped address instead of crashing the process.
        bool checked_copy = false;
        int status = 0; // a refused RMA write: the status its ack carries
    } sink;

    void commit(std::size_t bytes) noexcept { committed_bytes_ += bytes; }

private:
    int fd_;
    bool outgoing_;
    path_owner& owner_;
    registration reg_;
    bool reads_ = true;
    bool want_write_ = false;
    std::size_t committed_bytes_ = 0; // bytes in wq not yet written
};

template <class F>
path::write_result path::write(pacer& pace, std::uint64_t now, std::string& error, F&& written)
{
    if (stream && stream->output_pending() && stream->flush() != 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            want_write(true);
            return write_result::blocked;
        }
        error = std::string("write failed: ") + std::strerror(errno);
        return write_result::failed;
    }
    while (!wq.empty()) {
        std::size_t budget = pace.allowance(now);
        if (budget == 0)
            return write_result::paced;
        // Gather as many committed frames as fit in one sendmsg (and the
        // pacer's budget).
        iovec iov[64];
        int n = 0;
        std::size_t want = 0;
        for (auto it = wq.begin();
             it != wq.end() && n < 64 - static_cast<int>(provider_iov_limit) - 1 && want < budget; ++it) {
            std::size_t skip = it->sent;
            if (skip < wire::header_size) {
                iov[n++] = {it->hdr.data() + skip, wire::header_size - skip};
                want += wire::header_size - skip;
                skip = 0;
            } else {
                skip -= wire::header_size;
            }
            for (std::size_t i = 0; i < it->iov_count; ++i) {
                const std::size_t l = it->iov[i].iov_len;
                if (skip >= l) {
                    skip -= l;
                    continue;
                }
                iov[n++] = {static_cast<std::uint8_t*>(it->iov[i].iov_base) + skip, l - skip};
                want += l - skip;
                skip = 0;
            }
        }
        // Trim the gather list to the pacer's budget.
        if (want > budget) {
            std::size_t keep = 0;
            int k = 0;
            while (k < n && keep + iov[k].iov_len <= budget)
                keep += iov[k++].iov_len;
            if (k < n && keep < budget) {
                iov[k].iov_len = budget - keep;
                keep = budget;
                ++k;
            }
            n = k;
            want = keep;
        }
        ssize_t w;
        if (stream) {
            w = stream->writev(iov, n);
        } else {
            msghdr mh {};
            mh.msg_iov = iov;
            mh.msg_iovlen = static_cast<std::size_t>(n);
            w = ::sendmsg(fd_, &mh, MSG_NOSIGNAL);
        }
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                want_write(true);
                return write_result::blocked;
            }
            error = std::string("write failed: ") + std::strerror(errno);
            return write_result::failed;
        }
        pace.consumed(static_cast<std::size_t>(w), now);
        committed_bytes_ -= static_cast<std::size_t>(w);
        std::size_t left = static_cast<std::size_t>(w);
        while (left > 0 || (!wq.empty() && wq.front().sent == wq.front().total())) {
            tx_frame& t = wq.front();
            const std::size_t take = std::min(left, t.total() - t.sent);
            t.sent += take;
            left -= take;
            if (t.sent < t.total())
                break;
            tx_frame f = std::move(wq.front());
            wq.pop_front();
            written(f);
        }
        if (static_cast<std::size_t>(w) < want || (stream && stream->output_pending())) {
            want_write(true);
            return write_result::blocked;
        }
    }
    want_write(false);
    return write_result::done;
}

} // namespace hashi::fi
