// SPDX-License-Identifier: BSD-3-Clause
// One trunk: the handshake that proves both relays hold the job key, the
// protected stream, and the frames of the streams it multiplexes.
//
// Lock context: the relay's one thread. Failure: any bad byte, a handshake
// that does not finish within handshake_time, or silence for the relay's
// trunk_timeout kills the trunk; a trunk that was up takes the job with it
// (daemon::trunk_failed), a connection that never proved itself is just
// closed.
#include "relay/relay/relay.hpp"

#include "relay/relay/trunk_tuning.hpp"
#include "transport/secure/open_stream.hpp"

#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <variant>

namespace hashi::relay {

namespace {

constexpr auto handshake_time = std::chrono::seconds(10);
constexpr auto ping_interval = std::chrono::seconds(1);
constexpr std::string_view acceptor_label = "hashi trunk v1 acceptor";
constexpr std::string_view connector_label = "hashi trunk v1 connector";

template <std::size_t N> std::array<std::uint8_t, N> to_array(const std::uint8_t* p)
{
    std::array<std::uint8_t, N> a {};
    std::copy_n(p, N, a.begin());
    return a;
}

} // namespace

trunk::trunk(daemon& d, relay_name peer, bool connector, UniqueFd fd)
    : d_(d), peer_(peer), connector_(connector), identified_(connector), fd_(std::move(fd)),
      st_(connector ? state::connecting : state::await_hello), next_id_(connector ? 1 : 2)
{
    if (const auto refused = tune_trunk_socket(fd_.get(), d_.config()); !refused.empty()) {
        d_.log("warning: " + describe() + ": the kernel refused " + refused);
    }
    fifo_ = d_.config().fifo_trunks;
    last_rx_ = last_tx_ = clock::now();
    deadline_ = clock::now() + handshake_time;
    events_ = connector ? EPOLLOUT : EPOLLIN;
    d_.loop().add(fd_.get(), events_, this);
}

trunk::~trunk()
{
    if (fd_) {
        d_.loop().remove(fd_.get());
    }
}

std::string trunk::describe() const
{
    return identified_ ? "trunk to " + to_string(peer_) : std::string("a trunk connection not yet identified");
}

void trunk::pace(std::uint64_t rate, const std::string& why)
{
    if (!fd_ || rate == pacing_) {
        return;
    }
    if (!pace_trunk_socket(fd_.get(), rate)) {
        d_.log("warning: " + describe() + ": the kernel refused its pacing rate (" + std::strerror(errno) + ")");
        return;
    }
    pacing_ = rate;
    retune_unsent();
    d_.debug(describe() + (rate != 0 ? ": paced at " + std::to_string(rate * 8 / 1000) + " kbit/s (" + why + ")"
                                     : ": not paced (" + why + ")"));
}

void trunk::retune_unsent()
{
    if (!fd_ || unsent_refused_) {
        return;
    }
    std::uint64_t rate = pacing_;
    if (fifo_ && rate == 0) {
        return; // the kernel's own bound, as before trunk_queue.hpp
    }
    if (rate == 0) {
        if (auto t = fi::read_tcp_telemetry(fd_.get())) {
            rate = t->delivery_rate;
        }
    }
    const int want = trunk_notsent_lowat(rate);
    // Within a quarter of the setting: not worth a system call.
    if (unsent_lowat_ != 0 && 4LL * want >= 3LL * unsent_lowat_ && 4LL * want <= 5LL * unsent_lowat_) {
        return;
    }
    if (!set_trunk_notsent_lowat(fd_.get(), want)) {
        unsent_refused_ = true;
        d_.log("warning: " + describe() + ": the kernel refused TCP_NOTSENT_LOWAT (" + std::strerror(errno) +
            "): its unsent bytes are not bounded, and small frames wait behind them");
        return;
    }
    unsent_lowat_ = want;
    commit_target_ = std::clamp<std::size_t>(static_cast<std::size_t>(want) / 4, 16 << 10, 128 << 10);
}

std::size_t trunk::unsent() const
{
    int kernel = 0;
    if (!fd_ || ::ioctl(fd_.get(), SIOCOUTQNSD, &kernel) != 0 || kernel < 0) {
        kernel = 0;
    }
    // Sealed bytes the protected stream holds count as one: a trunk with
    // any keeps its part.
    const std::size_t sealed = stream_ && stream_->output_pending() ? 1 : 0;
    return queued_ + static_cast<std::size_t>(kernel) + sealed;
}

std::string trunk::congestion_control() const
{
    char name[16] = {}; // TCP_CA_NAME_MAX
    socklen_t len = sizeof name - 1;
    if (!fd_ || ::getsockopt(fd_.get(), IPPROTO_TCP, TCP_CONGESTION, name, &len) != 0) {
        return "congestion control unknown";
    }
    return name;
}

void trunk::sample_tcp()
{
    if (fd_) {
        if (auto t = fi::read_tcp_telemetry(fd_.get())) {
            tcp_ = *t;
        }
    }
}

void trunk::end()
{
    if (st_ == state::open) {
        send(frame_kind::close, 0, 0, nullptr, 0);
    }
}

void trunk::fail(const std::string& why)
{
    if (st_ == state::dead) {
        return;
    }
    if (ended_) {
        // The job is over and the other relay has gone: not a failure.
        st_ = state::dead;
        for (auto& [id, s] : streams_) {
            s->trunk_lost(why);
        }
        streams_.clear();
        sample_tcp();
        d_.loop().remove(fd_.get());
        fd_.reset();
        return;
    }
    const bool was_open = st_ == state::open;
    st_ = state::dead;
    for (auto& [id, s] : streams_) {
        s->trunk_lost(why);
    }
    streams_.clear();
    if (fd_) {
        sample_tcp();
        d_.loop().remove(fd_.get());
        fd_.reset();
    }
    if (was_open) {
        d_.trunk_failed(*this, why);
    } else if (connector_) {
        // Not up yet: the other relay may not have its table yet. The
        // daemon dials again until the trunks' deadline.
        d_.debug(describe() + " not up yet (" + why + "); dialing again");
    } else {
        d_.debug("closed " + describe() + ": " + why);
    }
}

bool trunk::read_raw(std::size_t want)
{
    while (hs_in_.size() < want) {
        std::uint8_t buf[64];
        const ssize_t n = ::recv(fd_.get(), buf, std::min(sizeof buf, want - hs_in_.size()), 0);
        if (n > 0) {
            hs_in_.insert(hs_in_.end(), buf, buf + n);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return false;
        }
        fail(n == 0 ? "the connection closed during the trunk handshake"
                    : std::string("the connection failed during the trunk handshake: ") + std::strerror(errno));
        return false;
    }
    return true;
}

void trunk::start_handshake()
{
    hello_.job_id = d_.job_id();
    hello_.from = d_.self();
    hello_.to = peer_;
    const auto n = fi::fresh_nonce();
    std::copy(n.begin(), n.end(), hello_.connector_nonce.begin());
    hs_out_ = encode(hello_);
    st_ = state::await_challenge;
}

void trunk::on_handshake_bytes()
{
    const auto& key = *d_.key();
    if (st_ == state::await_hello) {
        if (!read_raw(trunk_hello_size)) {
            return;
        }
        auto h = decode_trunk_hello(hs_in_.data(), hs_in_.size());
        hs_in_.clear();
        auto* hello = std::get_if<trunk_hello>(&h);
        if (hello == nullptr) {
            return fail(std::get<wire_error>(h).reason);
        }
        // Nothing is revealed to a connection that names the wrong job or
        // relay: it is closed.
        if (hello->job_id != d_.job_id() || hello->to != d_.self() || hello->from.cluster <= d_.self().cluster ||
            !d_.expects_trunk(hello->from)) {
            return fail("a trunk hello for another job or relay");
        }
        hello_ = *hello;
        const auto n = fi::fresh_nonce();
        std::copy(n.begin(), n.end(), acceptor_nonce_.begin());
        trunk_challenge ch;
        ch.acceptor_nonce = acceptor_nonce_;
        ch.acceptor_mac = key.sign(acceptor_label, trunk_transcript(hello_, acceptor_nonce_));
        hs_out_ = encode(ch);
        st_ = state::await_proof;
        flush();
        return;
    }
    if (st_ == state::await_challenge) {
        if (!read_raw(trunk_challenge_size)) {
            return;
        }
        auto c = decode_trunk_challenge(hs_in_.data(), hs_in_.size());
        hs_in_.clear();
        auto* ch = std::get_if<trunk_challenge>(&c);
        if (ch == nullptr) {
            return fail(std::get<wire_error>(c).reason);
        }
        acceptor_nonce_ = ch->acceptor_nonce;
        const auto transcript = trunk_transcript(hello_, acceptor_nonce_);
        if (!fi::same_mac(ch->acceptor_mac, key.sign(acceptor_label, transcript))) {
            return fail("the relay that answered could not prove it holds the job key");
        }
        trunk_proof pr;
        pr.connector_mac = key.sign(connector_label, transcript);
        hs_out_ = encode(pr);
        flush();
        if (st_ == state::dead) {
            return;
        }
    } else if (st_ == state::await_proof) {
        if (!read_raw(trunk_proof_size)) {
            return;
        }
        auto p = decode_trunk_proof(hs_in_.data(), hs_in_.size());
        hs_in_.clear();
        auto* pr = std::get_if<trunk_proof>(&p);
        if (pr == nullptr) {
            return fail(std::get<wire_error>(p).reason);
        }
        if (!fi::same_mac(pr->connector_mac, key.sign(connector_label, trunk_transcript(hello_, acceptor_nonce_)))) {
            return fail("the connecting relay could not prove it holds the job key");
        }
        peer_ = hello_.from;
        identified_ = true;
    } else {
        return;
    }
    // Both proved the key: the protected stream, keyed by this transcript.
    std::string error;
    const auto& material = key.material();
    stream_ = secure::open_stream(fd_.get(), d_.config().protection,
        connector_ ? secure::stream_role::connector : secure::stream_role::acceptor, material,
        trunk_transcript(hello_, acceptor_nonce_), error);
    if (!stream_) {
        return fail("cannot set up the protected stream: " + error);
    }
    st_ = state::securing;
    on_events(EPOLLIN | EPOLLOUT);
}

void trunk::on_events(std::uint32_t events)
{
    if (st_ == state::dead) {
        return;
    }
    if (st_ == state::connecting) {
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
            return fail(std::string("cannot connect: ") + std::strerror(err));
        }
        start_handshake();
        flush();
        update_events();
        return;
    }
    if (st_ == state::await_hello || st_ == state::await_challenge || st_ == state::await_proof) {
        if ((events & EPOLLOUT) != 0 && !hs_out_.empty()) {
            flush();
        }
        if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) {
            on_handshake_bytes();
        }
        if (st_ != state::dead) {
            update_events();
        }
        return;
    }
    if (st_ == state::securing) {
        switch (stream_->handshake()) {
        case secure::handshake_status::done:
            st_ = state::open;
            last_rx_ = clock::now();
            d_.log("trunk up to " + to_string(peer_) + " (" + stream_->describe() + "; TCP " + congestion_control() + ")");
            d_.pace_trunks();
            retune_unsent();
            break;
        case secure::handshake_status::want_read:
            set_events(EPOLLIN);
            return;
        case secure::handshake_status::want_write:
            set_events(EPOLLIN | EPOLLOUT);
            return;
        case secure::handshake_status::failed:
            return fail("the protected stream's handshake failed: " + stream_->error());
        }
    }
    if ((events & EPOLLOUT) != 0) {
        flush();
    }
    if (st_ == state::open) {
        on_frames();
    }
    if (st_ == state::open) {
        update_events();
    }
}

