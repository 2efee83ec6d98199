// SPDX-License-Identifier: BSD-3-Clause
// The rank side of a route: its handshake with the relay (ingress), the
// dial to the destination (egress), and the bytes between the rank's
// socket and the trunk, within the stream's credit.
//
// Contract: a stream sends on the trunk at most `window` bytes the other
// relay has not credited back, and credits what it wrote to its rank, so
// the other relay buffers at most `window` bytes of it; it stops reading
// its rank while its trunk says it may not queue (trunk::may_queue). Lock context: the relay's thread.
// Failure: a rank's bad or late handshake closes its connection (nothing
// revealed to a stranger); a dial that fails is answered with the reason;
// the end of either side ends the other.
#include "relay/relay/relay.hpp"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace hashi::relay {

namespace {

constexpr auto handshake_time = std::chrono::seconds(10);
constexpr auto open_time = std::chrono::seconds(20);
constexpr auto drain_time = std::chrono::seconds(5);

} // namespace

route_stream::route_stream(daemon& d, UniqueFd fd, bool ingress)
    : d_(d), fd_(std::move(fd)), ingress_(ingress), st_(ingress ? state::proof : state::connecting)
{
    deadline_ = clock::now() + handshake_time;
}

route_stream::~route_stream()
{
    if (fd_) {
        d_.loop().remove(fd_.get());
    }
}

void route_stream::update_events()
{
    if (!fd_) {
        return;
    }
    std::uint32_t want = out_off_ < out_.size() ? EPOLLOUT : 0u;
    switch (st_) {
    case state::proof:
    case state::opening:
        want |= EPOLLIN;
        break;
    case state::connecting:
    case state::draining:
        want |= EPOLLOUT;
        break;
    case state::piping:
        want |= paused_ ? 0u : EPOLLIN;
        break;
    case state::stalled:
    case state::closed:
        return;
    }
    if (want != events_) {
        d_.loop().modify(fd_.get(), want, this);
        events_ = want;
    }
}

void route_stream::start_ingress(const wire::route_request& r)
{
    d_.loop().add(fd_.get(), EPOLLIN, this);
    events_ = EPOLLIN;
    auto from = fi::endpoint_address::decode(r.from.data(), r.from.size());
    auto to = fi::endpoint_address::decode(r.to.data(), r.to.size());
    if (!d_.key()) {
        // lan_greeting holds requests until the job is known; should one
        // come through anyway, it is not answered (a refusal would tell a
        // stranger what this port is).
        return finish("a route request before the relay serves a job", false);
    }
    if (r.job_id != d_.job_id() || !from || !to) {
        return finish("a route request for another job", false); // a stranger learns nothing
    }
    from_ = *from;
    to_ = *to;
    transcript_.job_id = r.job_id;
    transcript_.from = r.from;
    transcript_.to = r.to;
    transcript_.connector_nonce = r.connector_nonce;
    transcript_.relay_nonce = fi::fresh_nonce();
    wire::route_challenge ch;
    ch.relay_nonce = transcript_.relay_nonce;
    ch.relay_mac = d_.key()->relay_route_mac(transcript_);
    const auto bytes = encode(ch);
    out_.assign(bytes.begin(), bytes.end());
    write_local();
    update_events();
}

void route_stream::refuse(wire::route_status s, const std::string& why)
{
    d_.debug("refused a route from " + from_.describe() + " to " + to_.describe() + ": " + why);
    const auto bytes = encode(wire::route_result {s, why});
    // Best effort: a refusal is a few bytes on an empty socket.
    ::send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    finish(why, true); // a stream the other relay opened is closed there too
}

void route_stream::start_egress(trunk* t, std::uint32_t id, const fi::endpoint_address& from, const fi::endpoint_address& to)
{
    trunk_ = t;
    id_ = id;
    from_ = from;
    to_ = to;
    t->attach(this, id);
    deadline_ = clock::now() + handshake_time;
    d_.loop().add(fd_.get(), EPOLLOUT, this);
    events_ = EPOLLOUT;
}

void route_stream::on_events(std::uint32_t events)
{
    if (st_ == state::closed || st_ == state::stalled) {
        return;
    }
    if (st_ == state::connecting) {
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        const std::string reason = err == 0 ? "" : std::string("cannot connect to the destination: ") + std::strerror(err);
        const auto status = static_cast<std::uint32_t>(err == 0 ? wire::route_status::ok : wire::route_status::unreachable);
        trunk_->send(frame_kind::opened, id_, status, reinterpret_cast<const std::uint8_t*>(reason.data()), reason.size());
        if (err != 0) {
            trunk_->detach(id_);
            trunk_ = nullptr;
            return finish(reason, false);
        }
        st_ = state::piping;
        credit_ = d_.config().window;
        d_.debug("route from " + from_.describe() + " to " + to_.describe() + " open (stream " + std::to_string(id_) + ")");
        update_events();
        return;
    }
    if ((events & EPOLLOUT) != 0) {
        write_local();
    }
    if (st_ == state::closed) {
        return;
    }
    if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) {
        read_local();
    }
    update_events();
}

