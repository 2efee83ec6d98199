// SPDX-License-Identifier: BSD-3-Clause
// The RDM endpoint: the object every data operation goes through.
//
// State is split as the protocol needs it:
//   op          an application operation in flight (send, receive, RMA);
//   tx_item     bytes queued for one peer: a frame header plus the payload,
//               which stays in application memory until written;
//   peer        one remote endpoint: its address, its ordered send queue,
//               sequence numbers, its connection, statistics;
//   connection  one TCP socket and its receive state machine.
// Everything runs on the application's thread inside libfabric calls
// (FI_THREAD_DOMAIN, manual progress), so nothing here is locked. The one
// other thread, the liveness thread (engine/liveness.hpp), owns only its
// liveness_monitor and never touches the endpoint's state.
#pragma once

#include "transport/address.hpp"
#include "transport/engine/job_key.hpp"
#include "transport/engine/log_limiter.hpp"
#include "transport/engine/liveness.hpp"
#include "transport/engine/wan_pacing.hpp"
#include "transport/info.hpp"
#include "transport/match/match_engine.hpp"
#include "transport/objects.hpp"
#include "transport/wire/frame.hpp"
#include "transport/wire/handshake.hpp"

#include <rdma/fi_endpoint.h>
#include <sys/uio.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace hashi::fi {

struct peer;
struct connection;

struct op {
    enum class kind : std::uint8_t { send, recv, multi_recv, read, write };
    kind k = kind::send;
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
    std::uint64_t id = 0; // how frames refer to it (rendezvous, RMA)
    peer* p = nullptr;
    // Receive side: the message it matched.
    std::size_t msg_length = 0;
    std::size_t expected = 0; // bytes that will land: min(msg_length, length)
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
};

struct tx_item {
    wire::header_bytes hdr {};
    std::array<iovec, provider_iov_limit> iov {};
    std::uint8_t iov_count = 0;
    std::size_t total = 0; // header plus payload
    std::size_t sent = 0;
    std::unique_ptr<std::uint8_t[]> owned; // payload the item owns (inject, read response copies)
    op* done = nullptr; // completed once the item is written (eager send, last data chunk)
    std::size_t payload_bytes = 0; // for statistics
};

struct peer_stats {
    std::uint64_t tx_bytes = 0, tx_msgs = 0, rx_bytes = 0, rx_msgs = 0;
    std::uint64_t unexpected_now = 0, unexpected_max = 0;
    std::uint64_t rendezvous = 0, rma_ops = 0;
};

struct peer {
    endpoint_address addr;
    endpoint_address::bytes key {};
    fi_addr_t fi_addr = FI_ADDR_NOTAVAIL; // FI_ADDR_NOTAVAIL until inserted in the AV
    bool is_self = false;
    connection* conn = nullptr; // established: frames go out here
    connection* dialing = nullptr; // our own connection attempt, before the handshake is done
    int redials = 0; // attempts whose connection was closed during the handshake
    std::uint64_t redial_at_ns = 0; // when to dial again (0: not waiting)
    std::deque<tx_item> txq;
    std::uint32_t tx_seq = 1; // next sequence number we send
    std::uint32_t rx_seq = 1; // next sequence number we expect
    std::string host; // from the handshake, for messages
    std::uint32_t pid = 0;
    bool failed = false;
    std::string failure;
    peer_stats stats;
    std::vector<std::uint64_t> unexpected_cookies; // while fi_addr is unknown, for renumbering
    std::string describe() const;
};

struct connection {
    // The handshake (engine/handshake.cpp) moves a connection through these.
    enum class state : std::uint8_t {
        dialing, // connector: non-blocking connect in progress
        await_challenge, // connector: hello sent
        await_hello, // acceptor: accepted, nothing proved yet
        await_proof, // acceptor: challenge sent
        open, // frames flow
        closed,
    };
    int fd = -1;
    state st = state::closed;
    bool outgoing = false;
    peer* p = nullptr;
    bool rx_only = false; // the receiving end of the loopback pair to self
    // Handshake state. Until the proof checks, an accepted connection has no
    // peer (p == nullptr): what it claims is only remembered here.
    handshake_transcript hs {};
    std::uint64_t hs_deadline_ns = 0; // acceptor: the handshake must be done by then
    bool ack_pending = false; // connector: open, the acceptor's hello_ack not read yet
    // Receive buffer: frames are parsed from rx[head, tail).
    std::vector<std::uint8_t> rx;
    std::size_t head = 0, tail = 0;
    // Handshake bytes to write before any frame.
    std::vector<std::uint8_t> hs_out;
    std::size_t hs_sent = 0;
    bool want_write = false; // EPOLLOUT armed
    bool bye_received = false;
    bool eof = false;
    std::uint64_t pacing_generation = 0; // the WAN share last applied (wan_pacing)
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
    } sink;
};

