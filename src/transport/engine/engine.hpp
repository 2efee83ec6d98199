// SPDX-License-Identifier: BSD-3-Clause
// The engine of one endpoint: the transport below the libfabric facade
// (endpoint.hpp), put together from its layers and driving them.
//
//   endpoint (facade)      libfabric objects and ops tables only
//   engine                 this file: the send protocol (eager, rendezvous,
//                          RMA: engine/send_protocol.cpp), the answers to
//                          control frames, failure fan-out, close
//   peer_table             peers, identities, failure listeners
//   router                 how a peer is reached, which path a frame takes
//   send_scheduler         per peer: control lane, message and data lanes,
//                          cursors over large transfers
//   path_manager, path     TCP connections: connect, accept, handshake,
//                          vectored writes through the pacer hook
//   receive_backend        reading, ordering, matching, delivery
//                          (user_backend today; o2g next)
//   progress_loop          one epoll set and the timers
//
// Everything runs on the application's thread inside libfabric calls
// (FI_THREAD_DOMAIN, manual progress), so nothing here is locked. The
// liveness thread (engine/liveness.hpp) owns only its liveness_monitor and
// never touches the engine's state. The domain's flusher thread
// (engine/held_flusher.hpp) calls flush_held(), and only while the
// application is outside every call into the domain (domain_gate.hpp).
#pragma once

#include "transport/engine/completions.hpp"
#include "transport/engine/job_key.hpp"
#include "transport/engine/liveness.hpp"
#include "transport/engine/operations.hpp"
#include "transport/engine/peer_table.hpp"
#include "transport/engine/progress.hpp"
#include "transport/engine/read_first.hpp"
#include "transport/engine/router.hpp"
#include "transport/engine/send_coalescing.hpp"
#include "transport/engine/wan_pacing.hpp"
#include "transport/path/path_manager.hpp"
#include "transport/recv/backend_choice.hpp"
#include "transport/recv/receive_backend.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hashi::fi {

struct domain_obj;

struct engine_settings {
    std::uint64_t job_id = 0;
    std::uint16_t cluster_id = 0;
    std::size_t eager_limit = 32768; // FI_HASHI_EAGER_SIZE
    std::size_t chunk_size = 1 << 20; // FI_HASHI_CHUNK_SIZE
    // FI_HASHI_STRIPE_MIN: transfers to a peer behind several trunks at
    // least this large are striped over all of them; 0 turns striping off.
    std::size_t stripe_min = 64 << 10;
    std::uint64_t close_timeout_s = 30; // FI_HASHI_CLOSE_TIMEOUT
    protection_policy protection; // FI_HASHI_WAN_PROTECTION, FI_HASHI_PROTECT_LOCAL
    std::vector<relay_endpoint> relays; // HASHI_RELAYS: the local relay set, empty when direct
    recv_backend_kind recv_backend = recv_backend_kind::user; // FI_HASHI_RECV
    bool read_first = false; // FI_HASHI_READ_FIRST=1: read the busiest path before epoll (engine/read_first.hpp)
    bool send_coalescing = true; // FI_HASHI_SEND_COALESCE=0: write every send at once (engine/send_coalescing.hpp)
};