void trunk::on_frames()
{
    for (int round = 0; round < 64 && st_ == state::open; ++round) {
        // Straight into rx_, where the frames are parsed: the stream's own
        // buffer (a record's plaintext) is the only copy before the rank's
        // socket. Each chunk is parsed before the next is read.
        constexpr std::size_t chunk = 64 * 1024;
        if (rx_.size() < rx_len_ + chunk) {
            // Room for a chunk: the partial frame at rx_off_ moves to the
            // front only when the buffer (4 chunks) is used up, so a
            // straddling frame is moved once every few chunks, not each time.
            // (Not on the first read: an empty buffer has no data() to move.)
            if (rx_len_ > rx_off_) {
                std::memmove(rx_.data(), rx_.data() + rx_off_, rx_len_ - rx_off_);
            }
            rx_len_ -= rx_off_;
            rx_off_ = 0;
            if (rx_.size() < rx_len_ + chunk) {
                rx_.resize(std::max(rx_len_ + chunk, 4 * chunk));
            }
        }
        const ssize_t n = stream_->read(rx_.data() + rx_len_, chunk);
        if (n > 0) {
            rx_len_ += static_cast<std::size_t>(n);
            last_rx_ = clock::now();
            c_.bytes_in += static_cast<std::uint64_t>(n);
            parse_frames();
            if (static_cast<std::size_t>(n) < chunk && !stream_->buffered_input()) {
                // Less than a chunk and nothing held in the stream: the
                // socket is drained; epoll (level-triggered) wakes us for
                // more. Saves a recv returning EAGAIN per burst.
                break;
            }
        } else if (n == 0) {
            return fail("the other relay closed the trunk");
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!stream_->buffered_input()) {
                break;
            }
        } else {
            return fail(errno == EBADMSG ? "bad bytes on the trunk: " + stream_->error()
                                         : std::string("the trunk failed: ") + std::strerror(errno));
        }
    }
}

