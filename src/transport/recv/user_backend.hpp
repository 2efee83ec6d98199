// SPDX-License-Identifier: BSD-3-Clause
// The user-space receive backend (receive_backend.hpp): reads each attached
// path's bytes with recv/readv, cuts them into frames (path/stream_parser),
// puts them in sequence order (path/reorder), matches messages against
// posted receives (match/match_engine), keeps unexpected ones, and lands
// payloads: eager ones copied from the receive buffer, rendezvous data and
// RMA writes read straight from the socket into their destination.
//
// Progress thread only.
#pragma once

#include "transport/engine/completions.hpp"
#include "transport/engine/operations.hpp"
#include "transport/match/match_engine.hpp"
#include "transport/recv/receive_backend.hpp"

#include <memory>
#include <unordered_map>
#include <vector>

namespace hashi::fi {

struct domain_obj;

class user_backend final : public receive_backend {
public:
    user_backend(domain_obj& domain, const bindings& b, peer_table& peers, operations& ops, completions& done,
        receive_events& up, const std::size_t& min_multi_recv);

    void attach(path& p) override;
    bool on_readable(path& p) override;
    // Reads again the paths that stopped at a full reorder stage.
    bool poll() override;
    void detach(path& p) override;
    ssize_t post(const recv_request& r) override;
    ssize_t cancel(void* context) override;
    void renumber(peer& p) override;
    void directed_sources(std::vector<fi_addr_t>& out) const override;
    std::size_t posted() const noexcept override { return posted_.size(); }
    std::size_t unexpected() const noexcept override { return unexpected_.size(); }
    void peer_failed(peer& p) override;

    // The data phase of a rendezvous message matched elsewhere (the o2g
    // module, kernel_backend): asks `p` to send it into `o`'s buffers.
    void start_rendezvous_recv(op& o, std::uint64_t sender_op, peer& p);

private:
    // Frames.
    bool frame(path& c, const wire::frame_header& h, const std::uint8_t* payload);
    bool begin_direct(path& c, const wire::frame_header& h);
    void end_direct(path& c);
    bool sink_copy(path& c, const std::uint8_t* from, std::size_t n);
    bool finish_direct(path& c);
    bool deliver_held(path& c);
    bool read_stream(path& c);
    bool stream_end(path& c, ssize_t r, std::size_t avail);

    // Matching and delivery.
    match::match_engine& engine_for(bool tagged) { return tagged ? tagged_ : untagged_; }
    ssize_t peek(const recv_request& r);
    match::arrived_msg arrival(const peer& p, const wire::frame_header& h, std::size_t length);
    void deliver_eager(peer& p, const wire::frame_header& h, const std::uint8_t* payload, bool tagged);
    void deliver_rts(peer& p, const wire::frame_header& h);
    void matched(const match::match_result& m);
    void pack_multi_recv(op& o, const std::uint8_t* payload, std::size_t len, bool has_data, std::uint64_t data);

    domain_obj& domain_;
    const bindings& b_;
    peer_table& peers_;
    operations& ops_;
    completions& done_;
    receive_events& up_;
    const std::size_t& min_multi_recv_;

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
    std::unordered_map<void*, op*> posted_; // posted receives by context, for fi_cancel
    // Paths whose next frame found their peer's reorder stage full: the
    // frame may already be in their receive buffer, where no epoll event
    // announces it, so each progress round reads them again.
    std::vector<path*> stalled_;
};

} // namespace hashi::fi
