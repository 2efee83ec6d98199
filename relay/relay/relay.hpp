// SPDX-License-Identifier: BSD-3-Clause
// impi-relay: the gateway of one cluster whose nodes the other clusters
// cannot reach (relay/README.md, "Relays").
//
// One relay per gateway, relay 0 the leader. Each relay
//   - joins impi-server over the WAN (proves the job's secret, HXRJ) and,
//     when the startup completes, learns the job id and every relay of the
//     job (HXRT); the job key follows from the secret and the job id, as
//     in every mpiexec;
//   - connects one trunk to each relay of another cluster that it pairs
//     with (relay i of cluster K with relay i mod G' of cluster K', the
//     cluster with the higher number dialing): mutual proof of the job key,
//     then a protected stream (integrity, or TLS 1.3) of multiplexed frames
//     (trunk_wire.hpp);
//   - on its LAN port, serves its cluster: an mpiexec's control connection
//     (IMPI, starts with AUTH) is carried to impi-server as it is; a rank's
//     route (starts with HRRQ) is authenticated with the job key, opened
//     through the trunk to the destination's cluster, whose relay connects
//     to the destination rank, and then carries the rank's bytes both ways;
//   - forwards the ranks' liveness datagrams (UDP, same port number) the
//     same way.
// Nothing is forwarded before it proved it belongs to the job. Memory is
// bounded: a stream holds at most `window` bytes the other side has not
// taken (credits), a trunk's output queue stops its streams' reading when
// it is long, and the numbers of streams and of connections in their
// handshake are capped.
//
// A trunk that dies (closed, bad bytes, silent for trunk_timeout), or one
// that cannot be set up, fails the job: the relay tells impi-server why
// (HXAB), which tells every cluster, and exits 1. The relay exits 0 when the
// server says the job ended (FINI).
//
// One thread; objects are destroyed only between rounds of the event loop.
#pragma once

#include "relay/impi/auth.hpp"
#include "relay/impi/channel.hpp"
#include "relay/impi/relay_tables.hpp"
#include "relay/relay/byte_buffer.hpp"
#include "relay/relay/event_loop.hpp"
#include "relay/relay/trunk_pacing.hpp"
#include "relay/relay/trunk_queue.hpp"
#include "relay/relay/trunk_wire.hpp"
#include "transport/address.hpp"
#include "transport/engine/job_key.hpp"
#include "transport/secure/byte_stream.hpp"
#include "transport/secure/protection.hpp"
#include "transport/tcp_telemetry.hpp"
#include "transport/wire/relay_route.hpp"

#include <sys/types.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hashi::relay {

using clock = std::chrono::steady_clock;

struct relay_config {
    int id = 0; // -relay ID: 0 is the leader
    int count = 1; // --relays N: how many relays this cluster has
    int cluster = 0; // --cluster K: the -client number of the cluster it serves
    std::string server; // impi-server's addr:port
    std::uint32_t lan_ipv4 = 0; // where this cluster's ranks and mpiexec reach us (host order)
    std::uint16_t lan_port = 0; // 0: any free port
    std::uint32_t lan_net = 0, lan_mask = 0; // destinations a route may name (the LAN's subnet)
    std::uint32_t wan_ipv4 = 0; // where other relays reach us
    std::uint16_t wan_port = 0;
    impi::Credentials credentials; // the secret (required)
    secure::protection protection = secure::protection::integrity;
    std::chrono::seconds startup_timeout {60};
    std::chrono::seconds trunk_timeout {10}; // silence after which a trunk is dead
    std::size_t window = 1 << 20; // bytes a stream may have in flight towards the other relay
    std::size_t max_streams = 4096;
    int socket_buffer = 0; // IMPI_RELAY_SOCBUF: SO_SNDBUF/SO_RCVBUF of trunks, 0 = the OS's
    std::uint64_t wan_rate = 0; // --wan-rate: this gateway's WAN link, bytes/s; 0: trunks unpaced
    std::string tcp_cc; // --tcp-cc: the trunks' congestion control; empty: the host's default
    std::string stats_dir; // --stats-dir: where the per-trunk counters go
    // IMPI_RELAY_TRUNK_ORDER=fifo: a trunk sends its frames in the order
    // queued, and leaves its unsent bytes to the kernel (an unpaced one):
    // the relay before trunk_queue.hpp, kept as the peer bench/relay
    // measures the fair order against.
    bool fifo_trunks = false;
    bool verbose = false;
};

