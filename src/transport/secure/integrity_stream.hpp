// SPDX-License-Identifier: BSD-3-Clause
// Integrity without secrecy: every byte travels in clear inside records
// (integrity_record.hpp) whose tags the receiver checks before it returns a
// byte. TLS 1.3 in OpenSSL 3.0 has no integrity-only cipher suite, hence a
// record layer of our own, kept small: no negotiation (both sides derive
// the keys and know the MAC from the same settings), no handshake.
//
// Output: writev gathers the iovecs into records of up to 16 KiB, sealed in
// a bounded buffer of its own (4 records), then sent; what the socket does
// not take stays there (output_pending). Input: recv into a buffer of 4
// records; a record's payload is returned only once its tag checked.
#pragma once

#include "transport/secure/byte_stream.hpp"
#include "transport/secure/integrity_record.hpp"
#include "transport/secure/send_buffer.hpp"

#include <vector>

namespace hashi::secure {

class integrity_stream final : public byte_stream {
public:
    // send_key / recv_key: this side's direction keys (the connector sends
    // under connector_to_acceptor_label's secret). Throws
    // std::runtime_error if OpenSSL cannot set the MAC up.
    integrity_stream(int fd, const secret& send_key, const secret& recv_key, mac_kind kind);

    handshake_status handshake() override { return handshake_status::done; }
    ssize_t read(void* buf, std::size_t len) override;
    ssize_t writev(const iovec* iov, int iovcnt) override;
    bool buffered_input() const override;
    bool output_pending() const override { return out_.pending(); }
    int flush() override;
    const std::string& error() const override { return error_; }
    std::string describe() const override;
    stream_counters counters() const override;

    static constexpr std::size_t buffer_records = 4;

private:
    // Seals as much of `from` as fits into the output buffer; bytes taken.
    std::size_t seal_from(class iov_cursor& from);

    int fd_;
    record_sealer sealer_;
    record_opener opener_;
    std::string error_;
    int write_errno_ = 0; // a socket error after bytes were taken, reported by the next call

    std::vector<std::uint8_t> in_; // [in_head_, in_tail_) received, not yet returned
    std::size_t in_head_ = 0;
    std::size_t in_tail_ = 0;
    std::size_t plain_at_ = 0; // verified payload not yet returned: [plain_at_, plain_at_ + plain_left_)
    std::size_t plain_left_ = 0;
    bool dead_ = false;

    send_buffer out_ {buffer_records * max_record_size}; // sealed, not yet sent

    std::uint64_t bytes_sent_ = 0;
    std::uint64_t bytes_received_ = 0;
};

} // namespace hashi::secure