void trunk::parse_frames()
{
    std::size_t off = rx_off_;
    while (st_ == state::open && rx_len_ - off >= frame_header_size) {
        auto h = decode_frame_header(rx_.data() + off);
        auto* hdr = std::get_if<frame_header>(&h);
        if (hdr == nullptr) {
            return fail(std::get<wire_error>(h).reason);
        }
        if (rx_len_ - off < frame_header_size + hdr->length) {
            break;
        }
        ++c_.frames_in;
        on_frame(*hdr, rx_.data() + off + frame_header_size);
        off += frame_header_size + hdr->length;
    }
    if (st_ == state::open) {
        rx_off_ = off; // the start of a partial frame, if any
        if (rx_off_ == rx_len_) {
            rx_off_ = rx_len_ = 0;
        }
    }
}

void trunk::on_frame(const frame_header& h, const std::uint8_t* p)
{
    auto find = [&]() -> route_stream* {
        auto it = streams_.find(h.stream);
        return it == streams_.end() ? nullptr : it->second;
    };
    switch (h.kind) {
    case frame_kind::open: {
        // The peer's streams have the other parity.
        if ((h.stream % 2 == 1) == connector_ || h.stream == 0 || streams_.contains(h.stream)) {
            return fail("the other relay opened stream " + std::to_string(h.stream) + ", which is not its to open");
        }
        auto from = fi::endpoint_address::decode(p, fi::address_size);
        auto to = fi::endpoint_address::decode(p + fi::address_size, fi::address_size);
        if (!from || !to) {
            return fail("an open frame with a card that is not a Hashi address");
        }
        ++c_.streams_opened;
        d_.on_open(*this, h.stream, *from, *to);
        return;
    }
    case frame_kind::close:
        if (h.stream == 0) {
            ended_ = true; // the job is over (trunk::end)
            d_.debug(describe() + ": the other relay says the job is over");
            return;
        }
        [[fallthrough]];
    case frame_kind::opened: {
        auto reason = decode_reason(p, h.length);
        if (auto* e = std::get_if<wire_error>(&reason)) {
            return fail(e->reason);
        }
        if (route_stream* s = find()) {
            if (h.kind == frame_kind::opened) {
                if (h.aux != 0) {
                    ++c_.streams_refused;
                }
                s->on_opened(h.aux, std::get<std::string>(reason));
            } else {
                streams_.erase(h.stream);
                s->on_close(std::get<std::string>(reason));
            }
        }
        return;
    }
    case frame_kind::data:
        if (route_stream* s = find()) {
            s->on_data(p, h.length);
        }
        return; // a stream we closed meanwhile: its close is on its way
    case frame_kind::credit:
        if (route_stream* s = find()) {
            s->on_credit(h.aux);
        }
        return;
    case frame_kind::ping:
        send(frame_kind::pong, 0, h.aux, nullptr, 0);
        return;
    case frame_kind::pong:
        return;
    case frame_kind::heartbeat: {
        auto r = decode_heartbeat_route(p, heartbeat_route_size);
        if (auto* e = std::get_if<wire_error>(&r)) {
            return fail(e->reason);
        }
        ++c_.heartbeats;
        d_.on_heartbeat(*this, h.aux, std::get<heartbeat_route>(r), p + heartbeat_route_size);
        return;
    }
    }
}

