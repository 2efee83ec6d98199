// SPDX-License-Identifier: BSD-3-Clause
// Where finished operations are reported: the endpoint's bound completion
// queues and counters. Every op ends here exactly once (success, error or
// truncation) and goes back to the op table (engine/operations.hpp).
// Progress thread only.
#pragma once

#include "transport/engine/operations.hpp"
#include "transport/objects.hpp"

#include <cstddef>
#include <cstdint>

namespace hashi::fi {

struct bindings {
    av_obj* av = nullptr;
    cq_obj* tx_cq = nullptr;
    cq_obj* rx_cq = nullptr;
    cntr_obj* read_cntr = nullptr;
    cntr_obj* write_cntr = nullptr;
    cntr_obj* send_cntr = nullptr;
    cntr_obj* recv_cntr = nullptr;
};

class completions {
public:
    completions(const bindings& b, operations& ops) : b_(b), ops_(ops) {}

    void send_done(op& o);
    void recv_done(op& o); // a truncated message ends as an FI_ETRUNC error
    void rma_done(op& o, int status);
    void error(op& o, int err, std::size_t olen = 0);
    // An inject send left: only the counter moves.
    void inject_done();
    // One message packed into a multi-receive buffer (not the op's end
    // unless `used_up`).
    void multi_recv_part(op& o, void* at, std::size_t n, std::size_t len, bool has_data, std::uint64_t data,
        bool used_up);
    // FI_PEEK's answer.
    void peek_result(void* context, bool tagged, bool found, std::size_t len, std::uint64_t tag,
        std::uint64_t data, bool has_data);

    const bindings& bound() const noexcept { return b_; }

private:
    void post(cq_obj* cq, const op& o, std::uint64_t flags, std::size_t len, void* buf);
    const bindings& b_;
    operations& ops_;
};

} // namespace hashi::fi