struct trunk_counters {
    std::uint64_t bytes_out = 0, bytes_in = 0, frames_out = 0, frames_in = 0;
    std::uint64_t streams_opened = 0, streams_refused = 0;
    std::uint64_t heartbeats = 0;
    std::size_t peak_queue = 0;
};

class daemon;
class route_stream;

// One relay-to-relay connection.
class trunk : public event_handler {
public:
    trunk(daemon& d, relay_name peer, bool connector, UniqueFd fd);
    ~trunk() override;
    void on_events(std::uint32_t events) override;

    [[nodiscard]] const relay_name& peer() const { return peer_; }
    [[nodiscard]] bool open() const { return st_ == state::open; }
    [[nodiscard]] bool dead() const { return st_ == state::dead; }
    [[nodiscard]] bool handshaking() const { return st_ != state::open && st_ != state::dead; }
    [[nodiscard]] bool is_connector() const { return connector_; }
    [[nodiscard]] std::string describe() const;
    // May stream `id` queue another frame? Below high water any stream
    // may; above it only one with nothing queued (its next frame then waits
    // for one frame of each busy stream, not for the whole backlog), up to
    // hard_cap. A stream told no stops reading its rank until resume().
    [[nodiscard]] bool may_queue(std::uint32_t id) const
    {
        return queued_ <= high_water || (!fifo_ && !q_.has(id) && queued_ <= hard_cap);
    }

    void send(frame_kind k, std::uint32_t stream, std::uint32_t aux, const std::uint8_t* payload, std::size_t n);
    // A data frame whose payload the caller reads straight into the frame
    // (no copy between the rank's socket and the trunk's queue): `fill`
    // gets room for up to `room` bytes and returns how many it wrote, or a
    // negative number for none (then nothing is queued). Returns fill's result.
    template <class Fill>
    ssize_t send_data(std::uint32_t stream, std::size_t room, Fill&& fill);
    std::uint32_t attach(route_stream* s); // a new stream id of ours
    void attach(route_stream* s, std::uint32_t id); // the peer's id
    void detach(std::uint32_t id);
    void tick(clock::time_point now); // heartbeats, deadlines
    // Fails the trunk (and with it the job) with `why`.
    void fail(const std::string& why);
    // The job is over: tells the other relay (a close of stream 0), whose
    // trunk then ends without failing when ours closes.
    void end();
    [[nodiscard]] const trunk_counters& counters() const { return c_; }
    // Sets the trunk's pacing rate (bytes/s, 0: none); `why` is for the log.
    void pace(std::uint64_t rate, const std::string& why);
    [[nodiscard]] std::uint64_t pacing() const { return pacing_; }
    // What the kernel says of the connection (TCP_INFO), as of the last
    // sample_tcp(): the stats period, and the trunk's end.
    void sample_tcp();
    [[nodiscard]] const fi::TcpTelemetry& tcp() const { return tcp_; }
    // The socket's TCP congestion control (cubic, bbr, ...), as the kernel says.
    [[nodiscard]] std::string congestion_control() const;
    [[nodiscard]] std::size_t streams() const { return streams_.size(); }
    [[nodiscard]] std::size_t queued() const { return queued_; }
    // What the trunk still has to send: queued here, sealed in its
    // protected stream, and unsent in the kernel (SIOCOUTQNSD). For the
    // pacing split (trunk_pacing.hpp).
    [[nodiscard]] std::size_t unsent() const;
    [[nodiscard]] int fd() const { return fd_.get(); }

    static constexpr std::size_t high_water = 4 << 20;
    static constexpr std::size_t low_water = 1 << 20;
    static constexpr std::size_t hard_cap = 2 * high_water;

private:
    enum class state { connecting, await_hello, await_challenge, await_proof, securing, open, dead };
    void start_handshake();
    void on_handshake_bytes();
    void on_frames();
    void parse_frames(); // the complete frames in rx_, in order
    void on_frame(const frame_header& h, const std::uint8_t* p);
    void flush();
    void update_events();
    void set_events(std::uint32_t want);
    bool read_raw(std::size_t want);
    void queue(frame_kind k, std::uint32_t stream, byte_buffer f); // a whole frame, into q_
    // TCP_NOTSENT_LOWAT for the trunk's rate now (trunk_tuning.hpp).
    void retune_unsent();