// Points `out` at bytes [offset, offset + len) of the buffer described by
// `iov`; returns the number of entries used (ep_frames.cpp).
std::size_t slice(const iovec* iov, std::size_t count, std::size_t offset, std::size_t len,
    std::array<iovec, provider_iov_limit>& out);

class endpoint {
public:
    endpoint(domain_obj* domain, const fi_info* info, void* context);
    ~endpoint();
    endpoint(const endpoint&) = delete;
    endpoint& operator=(const endpoint&) = delete;

    fid_box<fid_ep, endpoint> box {};
    domain_obj* domain;

    // Lifecycle (endpoint.cpp).
    int bind(fid* bfid, std::uint64_t flags);
    int enable();
    int close();
    int getname(void* addr, std::size_t* addrlen) const;
    int setopt(int level, int optname, const void* optval, std::size_t optlen);
    int getopt(int level, int optname, void* optval, std::size_t* optlen) const;
    void on_av_insert(fi_addr_t index, const endpoint_address& a);

    // Data operations (ep_send.cpp, ep_recv.cpp, ep_rma.cpp). Return 0, or a
    // negative FI_E* code; -FI_EAGAIN when the send queue is full.
    ssize_t post_send(const iovec* iov, std::size_t count, fi_addr_t dest, std::uint64_t tag, std::uint64_t data,
        bool has_data, bool tagged, bool inject, bool completion, void* context);
    ssize_t post_recv(const iovec* iov, std::size_t count, fi_addr_t src, std::uint64_t tag, std::uint64_t ignore,
        bool tagged, std::uint64_t flags, bool completion, void* context);
    ssize_t cancel(void* context);
    ssize_t post_rma(op::kind k, const iovec* iov, std::size_t count, fi_addr_t peer_addr, std::uint64_t raddr,
        std::uint64_t key, bool inject, bool completion, void* context);

    // Progress (engine/progress.cpp).
    bool progress();

    bool tx_completion_default() const noexcept { return !tx_selective_ || (tx_op_flags_ & FI_COMPLETION); }
    bool rx_completion_default() const noexcept { return !rx_selective_ || (rx_op_flags_ & FI_COMPLETION); }
    bool selective_tx() const noexcept { return tx_selective_; }
    bool selective_rx() const noexcept { return rx_selective_; }

    // Statistics (stats.cpp).
    void write_stats() const;

private:
    // Connections (engine/connection.cpp).
    peer* peer_for_send(fi_addr_t dest, int& err);
    peer* admit(const iovec* iov, std::size_t count, fi_addr_t dest, bool inject, std::size_t& len, ssize_t& err);
    peer& peer_by_address(const endpoint_address& a);
    void dial(peer& p);
    void accept_pending();
    void handle_events(connection& c, std::uint32_t events);
    bool read_from(connection& c);
    bool flush(peer& p);
    bool flush_handshake(connection& c);
    void arm_write(connection& c, bool on);
    void close_connection(connection& c);
    void connection_failed(connection& c, const std::string& why);
    void fail_peer(peer& p, const std::string& why);
    void attach(peer& p, connection& c);
    bool redial_due(std::uint64_t now);
    bool timers_due(std::uint64_t now);

    // The handshake (engine/handshake.cpp).
    void send_hello(connection& c);
    bool expected_handshake_frame(const connection& c, wire::frame_type t) const noexcept;
    void on_handshake_frame(connection& c, const wire::frame_header& h, const std::uint8_t* payload);
    void on_hello(connection& c, const wire::hello& h);
    void on_challenge(connection& c, const wire::challenge& ch);
    void on_proof(connection& c, const wire::proof& pr);
    void on_hello_ack(connection& c, const wire::hello_ack& a);
    void refuse(connection& c, const char* why);
    void handshake_closed(connection& c, const std::string& why);
    void evict_stale_handshakes(std::uint64_t now, bool make_room);
    void setup_self();
    std::size_t unsent_bytes(const connection& c) const;

    // Liveness (engine/waiting.cpp), progress thread: publish the peers this
    // endpoint waits on, fail those the liveness thread found silent.
    void liveness_progress();
    void apply_liveness_verdict(const endpoint_address::bytes& key, const std::string& why);
    std::vector<liveness_monitor::watched_peer> waited_peers() const;

    // Frames (ep_frames.cpp).
    bool handle_inline_frame(connection& c, const wire::frame_header& h, const std::uint8_t* payload);
    bool begin_direct(connection& c, const wire::frame_header& h);
    void end_direct(connection& c);
    void queue_frame(peer& p, const wire::frame_header& h, const iovec* iov, std::size_t iov_count,
        std::unique_ptr<std::uint8_t[]> owned, op* done);
    void queue_control(
        peer& p, wire::frame_type type, std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t tag = 0);

