// SPDX-License-Identifier: BSD-3-Clause
// Encryption: TLS 1.3 over the connection's socket through OpenSSL 3.0, with
// the PSK and options of tls_context.hpp, kTLS where the kernel has it.
//
// Writes: the iovecs are gathered into records of up to 16 KiB (a staging
// copy for small pieces, the caller's memory for a large contiguous one
// unless kTLS sends), one
// SSL_write per record. When OpenSSL answers "retry" the record is already
// sealed in its buffer; the stream reports its bytes as taken, keeps a copy
// of them, and repeats the SSL_write with that copy (OpenSSL's rule: the
// same bytes again) in the next writev or flush.
//
// Who does the record crypto: if the kernel accepts the "tls" upper-layer
// protocol on the socket (setsockopt TCP_ULP), OpenSSL's socket BIO is used
// and hands the send keys to the kernel (OpenSSL 3.0 offloads only sending
// for TLS 1.3); from then on writev is sendmsg on the socket (the kernel
// makes the records), and SIGPIPE is blocked around each OpenSSL call
// because that BIO uses write(). Otherwise a BIO of our own
// (tls_socket_bio.hpp). offload() and describe() tell which.
//
// Keys: a KeyUpdate of the send key every tls_options::key_update_records
// records (never with kTLS sending, which OpenSSL 3.0 cannot update); the
// peer's OpenSSL follows on its own. Nothing else changes keys: no tickets,
// no renegotiation (TLS 1.3 has none).
#pragma once

#include "transport/secure/byte_stream.hpp"
#include "transport/secure/tls_context.hpp"
#include "transport/secure/tls_socket_bio.hpp"

#include <memory>
#include <vector>

namespace hashi::secure {

class tls_stream final : public byte_stream {
public:
    // Throws std::runtime_error (with OpenSSL's reason) if the context or
    // the SSL object cannot be made.
    tls_stream(int fd, stream_role role, const secret& psk, const tls_options& opt);
    ~tls_stream() override;

    handshake_status handshake() override;
    ssize_t read(void* buf, std::size_t len) override;
    ssize_t writev(const iovec* iov, int iovcnt) override;
    bool buffered_input() const override;
    bool output_pending() const override { return pending_ > 0 || bio_.output().pending(); }
    int flush() override;
    const std::string& error() const override { return error_; }
    std::string describe() const override;
    kernel_offload offload() const override { return offload_; }
    stream_counters counters() const override { return counters_; }
    std::uint64_t key_updates() const noexcept { return key_updates_; }

    static constexpr std::size_t record_payload = 16384;

private:
    // One SSL_write of [p, p + n): 1 written, 0 sealed but not all sent
    // (retry with the same bytes), -1 failed (errno set, error_ maybe).
    int write_record(const std::uint8_t* p, std::size_t n);
    // writev once the kernel encrypts (kTLS send): sendmsg.
    ssize_t kernel_writev(const iovec* iov, int iovcnt);
    // Retries the pending record from staging_: 0 done, -1 with errno.
    int retry_pending();
    // A failed OpenSSL call (SSL_get_error's code) as errno and error_.
    void take_error(int code, const char* doing);

    int fd_;
    stream_role role_;
    tls_options opt_;
    tls_psk psk_;
    tls_socket_bio bio_;
    bool kernel_bio_ = false; // OpenSSL's socket BIO (kTLS possible)
    std::string ulp_; // what setsockopt(TCP_ULP, "tls") said
    struct ssl_st* ssl_ = nullptr;
    bool done_ = false;
    bool read_filled_ = false; // the last read stopped because the caller's buffer was full
    enum class deferred { none, end, error };
    deferred deferred_ = deferred::none; // met after a read had bytes to return
    int deferred_errno_ = 0;
    std::uint64_t since_key_update_ = 0;
    std::uint64_t key_updates_ = 0;
    std::vector<std::uint8_t> staging_;
    std::size_t pending_ = 0; // bytes of staging_ sealed by OpenSSL, not yet all written
    int write_errno_ = 0;
    bool dead_ = false;
    std::string error_;
    kernel_offload offload_;
    stream_counters counters_;
};

} // namespace hashi::secure