    daemon& d_;
    relay_name peer_;
    bool connector_;
    bool identified_; // peer_ is known: we dialed it, or it proved who it is
    UniqueFd fd_;
    state st_;
    trunk_hello hello_ {};
    trunk_nonce acceptor_nonce_ {};
    std::vector<std::uint8_t> hs_in_, hs_out_;
    std::unique_ptr<secure::byte_stream> stream_;
    byte_buffer rx_; // [rx_off_, rx_len_): input read, not parsed yet (a partial frame)
    std::size_t rx_off_ = 0, rx_len_ = 0;
    trunk_queue q_; // frames not yet handed to the protected stream
    std::deque<byte_buffer> tx_; // frames handed over, in wire order: [tx_off_ of the first, ...) unsent
    std::size_t tx_off_ = 0, committed_ = 0; // committed_: unsent bytes in tx_
    std::size_t queued_ = 0; // unsent bytes in q_ and tx_
    std::map<std::uint32_t, route_stream*> streams_;
    std::uint32_t next_id_;
    clock::time_point last_rx_, last_tx_, deadline_;
    std::uint32_t pings_ = 0;
    std::uint32_t events_ = 0; // the epoll interest registered for fd_
    bool want_out_ = false, was_congested_ = false;
    bool ended_ = false; // the other relay said the job is over
    trunk_counters c_;
    std::uint64_t pacing_ = 0; // SO_MAX_PACING_RATE set, bytes/s; 0: none
    int unsent_lowat_ = 0; // TCP_NOTSENT_LOWAT set; 0: none yet
    // Frames handed to the protected stream at a time, at most: what a
    // frame queued meanwhile may wait behind in the relay. A quarter of
    // the kernel's unsent bound, from 16 to 128 KiB: small at a slow WAN
    // link's rate, few system calls at a fast one's.
    std::size_t commit_target_ = 64 << 10;
    bool unsent_refused_ = false; // the kernel refused it once (logged once)
    bool fifo_ = false; // relay_config::fifo_trunks
    std::vector<std::uint32_t> to_resume_; // streams that may read their ranks again (flush)
    bool resuming_ = false; // flush is resuming them: a nested flush leaves it to that call
    fi::TcpTelemetry tcp_;
};

// The rank side of one route: the socket of a rank of this cluster, either
// accepted (the rank opened the route: `ingress`) or dialed (a rank of
// another cluster opened it to this one).
class route_stream : public event_handler {
public:
    route_stream(daemon& d, UniqueFd fd, bool ingress);
    ~route_stream() override;
    void on_events(std::uint32_t events) override;

    // Ingress: the request (already read by the greeter).
    void start_ingress(const wire::route_request& r);
    // Egress: dial `to` for the stream `id` of trunk `t`.
    void start_egress(trunk* t, std::uint32_t id, const fi::endpoint_address& from, const fi::endpoint_address& to);
    // From the trunk.
    void on_opened(std::uint32_t status, const std::string& reason);
    void on_data(const std::uint8_t* p, std::size_t n);
    void on_credit(std::uint32_t n);
    void on_close(const std::string& reason);
    void trunk_lost(const std::string& why); // the trunk is gone: close without a word
    void resume(); // the trunk may take its frames again (trunk::may_queue)
    void tick(clock::time_point now);

    [[nodiscard]] bool closed() const { return st_ == state::closed; }
    [[nodiscard]] const fi::endpoint_address& to() const { return to_; }
    [[nodiscard]] const fi::endpoint_address& from() const { return from_; }
    // Whether this stream joins the two listeners (either way round: the
    // stream's direction is only who dialed).
    [[nodiscard]] bool joins(std::uint32_t a_ipv4, std::uint16_t a_port, std::uint32_t b_ipv4, std::uint16_t b_port) const
    {
        const auto is = [](const fi::endpoint_address& e, std::uint32_t ip, std::uint16_t port) {
            return e.ipv4 == ip && e.port == port;
        };
        return (is(from_, a_ipv4, a_port) && is(to_, b_ipv4, b_port)) ||
            (is(from_, b_ipv4, b_port) && is(to_, a_ipv4, a_port));
    }
    [[nodiscard]] trunk* via() const { return trunk_; }

private:
    // stalled: its trunk died; the rank's socket stays open, untouched,
    // until the relay exits (daemon::fail says why).
    enum class state { proof, opening, connecting, piping, draining, stalled, closed };
    void finish(const std::string& why, bool tell_trunk);
    void refuse(wire::route_status s, const std::string& why);
    void read_local();
    void write_local();
    void update_events();