    // Receive-side matching (ep_recv.cpp).
    void deliver_eager(peer& p, const wire::frame_header& h, const std::uint8_t* payload, bool tagged);
    void deliver_rts(peer& p, const wire::frame_header& h);
    void matched(const match::match_result& m, bool tagged);
    void start_rendezvous_recv(op& o, std::uint64_t sender_op, peer& p);
    void pack_multi_recv(op& o, const std::uint8_t* payload, std::size_t len, bool has_data, std::uint64_t data);

    // Completions.
    void complete_send(op& o);
    void complete_recv(op& o);
    void complete_rma(op& o, int status);
    void complete_error(op& o, int err, std::size_t olen, cq_obj* cq);
    void post_cq(cq_obj* cq, const op& o, std::uint64_t flags, std::size_t len, void* buf);

    op* new_op();
    void free_op(op* o);

    std::uint64_t tx_op_flags_ = 0, rx_op_flags_ = 0;
    bool tx_selective_ = false, rx_selective_ = false;
    bool enabled_ = false;
    av_obj* av_ = nullptr;
    cq_obj* tx_cq_ = nullptr;
    cq_obj* rx_cq_ = nullptr;
    cntr_obj* read_cntr_ = nullptr;
    cntr_obj* write_cntr_ = nullptr;
    cntr_obj* send_cntr_ = nullptr;
    cntr_obj* recv_cntr_ = nullptr;
    std::size_t min_multi_recv_ = 0;

    endpoint_address self_addr_;
    endpoint_address::bytes self_key_ {};
    std::uint64_t job_id_ = 0;
    std::optional<job_key> key_;
    std::string host_;
    int listen_fd_ = -1;
    bool listen_paused_ = false; // out of descriptors: accepts wait until listen_resume_ns_
    std::uint64_t listen_resume_ns_ = 0;
    // An accepted connection has this long to prove itself, and at most this
    // many are held at once (engine/handshake.cpp says why).
    static constexpr std::uint64_t handshake_timeout_ns = 10'000'000'000ull;
    static constexpr std::size_t max_inbound_handshakes = 64;
    std::size_t handshakes_inbound_ = 0; // accepted connections not yet proved
    std::uint64_t handshake_check_ns_ = 0; // next time to look for expired handshakes
    std::vector<peer*> redial_wait_; // peers whose connection attempt is to be retried
    log_limiter refusals_; // strangers refused
    log_limiter accept_failures_ {1}; // accept errors (out of descriptors): once a second
    int epoll_fd_ = -1;

    // Peers by fi_addr (index into the AV) and by address bytes. Peers not
    // (yet) in the AV live only in the second map.
    std::vector<peer*> by_index_;
    std::map<endpoint_address::bytes, fi_addr_t> av_index_; // address -> first fi_addr it was inserted at
    std::map<endpoint_address::bytes, std::unique_ptr<peer>> peers_;
    std::vector<std::unique_ptr<connection>> conns_;
    std::vector<connection*> dead_conns_; // closed this round, freed at the end of progress

    match::match_engine tagged_;
    match::match_engine untagged_;
    // Unexpected messages, by cookie (the match engine holds descriptors).
    struct unexpected_msg {
        peer* p = nullptr;
        bool rendezvous = false;
        std::uint64_t sender_op = 0; // rendezvous: the sender's op id
        std::vector<std::uint8_t> payload; // eager
        bool has_data = false;
    };
    std::unordered_map<std::uint64_t, std::unique_ptr<unexpected_msg>> unexpected_;
    std::uint64_t next_cookie_ = 1;

    // Operations the peer refers to by id.
    std::unordered_map<std::uint64_t, op*> rdv_sends_; // RTS sent, waiting for CTS
    std::unordered_map<std::uint64_t, op*> rdv_recvs_; // CTS sent, receiving data
    std::unordered_map<std::uint64_t, op*> rma_ops_; // waiting for an ack or read data
    std::uint64_t next_op_id_ = 1;
    std::unordered_map<void*, op*> posted_; // posted receives by context, for fi_cancel
    std::vector<op*> free_ops_;
    std::size_t ops_live_ = 0;
    std::size_t tx_queued_ = 0; // items in all send queues
    std::uint64_t close_timeout_s_ = 30; // FI_HASHI_CLOSE_TIMEOUT
    std::size_t eager_limit_;
    std::size_t chunk_size_;
    wan_pacing pacing_;
    bool closing_ = false;

    // Liveness (engine/liveness.hpp): null when FI_HASHI_PEER_TIMEOUT=0.
    std::unique_ptr<liveness_monitor> liveness_;
    std::uint64_t next_liveness_scan_ns_ = 0; // monotonic_ns()
};

} // namespace hashi::fi