class engine final : public path_owner,
                     public path_events,
                     public receive_events,
                     public peer_failure_listener {
public:
    // Takes the bound listening socket, and the liveness thread's UDP socket
    // (-1 when liveness is off).
    engine(domain_obj& domain, const bindings& b, const std::size_t& min_multi_recv, const engine_settings& s,
        const endpoint_identity& self, job_key key, int listen_fd, std::optional<liveness_settings> live,
        int udp_fd, wan_pacing pacing);
    ~engine();
    engine(const engine&) = delete;
    engine& operator=(const engine&) = delete;

    // Data operations (send_protocol.cpp; receives go to the backend).
    // Return 0, or a negative FI_E* code; -FI_EAGAIN when the send queues
    // are full.
    ssize_t post_send(const iovec* iov, std::size_t count, fi_addr_t dest, std::uint64_t tag, std::uint64_t data,
        bool has_data, bool tagged, bool inject, bool completion, void* context);
    ssize_t post_recv(const recv_request& r);
    ssize_t cancel(void* context)
    {
        release_held();
        return backend_->cancel(context);
    }
    ssize_t post_rma(op::kind k, const iovec* iov, std::size_t count, fi_addr_t peer_addr, std::uint64_t raddr,
        std::uint64_t key, bool inject, bool completion, void* context);

    bool progress();
    // The flusher's turn (engine/held_flusher.hpp; inside the domain's gate):
    // writes what coalescing has held since `now - older_than_ns` or
    // earlier; returns when the oldest send still held was held, 0: none.
    std::uint64_t flush_held(std::uint64_t now, std::uint64_t older_than_ns);
    void on_av_insert(fi_addr_t index, const endpoint_address& a);
    // Delivers what is queued and says goodbye, bounded by the close timeout.
    void drain_and_close();
    void write_stats() const; // stats.cpp, also every stats_period_ns from progress()

    const endpoint_identity& self() const noexcept { return self_; }
    bool random_key() const noexcept { return key_.is_random(); }

    // path_owner
    void on_path_events(path& c, std::uint32_t events) override;
    // path_events
    void path_open(peer& p, path& c) override;
    void path_readable(path& c) override;
    void path_failed(path& c, const std::string& why) override;
    // receive_events
    bool control_frame(path& via, peer& from, const wire::frame_header& h) override;
    void rma_write_landed(peer& from, const wire::frame_header& h, int status) override;
    void clear_to_send(peer& to, std::uint64_t sender_op, std::uint64_t receiver_op, std::uint64_t bytes) override;
    void rma_read_done(op& o) override;
    void path_ended(path& c) override;
    bool closing() const noexcept override { return closing_; }
    // peer_failure_listener: the send side and the operations waiting on it.
    void peer_failed(peer& p) override;

private:
    peer* admit(const iovec* iov, std::size_t count, fi_addr_t dest, bool inject, std::size_t& len, ssize_t& err);
    void queue(peer& p, send_scheduler::lane l, tx_frame&& f);
    void queue(peer& p, send_scheduler::lane l, transfer&& t);
    void queue_control(peer& p, wire::frame_type type, std::uint64_t a, std::uint64_t b, std::uint64_t c);
    // Every call into the engine but an eager send starts with this: writes
    // what send coalescing holds (engine/send_coalescing.hpp). The held
    // frames sit in their peers' queues like any other; only the flush waits.
    void release_held()
    {
        if (coalescing_.on_other_call())
            write_held();
    }
    void write_held();
    void write_held_peers();
    // `p` has a send held from `now` on; the first of a batch tells the flusher.
    void hold_for(peer& p, std::uint64_t now);
    // Commits the peer's queued frames to its paths and writes them: every
    // frame may go on lane 0, chunks of striped transfers on any lane.
    bool flush(peer& p);
    // `max_frames`: how many frames it may commit in this call (a striped
    // peer's lanes take turns, one frame each); `committed_bytes`, when
    // given, grows by the bytes it committed.
    bool flush_path(peer& p, path& c, const stripe_policy& stripes, std::size_t max_frames,
        std::size_t* committed_bytes = nullptr);
    // At close: a goodbye on every stripe lane, so each ends cleanly.
    void bye_on_stripe_lanes(peer& p);
    void frame_written(peer& p, tx_frame& f);
    // Gives each sending WAN socket its part of the process's WAN share
    // (wan_pacing.hpp), and arms a look for when one stops sending.
    void spread_wan_share();
    void arm_wan_spread();
    // Drops the WAN sockets done sending (the kernel asked about those past
    // their estimate); true when the split changed.
    bool expire_wan_senders(std::uint64_t now);
    // The open path a sending socket names, or null.
    path* sending_path(const sending_sockets::key& k);
    bool any_queued() const;
    bool everything_acknowledged() const;

    // Liveness (waiting.cpp): publish the peers this endpoint waits on, fail
    // those the liveness thread found silent.
    void liveness_progress();
    // FI_HASHI_STATS_DIR: rewrites this endpoint's statistics file when
    // stats_period_ns have passed, so a running job can be watched (stats.cpp).
    void stats_progress();
    static constexpr std::uint64_t stats_period_ns = 2'000'000'000;
    void apply_liveness_verdict(const endpoint_address::bytes& key, const std::string& why);
    std::vector<liveness_monitor::watched_peer> waited_peers() const;

    domain_obj& domain_;
    const bindings& b_;
    const engine_settings settings_;
    const endpoint_identity self_;
    const job_key key_;
    progress_loop loop_;
    router router_; // before peers_, which asks it how new peers are reached
    peer_table peers_;
    operations ops_;
    completions done_;
    std::unique_ptr<receive_backend> backend_;
    // Null unless the backend reads the sockets itself (user_backend) and
    // FI_HASHI_READ_FIRST is on: then progress() reads the busiest path
    // before asking epoll.
    std::unique_ptr<read_first<path>> read_first_;
    // Null unless the backend is the o2g module's (kernel_backend) and
    // FI_HASHI_O2G_RING_FIRST is on: then, while the module's completion
    // ring keeps bringing receives, progress() reads it first and asks
    // epoll only every few rounds (the same policy, with the ring as the
    // hot source), so a received message costs no system call.
    std::unique_ptr<read_first<receive_backend>> ring_first_;
    path_manager paths_;
    wan_pacing pacing_;
    no_pacer no_pacing_;
    std::uint64_t wan_spread_at_ = 0; // the armed look of spread_wan_share (0: none)
    // Bytes this process has committed to striped peers' lanes, by trunk
    // (the local relay's number): flush() offers the next chunk to the lane
    // of the least loaded trunk.
    std::array<std::uint64_t, wire::max_lanes> trunk_bytes_ {};
    std::size_t tx_queued_ = 0; // send queue entries of every peer (the bound of provider_tx_size)
    bool closing_ = false;
    send_coalescing coalescing_;
    std::vector<peer*> held_peers_; // peers with frames coalescing holds (peer::held)
    std::unique_ptr<receive_backend> make_backend(domain_obj& domain, const std::size_t& min_multi_recv);
    void close_path(path& c); // the backend forgets it first
    // Liveness (engine/liveness.hpp): null when FI_HASHI_PEER_TIMEOUT=0.
    std::unique_ptr<liveness_monitor> liveness_;
    std::uint64_t next_liveness_scan_ns_ = 0; // monotonic_ns()
    const std::string stats_dir_; // FI_HASHI_STATS_DIR, empty when unset
    std::uint64_t next_stats_write_ns_ = 0; // monotonic_ns()
    mutable bool stats_warned_ = false;
};

} // namespace hashi::fi