    daemon& d_;
    UniqueFd fd_;
    bool ingress_;
    state st_;
    trunk* trunk_ = nullptr;
    std::uint32_t id_ = 0;
    fi::endpoint_address from_ {}, to_ {};
    wire::route_transcript transcript_ {};
    std::vector<std::uint8_t> in_; // handshake bytes of the rank
    std::vector<std::uint8_t> out_; // bytes for the rank
    std::size_t out_off_ = 0;
    std::size_t credit_ = 0; // bytes we may still send on the trunk
    std::size_t consumed_ = 0; // bytes written to the rank not yet credited back
    std::size_t own_ = 0; // bytes at the front of out_ that are the relay's own (route_result)
    bool paused_ = false;
    std::uint32_t events_ = 0;
    clock::time_point deadline_ {};
};

// A connection on the LAN port before it said what it is, and an mpiexec's
// control connection carried to impi-server.
class lan_greeting : public event_handler {
public:
    lan_greeting(daemon& d, UniqueFd fd, std::string peer);
    ~lan_greeting() override;
    void on_events(std::uint32_t events) override;
    [[nodiscard]] bool closed() const { return !fd_.valid() && !server_.valid(); }
    void tick(clock::time_point now);

private:
    void close_both(const std::string& why);
    void pump(int from, int to, std::vector<std::uint8_t>& buf);
    void update_events();
    class server_side : public event_handler {
    public:
        explicit server_side(lan_greeting& g) : g_(g) { }
        void on_events(std::uint32_t events) override { g_.on_server_events(events); }

    private:
        lan_greeting& g_;
    };
    void on_server_events(std::uint32_t events);

    daemon& d_;
    UniqueFd fd_, server_;
    std::string peer_;
    // awaiting_job: a complete route request came before this relay learnt
    // its job (the ranks can be quicker than impi-server's relay table);
    // it is held, unread and unanswered, until the job is known or the
    // greeting's time is up, so an early rank is served and a stranger
    // learns nothing, not even that the relay waits for a job.
    enum class state { sniff, awaiting_job, control } st_ = state::sniff;
    std::vector<std::uint8_t> up_, down_; // rank/mpiexec -> server, server -> mpiexec
    server_side server_handler_ {*this};
    bool server_connected_ = false;
    clock::time_point deadline_;
};

class daemon {
public:
    explicit daemon(relay_config cfg);
    ~daemon();
    // Binds the LAN and WAN ports; returns "addr:port" of the LAN side,
    // which mpiexec -client and the ranks use. Throws std::runtime_error.
    std::string listen();
    // Joins impi-server and serves the job to its end: 0 when the job
    // ended, 1 when it failed. `stop_fd` readable (a signalfd) stops it.
    int run(int stop_fd);