void trunk::send(frame_kind k, std::uint32_t stream, std::uint32_t aux, const std::uint8_t* payload, std::size_t n)
{
    if (st_ != state::open) {
        return;
    }
    frame_header h {k, stream, static_cast<std::uint32_t>(n), aux};
    const auto hb = encode(h);
    byte_buffer f(hb.begin(), hb.end());
    if (n != 0) {
        f.insert(f.end(), payload, payload + n);
    }
    queue(k, stream, std::move(f));
}

void trunk::queue(frame_kind k, std::uint32_t stream, byte_buffer f)
{
    queued_ += f.size();
    c_.peak_queue = std::max(c_.peak_queue, queued_);
    ++c_.frames_out;
    if (fifo_) {
        q_.push_control(std::move(f)); // one queue, in the order queued
    } else if (k == frame_kind::data || (k == frame_kind::close && stream != 0)) {
        q_.push_stream(stream, std::move(f)); // behind the stream's data, never before
    } else if (k == frame_kind::close) {
        q_.push_last(std::move(f)); // the job's end, after every stream's last bytes
    } else {
        q_.push_control(std::move(f));
    }
    if (queued_ > high_water) {
        was_congested_ = true;
    }
    flush();
    if (st_ == state::open) {
        update_events();
    }
}

void trunk::flush()
{
    if (st_ == state::dead) {
        return;
    }
    if (!stream_) {
        // The handshake in the clear: a few dozen bytes.
        while (!hs_out_.empty()) {
            const ssize_t n = ::send(fd_.get(), hs_out_.data(), hs_out_.size(), MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK) {
                    return;
                }
                return fail(std::string("cannot send the trunk handshake: ") + std::strerror(errno));
            }
            hs_out_.erase(hs_out_.begin(), hs_out_.begin() + n);
        }
        return;
    }
    if (stream_->output_pending() && stream_->flush() < 0 && errno != EAGAIN) {
        return fail(std::string("cannot send on the trunk: ") + std::strerror(errno));
    }
    for (;;) {
        // Hand the scheduler's next frames to the stream, a little at a
        // time: what is handed over leaves in that order, whatever comes.
        while (committed_ < commit_target_ && tx_.size() < 32) {
            auto n = q_.pop();
            if (!n) {
                break;
            }
            if (n->emptied) {
                to_resume_.push_back(*n->emptied); // above high water, it may queue one frame
            }
            committed_ += n->frame.size();
            tx_.push_back(std::move(n->frame));
        }
        if (tx_.empty()) {
            break;
        }
        iovec iov[32];
        int cnt = 0;
        std::size_t off = tx_off_;
        for (auto it = tx_.begin(); it != tx_.end() && cnt < 32; ++it, ++cnt) {
            iov[cnt].iov_base = it->data() + off;
            iov[cnt].iov_len = it->size() - off;
            off = 0;
        }
        std::size_t writing = 0;
        for (int i = 0; i < cnt; ++i) {
            writing += iov[i].iov_len;
        }
        d_.trunk_writing(*this, writing); // may pace this trunk anew, before its bytes go
        const ssize_t n = stream_->writev(iov, cnt);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                break;
            }
            return fail(std::string("cannot send on the trunk: ") + std::strerror(errno));
        }
        last_tx_ = clock::now();
        c_.bytes_out += static_cast<std::uint64_t>(n);
        queued_ -= static_cast<std::size_t>(n);
        committed_ -= static_cast<std::size_t>(n);
        std::size_t left = static_cast<std::size_t>(n);
        while (left > 0) {
            const std::size_t in_front = tx_.front().size() - tx_off_;
            if (left >= in_front) {
                left -= in_front;
                tx_.pop_front();
                tx_off_ = 0;
            } else {
                tx_off_ += left;
                left = 0;
            }
        }
    }
    if (was_congested_ && queued_ < low_water) {
        was_congested_ = false;
        for (const auto& [id, s] : streams_) {
            to_resume_.push_back(id);
        }
    }
    // A resumed stream reads its rank and queues, which flushes again:
    // only the outermost call resumes, so the nesting stays one deep
    // however many streams there are.
    if (resuming_) {
        return;
    }
    resuming_ = true;
    while (!to_resume_.empty()) {
        const std::vector<std::uint32_t> ids = std::move(to_resume_);
        to_resume_.clear();
        // A stream may end, and leave the map, meanwhile; one that is not
        // paused ignores it, and one that still may not queue pauses again.
        for (auto id : ids) {
            if (auto it = streams_.find(id); it != streams_.end()) {
                it->second->resume();
            }
        }
    }
    resuming_ = false;
}

