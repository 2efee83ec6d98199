// SPDX-License-Identifier: BSD-3-Clause
// The RDM endpoint as libfabric sees it: a facade over the engine
// (engine/engine.hpp). It owns the fid and its ops tables (ep_ops.cpp), the
// bindings to an address vector, completion queues and counters, and the
// endpoint's options; enabling it reads the settings, binds the listening
// socket and builds the engine. Every data operation is the engine's.
#pragma once

#include "transport/engine/completions.hpp"
#include "transport/engine/engine.hpp"
#include "transport/objects.hpp"

#include <rdma/fi_endpoint.h>
#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <string>

namespace hashi::fi {

class endpoint {
public:
    endpoint(domain_obj* domain, const fi_info* info, void* context);
    ~endpoint();
    endpoint(const endpoint&) = delete;
    endpoint& operator=(const endpoint&) = delete;

    fid_box<fid_ep, endpoint> box {};
    domain_obj* domain;

    // Lifecycle.
    int bind(fid* bfid, std::uint64_t flags);
    int enable();
    int close();
    int getname(void* addr, std::size_t* addrlen) const;
    int setopt(int level, int optname, const void* optval, std::size_t optlen);
    int getopt(int level, int optname, void* optval, std::size_t* optlen) const;
    void on_av_insert(fi_addr_t index, const endpoint_address& a)
    {
        if (engine_)
            engine_->on_av_insert(index, a);
    }

    // Data operations: 0, or a negative FI_E* code (-FI_EAGAIN when the send
    // queues are full, -FI_EOPBADSTATE before fi_enable).
    ssize_t post_send(const iovec* iov, std::size_t count, fi_addr_t dest, std::uint64_t tag, std::uint64_t data,
        bool has_data, bool tagged, bool inject, bool completion, void* context)
    {
        if (!engine_)
            return -FI_EOPBADSTATE;
        return engine_->post_send(iov, count, dest, tag, data, has_data, tagged, inject, completion, context);
    }
    ssize_t post_recv(const iovec* iov, std::size_t count, fi_addr_t src, std::uint64_t tag, std::uint64_t ignore,
        bool tagged, std::uint64_t flags, bool completion, void* context)
    {
        if (!engine_)
            return -FI_EOPBADSTATE;
        // Without FI_DIRECTED_RECV a receive's source address is ignored
        // (fi_recv(3)): fi_pingpong posts its first receive from address 0
        // before its AV holds anything.
        if (!directed_recv_)
            src = FI_ADDR_UNSPEC;
        return engine_->post_recv({iov, count, src, tag, ignore, tagged, flags, completion, context});
    }
    ssize_t cancel(void* context) { return engine_ ? engine_->cancel(context) : -FI_ENOENT; }
    ssize_t post_rma(op::kind k, const iovec* iov, std::size_t count, fi_addr_t peer_addr, std::uint64_t raddr,
        std::uint64_t key, bool inject, bool completion, void* context)
    {
        if (!engine_)
            return -FI_EOPBADSTATE;
        return engine_->post_rma(k, iov, count, peer_addr, raddr, key, inject, completion, context);
    }
    bool progress() { return engine_ && engine_->progress(); }
    // The flusher's turn (engine::flush_held), inside the domain's gate.
    std::uint64_t flush_held(std::uint64_t now, std::uint64_t older_than_ns)
    {
        return engine_ ? engine_->flush_held(now, older_than_ns) : 0;
    }

    bool tx_completion_default() const noexcept { return !tx_selective_ || (tx_op_flags_ & FI_COMPLETION); }
    bool rx_completion_default() const noexcept { return !rx_selective_ || (rx_op_flags_ & FI_COMPLETION); }
    bool selective_tx() const noexcept { return tx_selective_; }
    bool selective_rx() const noexcept { return rx_selective_; }

private:
    std::uint64_t tx_op_flags_ = 0, rx_op_flags_ = 0;
    bool tx_selective_ = false, rx_selective_ = false;
    bool directed_recv_ = true; // FI_DIRECTED_RECV in the endpoint's caps (MPICH asks for it)
    bindings bound_;
    std::size_t min_multi_recv_ = 0; // FI_OPT_MIN_MULTI_RECV
    std::string host_;
    std::unique_ptr<engine> engine_; // from fi_enable on
};

} // namespace hashi::fi