    // For the connection objects.
    event_loop& loop() { return loop_; }
    const relay_config& config() const { return cfg_; }
    const std::optional<fi::job_key>& key() const { return key_; }
    std::uint64_t job_id() const { return job_id_; }
    relay_name self() const;
    void log(const std::string& line) const;
    void debug(const std::string& line) const
    {
        if (cfg_.verbose) {
            log(line);
        }
    }
    // The trunk that carries this relay's routes to `cluster` (nullptr: none open).
    trunk* trunk_to(int cluster);
    bool trunk_planned(int cluster) const;
    // An accepted trunk says it comes from `n`: is that a relay we pair
    // with, and has it no trunk up already?
    bool expects_trunk(const relay_name& n) const;
    // A route from the trunk: may it name `to`? (this cluster, our subnet)
    bool may_dial(const fi::endpoint_address& to, std::string& why) const;
    void on_open(trunk& t, std::uint32_t id, const fi::endpoint_address& from, const fi::endpoint_address& to);
    void on_heartbeat(trunk& t, std::uint32_t direction, const heartbeat_route& r, const std::uint8_t* datagram);
    void trunk_failed(trunk& t, const std::string& why);
    // Paces every open trunk at its part of --wan-rate (trunk_pacing.hpp):
    // when one opens, and when the trunks sending change.
    void pace_trunks();
    // Trunk `t` is about to write `bytes` to the kernel.
    void trunk_writing(trunk& t, std::size_t bytes);
    void route_stream_created(std::unique_ptr<route_stream> s);
    std::size_t stream_count() const { return streams_.size(); }
    // Where the server is, for control connections.
    const std::string& server() const { return cfg_.server; }

private:
    void join_server(clock::time_point deadline);
    void on_server_frame(const impi::Frame& f);
    void on_relay_table(const impi::RelayTable& t);
    void dial_trunks();
    void accept_lan();
    void accept_wan();
    void on_udp();
    void tick();
    void fail(const std::string& why); // tells the server, ends the run with 1
    void reap();
    void report();
    void sample_trunks(); // every trunk's TCP_INFO, for write_stats and report
    void write_stats() const; // the counters file in --stats-dir, replaced atomically

    class fd_handler : public event_handler {
    public:
        fd_handler(daemon& d, void (daemon::*f)()) : d_(d), f_(f) { }
        void on_events(std::uint32_t) override { (d_.*f_)(); }

    private:
        daemon& d_;
        void (daemon::*f_)();
    };

    relay_config cfg_;
    trunk_pacing trunk_pacing_ {cfg_.wan_rate};
    // The trunks that stopped sending give their part back (trunk_pacing.hpp).
    void expire_trunk_pacing();
    event_loop loop_;
    UniqueFd lan_, wan_, udp_;
    std::unique_ptr<impi::Channel> server_;
    fd_handler lan_handler_ {*this, &daemon::accept_lan};
    fd_handler wan_handler_ {*this, &daemon::accept_wan};
    fd_handler udp_handler_ {*this, &daemon::on_udp};
    fd_handler server_handler_ {*this, &daemon::on_server_readable};
    void on_server_readable();
    std::optional<fi::job_key> key_;
    std::uint64_t job_id_ = 0;
    std::vector<impi::RelayInfo> table_;
    std::map<relay_name, impi::RelayInfo> peers_; // the relays this one has a trunk with
    std::vector<std::unique_ptr<trunk>> trunks_;
    std::vector<std::unique_ptr<route_stream>> streams_;
    std::vector<std::unique_ptr<lan_greeting>> greetings_;
    struct pending_pong {
        std::uint32_t target_ipv4;
        std::uint16_t target_port;
        std::array<std::uint8_t, 16> challenge;
        relay_name back; // the trunk it came from
        heartbeat_route route;
        clock::time_point expires;
    };
    std::deque<pending_pong> pongs_;
    clock::time_point trunks_deadline_ {};
    clock::time_point next_dial_ {};
    clock::time_point next_stats_ {};
    std::optional<int> result_;
    clock::time_point linger_until_ {};
    std::uint64_t udp_dropped_ = 0;
};

template <class Fill>
ssize_t trunk::send_data(std::uint32_t stream, std::size_t room, Fill&& fill)
{
    if (st_ != state::open) {
        errno = ENOTCONN;
        return -1;
    }
    byte_buffer f(frame_header_size + room);
    const ssize_t n = fill(f.data() + frame_header_size, room);
    if (n <= 0) {
        return n;
    }
    const auto hb = encode(frame_header {frame_kind::data, stream, static_cast<std::uint32_t>(n), 0});
    std::copy(hb.begin(), hb.end(), f.begin());
    f.resize(frame_header_size + static_cast<std::size_t>(n));
    if (f.size() * 2 < f.capacity()) {
        // A small message must not hold a 64 KiB block in the queue (the
        // queue's bound counts bytes queued, not blocks): copying its few
        // bytes is cheaper than that memory.
        f.shrink_to_fit();
    }
    queue(frame_kind::data, stream, std::move(f));
    return n;
}

} // namespace hashi::relay