void trunk::update_events()
{
    if (st_ == state::dead || !fd_) {
        return;
    }
    bool out = !hs_out_.empty() || !tx_.empty() || !q_.empty() || (stream_ && stream_->output_pending()) || st_ == state::connecting;
    set_events(EPOLLIN | (out ? EPOLLOUT : 0u));
}

void trunk::set_events(std::uint32_t want)
{
    // Every frame queued passes here: an epoll_ctl only when the interest
    // changes, not one per frame.
    if (want != events_) {
        d_.loop().modify(fd_.get(), want, this);
        events_ = want;
    }
}

std::uint32_t trunk::attach(route_stream* s)
{
    const std::uint32_t id = next_id_;
    next_id_ += 2;
    streams_[id] = s;
    return id;
}

void trunk::attach(route_stream* s, std::uint32_t id)
{
    streams_[id] = s;
}

void trunk::detach(std::uint32_t id)
{
    streams_.erase(id);
}

void trunk::tick(clock::time_point now)
{
    if (st_ == state::dead) {
        return;
    }
    if (st_ != state::open) {
        if (now > deadline_) {
            fail("the trunk handshake did not finish within " + std::to_string(handshake_time.count()) + " s");
        }
        return;
    }
    if (now - last_rx_ > d_.config().trunk_timeout) {
        auto secs = std::chrono::duration_cast<std::chrono::milliseconds>(now - last_rx_).count() / 1000.0;
        char text[32];
        std::snprintf(text, sizeof text, "%.1f", secs);
        return fail(std::string("nothing heard on the trunk for ") + text +
            " s (the other relay is stopped or dead, or the WAN link between them is down)");
    }
    if (now - last_tx_ >= ping_interval) {
        send(frame_kind::ping, 0, ++pings_, nullptr, 0);
    }
    retune_unsent();
}

} // namespace hashi::relay
