// SPDX-License-Identifier: BSD-3-Clause
// The o2g receive backend (FI_HASHI_RECV=kernel; receive_backend.hpp): the
// kernel module (kmod/) reads each attached path, matches eager tagged
// messages against the tagged receives posted here and copies their
// payload straight into the application's buffer in the TCP receive
// handler; completions come through the ring it shares with us, so a
// received message costs no system call.
//
// Every tagged message is matched by the module, whatever its size, so
// MPI's order holds in one engine: a tagged rendezvous request (rts) is
// matched there too, and its receive completes with O2G_CQE_RENDEZVOUS;
// we then ask the sender for the data (clear_to_send), which the module
// hands back to user space frame by frame. MPI_Probe and MPI_Mprobe
// (FI_PEEK, FI_CLAIM) ask the module (O2G_IOC_PEEK, O2G_RECV_CLAIM). A
// tagged receive of several buffers gets one contiguous bounce buffer in
// the module, scattered when it completes.
//
// Everything else stays in user space, in a user_backend this backend
// owns: untagged messages (MPICH's FI_MULTI_RECV buffers), rendezvous data,
// RMA, control frames. The module attaches each socket with
// O2G_ATTACH_HANDOFF | O2G_ATTACH_TAGGED_ONLY: at such a frame it stops
// and hands the stream over; we put the header into the path's receive
// buffer, let the user backend read exactly the rest of that frame
// (path::read_budget) and give the stream back (O2G_IOC_RESUME). The same
// catch-up runs once at attach, for bytes the handshake read ahead.
//
// Not taken here (refused with a logged reason, so a job fails instead of
// hanging): protected streams (secure/), which the module cannot parse.
//
// Receives are posted through the module's posting ring (no system call
// per receive) while the completion ring has room for them, by ioctl
// otherwise; FI_HASHI_O2G_POST_RING=off posts every receive by ioctl (for
// measuring the two against each other).
//
// Progress thread only.
#pragma once

#include "transport/engine/progress.hpp"
#include "transport/recv/o2g_device.hpp"
#include "transport/recv/user_backend.hpp"

#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace hashi::fi {

class kernel_backend final : public receive_backend {
public:
    kernel_backend(domain_obj& domain, const bindings& b, peer_table& peers, operations& ops, completions& done,
        receive_events& up, const std::size_t& min_multi_recv, progress_loop& loop);
    ~kernel_backend() override;

    void attach(path& p) override;
    void detach(path& p) override;
    bool on_readable(path& p) override;
    bool poll() override;
    ssize_t post(const recv_request& r) override;
    ssize_t cancel(void* context) override;
    void renumber(peer& p) override { user_.renumber(p); }
    void directed_sources(std::vector<fi_addr_t>& out) const override;
    std::size_t posted() const noexcept override { return user_.posted() + by_context_.size(); }
    std::size_t unexpected() const noexcept override;
    void peer_failed(peer& p) override;

    // FI_HASHI_O2G_RING_FIRST (default on): the engine reads the completion
    // ring before epoll while it moves (engine.hpp, ring_first_).
    bool ring_first() const noexcept { return ring_first_; }
    // Why this process's RLIMIT_MEMLOCK may not let the module pin what
    // its posted receives can hold ("" when it does: no limit, or room for
    // max_posted receives of 1 MiB). FI_HASHI_RECV=auto then receives in
    // user space; kernel goes on with a warning.
    std::string pin_limit_problem() const;

private:
    // What to add to a refusal the module gave for a receive's memory.
    std::string refusal_hint(int err) const;
    // Where a path's stream is read.
    enum class reader : std::uint8_t {
        catch_up_to_attach, // user space, up to a frame boundary, then ATTACH
        catch_up_to_resume, // user space, the handed-off frame, then RESUME
        kernel, // the module
        user, // user space for good: the module gave the stream back at its end, or it ended before ATTACH
    };
    struct attached_path {
        path* c = nullptr;
        int sock = -1; // our duplicate of the path's socket: the module's name for it
        reader r = reader::catch_up_to_attach;
    };

    bool catch_up(attached_path& a);
    std::size_t bytes_to_frame_end(const path& c) const;
    void socket_event(const o2g_completion& e);
    ssize_t peek(const recv_request& r);
    ssize_t claim(const recv_request& r);
    void completed(op& o, const o2g_completion& e);
    void start_rendezvous(op& o, const o2g_completion& e);
    void decline_rendezvous(const o2g_completion& e);
    peer* sender_of(const o2g_completion& e) const;
    void forget(attached_path& a);
    attached_path* find(path& c);
    bool ring_has_room() const noexcept;
    // Where the module writes a receive: its one buffer, or a bounce buffer.
    std::pair<std::uintptr_t, std::size_t> module_buffer(op& o);
    void finished(op& o);

    operations& ops_;
    peer_table& peers_;
    completions& done_;
    const bindings& b_;
    receive_events& up_;
    o2g_device dev_;
    user_backend user_;
    bool use_post_ring_ = true; // FI_HASHI_O2G_POST_RING
    bool ring_first_ = true; // FI_HASHI_O2G_RING_FIRST

    // The ring wakes a blocking progress wait through the context's poll.
    struct ring_watch final : event_handler {
        void on_events(std::uint32_t) override {} // poll() drains the ring every round
    } ring_watch_;
    registration ring_reg_;

    std::unordered_map<int, attached_path> by_sock_;
    std::unordered_map<void*, op*> by_context_; // tagged receives posted to the module, for cancel
    std::unordered_set<const op*> posted_ops_; // the same, to check the cookies the ring gives back
    // Receives of several buffers: the contiguous buffer the module fills.
    std::unordered_map<const op*, std::vector<std::uint8_t>> bounce_;
};

} // namespace hashi::fi