void route_stream::read_local()
{
    if (st_ == state::proof) {
        while (in_.size() < wire::route_proof_size) {
            std::uint8_t buf[wire::route_proof_size];
            const ssize_t n = ::recv(fd_.get(), buf, wire::route_proof_size - in_.size(), 0);
            if (n > 0) {
                in_.insert(in_.end(), buf, buf + n);
                continue;
            }
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                return;
            }
            return finish("the rank closed its route during the handshake", false);
        }
        auto p = wire::decode_route_proof(in_.data(), in_.size());
        auto* proof = std::get_if<wire::route_proof>(&p);
        if (proof == nullptr || !fi::same_mac(proof->rank_mac, d_.key()->rank_route_mac(transcript_))) {
            return finish("a route whose opener could not prove it belongs to the job", false);
        }
        in_.clear();
        if (from_.cluster_id != d_.config().cluster) {
            return refuse(wire::route_status::refused, "the opener " + from_.describe() + " is not in this relay's cluster");
        }
        if (to_.cluster_id == d_.config().cluster) {
            return refuse(wire::route_status::refused, "the destination is in this cluster: connect to it directly");
        }
        if (d_.stream_count() > d_.config().max_streams) {
            return refuse(wire::route_status::busy, "the relay has " + std::to_string(d_.stream_count()) + " streams");
        }
        trunk_ = d_.trunk_to(to_.cluster_id);
        if (trunk_ == nullptr) {
            return refuse(wire::route_status::no_trunk,
                "no trunk to cluster " + std::to_string(to_.cluster_id) +
                    (d_.trunk_planned(to_.cluster_id) ? " is up" : " exists: that cluster has no relay paired with this one"));
        }
        id_ = trunk_->attach(this);
        std::uint8_t cards[2 * fi::address_size];
        std::copy(transcript_.from.begin(), transcript_.from.end(), cards);
        std::copy(transcript_.to.begin(), transcript_.to.end(), cards + fi::address_size);
        trunk_->send(frame_kind::open, id_, 0, cards, sizeof cards);
        st_ = state::opening;
        deadline_ = clock::now() + open_time;
        return;
    }
    if (st_ == state::opening) {
        // The rank sends nothing before route_result; anything else ends it.
        std::uint8_t b;
        const ssize_t n = ::recv(fd_.get(), &b, 1, MSG_PEEK);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
            finish("the rank closed its route while it was opened", true);
        } else if (n > 0) {
            finish("the rank sent bytes before its route was open", true);
        }
        return;
    }
    if (st_ != state::piping) {
        return;
    }
    for (int round = 0; round < 16; ++round) {
        // Queuing a frame may fail the trunk, which stalls this stream and
        // clears trunk_: nothing more to read then.
        if (st_ != state::piping || trunk_ == nullptr) {
            return;
        }
        if (credit_ == 0 || !trunk_->may_queue(id_)) {
            paused_ = true;
            return;
        }
        // The rank's bytes go from its socket straight into the trunk's
        // frame (the protected stream's sealing is the one copy after it).
        const std::size_t want = std::min<std::size_t>(max_payload, credit_);
        const ssize_t n = trunk_->send_data(id_, want, [this](std::uint8_t* p, std::size_t room) {
            return ::recv(fd_.get(), p, room, 0);
        });
        if (n > 0) {
            credit_ -= static_cast<std::size_t>(n);
            if (static_cast<std::size_t>(n) < want) {
                // The socket had less than asked: it is empty now, and
                // epoll (level-triggered) says when more comes. Reading on
                // would cost a recv that returns EAGAIN for every message.
                return;
            }
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        }
        return finish(n == 0 ? "" : std::string("the rank's connection failed: ") + std::strerror(errno), true);
    }
}

void route_stream::write_local()
{
    while (out_off_ < out_.size()) {
        const ssize_t n = ::send(fd_.get(), out_.data() + out_off_, out_.size() - out_off_, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                break;
            }
            return finish(std::string("cannot write to the rank: ") + std::strerror(errno), st_ == state::piping);
        }
        out_off_ += static_cast<std::size_t>(n);
        // The relay's own bytes (route_result) came through no trunk: only
        // what follows them is credited back.
        const std::size_t ours = std::min(own_, static_cast<std::size_t>(n));
        own_ -= ours;
        if (st_ == state::piping || st_ == state::draining) {
            consumed_ += static_cast<std::size_t>(n) - ours;
        }
    }
    if (out_off_ == out_.size()) {
        out_.clear();
        out_off_ = 0;
        if (st_ == state::draining) {
            return finish("", false);
        }
    } else if (out_off_ > (1u << 20)) {
        out_.erase(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(out_off_));
        out_off_ = 0;
    }
    // Credit back in batches of a quarter window. Never stalls: the other
    // relay stops only with a whole window unacknowledged, and once the rank
    // has taken that, consumed_ is a window. (Crediting whenever the rank
    // took everything put a credit frame on the trunk for every message:
    // half the trunk's frames in a ping-pong, each one sealed, sent, woken
    // for and checked.)
    if (st_ == state::piping && consumed_ >= d_.config().window / 4) {
        trunk_->send(frame_kind::credit, id_, static_cast<std::uint32_t>(consumed_), nullptr, 0);
        consumed_ = 0;
    }
}

void route_stream::on_opened(std::uint32_t status, const std::string& reason)
{
    if (st_ != state::opening) {
        return trunk_->fail("an opened frame for stream " + std::to_string(id_) + ", which was not being opened");
    }
    if (status != 0) {
        trunk_->detach(id_);
        trunk_ = nullptr;
        return refuse(static_cast<wire::route_status>(std::min<std::uint32_t>(status, 4)),
            "the relay of cluster " + std::to_string(to_.cluster_id) + " cannot reach " + to_.describe() + ": " + reason);
    }
    const auto bytes = encode(wire::route_result {wire::route_status::ok, ""});
    out_.insert(out_.end(), bytes.begin(), bytes.end());
    own_ = out_.size() - out_off_;
    st_ = state::piping;
    credit_ = d_.config().window;
    d_.debug("route from " + from_.describe() + " to " + to_.describe() + " open (stream " + std::to_string(id_) + ")");
    write_local();
    update_events();
}

void route_stream::on_data(const std::uint8_t* p, std::size_t n)
{
    if (st_ != state::piping) {
        return; // ending: what is in flight is dropped with the stream
    }
    if (out_.size() - out_off_ + n > d_.config().window) {
        return trunk_->fail("stream " + std::to_string(id_) + " got more than its credit");
    }
    if (out_off_ == out_.size()) {
        // Nothing queued for the rank: write through, and keep only what
        // its socket did not take (no copy in the common case).
        const ssize_t w = ::send(fd_.get(), p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            return finish(std::string("cannot write to the rank: ") + std::strerror(errno), true);
        }
        const std::size_t took = w > 0 ? static_cast<std::size_t>(w) : 0;
        consumed_ += took;
        p += took;
        n -= took;
    }
    out_.insert(out_.end(), p, p + n);
    write_local();
    update_events();
}

void route_stream::on_credit(std::uint32_t n)
{
    credit_ += n;
    if (credit_ > d_.config().window) {
        return trunk_->fail("stream " + std::to_string(id_) + " was credited more than it sent");
    }
    resume();
}

void route_stream::resume()
{
    if (paused_ && st_ == state::piping) {
        paused_ = false;
        update_events();
        read_local();
        update_events();
    }
}

void route_stream::on_close(const std::string& reason)
{
    // The other side ended: what it sent before goes to the rank first.
    trunk_ = nullptr;
    if (!reason.empty()) {
        d_.debug("stream " + std::to_string(id_) + " to " + to_.describe() + " ended: " + reason);
    }
    if (out_off_ < out_.size()) {
        st_ = state::draining;
        deadline_ = clock::now() + drain_time;
        ::shutdown(fd_.get(), SHUT_RD);
        update_events();
        return;
    }
    finish("", false);
}

void route_stream::trunk_lost(const std::string&)
{
    trunk_ = nullptr;
    if (st_ == state::closed) {
        return;
    }
    st_ = state::stalled;
    if (fd_) {
        d_.loop().remove(fd_.get());
    }
}

void route_stream::finish(const std::string& why, bool tell_trunk)
{
    if (st_ == state::closed) {
        return;
    }
    if (trunk_ != nullptr) {
        if (tell_trunk) {
            const auto r = why.substr(0, max_reason);
            trunk_->send(frame_kind::close, id_, why.empty() ? 0 : 1, reinterpret_cast<const std::uint8_t*>(r.data()),
                r.size());
        }
        trunk_->detach(id_);
        trunk_ = nullptr;
    }
    if (!why.empty()) {
        d_.debug("closed a route from " + from_.describe() + " to " + to_.describe() + ": " + why);
    }
    st_ = state::closed;
    if (fd_) {
        d_.loop().remove(fd_.get());
        fd_.reset();
    }
}

void route_stream::tick(clock::time_point now)
{
    if (now <= deadline_) {
        return;
    }
    switch (st_) {
    case state::proof:
        return finish("a route handshake that did not finish in time", false);
    case state::connecting: {
        const std::string why = "the destination did not accept within " + std::to_string(handshake_time.count()) + " s";
        trunk_->send(frame_kind::opened, id_, static_cast<std::uint32_t>(wire::route_status::unreachable),
            reinterpret_cast<const std::uint8_t*>(why.data()), why.size());
        trunk_->detach(id_);
        trunk_ = nullptr;
        return finish(why, false);
    }
    case state::opening:
        return refuse(wire::route_status::unreachable, "the other cluster's relay did not answer in time");
    case state::draining:
        return finish("", false);
    default:
        return;
    }
}

} // namespace hashi::relay
