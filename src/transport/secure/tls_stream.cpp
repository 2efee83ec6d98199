// SPDX-License-Identifier: BSD-3-Clause
#include "transport/secure/tls_stream.hpp"

#include "transport/secure/iov_cursor.hpp"
#include "transport/secure/plain_stream.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace hashi::secure {

namespace {

// Blocks SIGPIPE in this thread while OpenSSL's socket BIO write()s, and
// swallows the SIGPIPE a reset connection raised meanwhile, so a vanished
// peer is an error code: three system calls per OpenSSL call (block, take a
// pending SIGPIPE, restore). If the thread already blocks SIGPIPE, a pending
// one may be the application's, so it is left alone.
class sigpipe_guard {
public:
    explicit sigpipe_guard(bool active) : active_(active)
    {
        if (!active_)
            return;
        sigemptyset(&pipe_);
        sigaddset(&pipe_, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
        ours_ = sigismember(&old_, SIGPIPE) == 0;
    }
    ~sigpipe_guard()
    {
        if (!active_)
            return;
        const int saved = errno;
        if (ours_) {
            // Not only after EPIPE: OpenSSL may have made another call since.
            const timespec zero {};
            while (sigtimedwait(&pipe_, nullptr, &zero) == SIGPIPE) {
            }
        }
        pthread_sigmask(SIG_SETMASK, &old_, nullptr);
        errno = saved;
    }
    sigpipe_guard(const sigpipe_guard&) = delete;
    sigpipe_guard& operator=(const sigpipe_guard&) = delete;

private:
    bool active_;
    bool ours_ = false;
    sigset_t pipe_ {};
    sigset_t old_ {};
};

bool would_block(int e)
{
    return e == EAGAIN || e == EWOULDBLOCK;
}

} // namespace

tls_stream::tls_stream(int fd, stream_role role, const secret& psk, const tls_options& opt) :
    fd_(fd), role_(role), opt_(opt), psk_ {psk, opt.ciphersuite},
    bio_(fd, 4 * (record_payload + SSL3_RT_MAX_TLS13_ENCRYPTED_OVERHEAD))
{
    std::string why;
    SSL_CTX* ctx = tls_context(role, opt, why);
    if (ctx == nullptr)
        throw std::runtime_error(why);
    ssl_ = SSL_new(ctx);
    if (ssl_ == nullptr)
        throw std::runtime_error(openssl_error("SSL_new failed"));
    SSL_set_app_data(ssl_, &psk_);
    // kTLS needs the "tls" upper-layer protocol on the socket; asking for it
    // here is what OpenSSL's socket BIO would do, and its answer decides
    // which BIO is used.
    const bool ulp = opt.kernel_tls && ::setsockopt(fd, IPPROTO_TCP, TCP_ULP, "tls", sizeof "tls") == 0;
    ulp_ = ulp             ? "kernel tls ULP attached"
        : !opt.kernel_tls ? "kTLS not asked for"
                          : std::string("kernel has no tls ULP (TCP_ULP: ") + std::strerror(errno) + ")";
    if (ulp || opt.openssl_socket_bio) {
        kernel_bio_ = true;
        if (SSL_set_fd(ssl_, fd) != 1) {
            SSL_free(ssl_);
            throw std::runtime_error(openssl_error("SSL_set_fd failed"));
        }
    } else {
        BIO* b = bio_.make_bio();
        if (b == nullptr) {
            SSL_free(ssl_);
            throw std::runtime_error(openssl_error("cannot make the stream's BIO"));
        }
        SSL_set_bio(ssl_, b, b);
    }
    if (role == stream_role::connector)
        SSL_set_connect_state(ssl_);
    else
        SSL_set_accept_state(ssl_);
}

tls_stream::~tls_stream()
{
    // No close_notify: the path ends a connection with its own goodbye frame
    // and closes the fd itself.
    SSL_free(ssl_);
}

void tls_stream::take_error(int code, const char* doing)
{
    if (code == SSL_ERROR_SYSCALL) {
        const int e = kernel_bio_ ? errno : bio_.last_errno();
        error_ = std::string(doing) + ": " + (e != 0 ? std::strerror(e) : "the connection ended");
        ERR_clear_error();
        errno = e != 0 ? e : EPIPE;
        return;
    }
    error_ = std::string(doing) + ": " + openssl_error("TLS error");
    errno = EBADMSG;
}

handshake_status tls_stream::handshake()
{
    if (done_)
        return handshake_status::done;
    const sigpipe_guard guard(kernel_bio_);
    ERR_clear_error();
    const int r = SSL_do_handshake(ssl_);
    if (r == 1) {
        done_ = true;
        offload_.send = BIO_get_ktls_send(SSL_get_wbio(ssl_)) != 0;
        offload_.recv = BIO_get_ktls_recv(SSL_get_rbio(ssl_)) != 0;
        return handshake_status::done;
    }
    const int code = SSL_get_error(ssl_, r);
    if (code == SSL_ERROR_WANT_READ)
        return handshake_status::want_read;
    if (code == SSL_ERROR_WANT_WRITE)
        return handshake_status::want_write;
    const bool binder = ERR_GET_REASON(ERR_peek_error()) == SSL_R_BINDER_DOES_NOT_VERIFY;
    take_error(code, role_ == stream_role::connector ? "TLS handshake (as client)" : "TLS handshake (as server)");
    if (binder)
        error_ += " (the peer's pre-shared key differs: another job key, or another handshake transcript)";
    dead_ = true;
    return handshake_status::failed;
}

std::string tls_stream::describe() const
{
    std::string d = "encryption (TLS 1.3 " + opt_.ciphersuite;
    if (done_) {
        const int group = SSL_get_negotiated_group(ssl_);
        d += group > 0 ? std::string(", psk_dhe_ke ") + OBJ_nid2sn(group) : std::string(", psk_ke (no DHE)");
    }
    d += offload_.send ? ", kTLS send" : ", user-space send";
    d += offload_.recv ? ", kTLS receive" : ", user-space receive";
    return d + "; " + ulp_ + (kernel_bio_ ? ", OpenSSL's socket BIO)" : ")");
}

bool tls_stream::buffered_input() const
{
    // SSL_has_pending also counts a partial record read ahead; only after a
    // read that filled the caller's buffer can a whole one be waiting.
    return dead_ || deferred_ != deferred::none || SSL_pending(ssl_) > 0 || (read_filled_ && SSL_has_pending(ssl_) == 1);
}

ssize_t tls_stream::read(void* buf, std::size_t len)
{
    if (dead_) {
        errno = EBADMSG;
        return -1;
    }
    if (deferred_ != deferred::none) {
        // What stopped the previous read after it had returned bytes.
        const bool end = deferred_ == deferred::end;
        errno = deferred_errno_;
        deferred_ = deferred::none;
        dead_ = errno == EBADMSG;
        return end ? 0 : -1;
    }
    const sigpipe_guard guard(kernel_bio_);
    auto* out = static_cast<std::uint8_t*>(buf);
    std::size_t got = 0;
    read_filled_ = false;
    while (got < len) {
        std::size_t n = 0;
        ERR_clear_error();
        if (SSL_read_ex(ssl_, out + got, len - got, &n) == 1) {
            got += n;
            ++counters_.records_received;
            continue;
        }
        const int code = SSL_get_error(ssl_, 0);
        if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) {
            if (got > 0)
                break;
            errno = EAGAIN;
            return -1;
        }
        const unsigned long e = ERR_peek_error();
        // The peer closed (with close_notify, or without: the end, as for
        // TCP; the path's goodbye frame tells a clean end from a cut one).
        const bool end = code == SSL_ERROR_ZERO_RETURN ||
            (code == SSL_ERROR_SYSCALL && e == 0 && (kernel_bio_ ? errno : bio_.last_errno()) == 0) ||
            ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
        if (end) {
            ERR_clear_error();
            errno = 0;
        } else
            take_error(code, "TLS read");
        if (got > 0) {
            // Bytes that were verified go first; this comes with the next read.
            deferred_ = end ? deferred::end : deferred::error;
            deferred_errno_ = errno;
            break;
        }
        if (end)
            return 0;
        dead_ = errno == EBADMSG;
        return -1;
    }
    read_filled_ = got == len;
    counters_.bytes_received += got;
    return static_cast<ssize_t>(got);
}

int tls_stream::write_record(const std::uint8_t* p, std::size_t n)
{
    std::size_t written = 0;
    ERR_clear_error();
    if (SSL_write_ex(ssl_, p, n, &written) == 1) {
        ++counters_.records_sent;
        // AES-GCM under one key is good for about 2^24.5 records (RFC 8446,
        // 5.5); a new send key well before that. OpenSSL 3.0 cannot update
        // a key the kernel holds, so with kTLS sending this is not done.
        if (++since_key_update_ >= opt_.key_update_records && !offload_.send &&
            SSL_key_update(ssl_, SSL_KEY_UPDATE_NOT_REQUESTED) == 1) {
            since_key_update_ = 0;
            ++key_updates_;
        }
        return 1;
    }
    const int code = SSL_get_error(ssl_, 0);
    if (code == SSL_ERROR_WANT_WRITE || code == SSL_ERROR_WANT_READ)
        return 0;
    take_error(code, "TLS write");
    return -1;
}

int tls_stream::retry_pending()
{
    const int r = write_record(staging_.data(), pending_);
    if (r == 1) {
        pending_ = 0;
        return 0;
    }
    if (r == 0)
        errno = EAGAIN;
    else
        write_errno_ = errno;
    return -1;
}

ssize_t tls_stream::writev(const iovec* iov, int iovcnt)
{
    if (write_errno_ != 0 || dead_) {
        errno = write_errno_ != 0 ? write_errno_ : EPIPE;
        return -1;
    }
    if (offload_.send)
        return kernel_writev(iov, iovcnt);
    iov_cursor from(iov, iovcnt);
    if (from.done())
        return 0;
    const sigpipe_guard guard(kernel_bio_);
    if (pending_ > 0 && retry_pending() < 0)
        return -1;
    if (staging_.empty())
        staging_.resize(record_payload);
    std::size_t taken = 0;
    while (!from.done()) {
        std::size_t n;
        int r;
        if (from.contiguous() >= record_payload && !offload_.send) {
            // A whole record straight from the caller's memory; copied only
            // if OpenSSL must be asked again with the same bytes (it then
            // holds the record sealed in its own buffer). Not with kTLS:
            // OpenSSL then keeps pointing at the caller's memory until the
            // kernel took the record, so it must be staging_.
            n = record_payload;
            r = write_record(from.here(), n);
            if (r == 0)
                std::memcpy(staging_.data(), from.here(), n);
            if (r >= 0)
                from.advance(n);
        } else {
            // Small pieces (frame headers, short payloads) share a record.
            n = from.gather(staging_.data(), record_payload);
            r = write_record(staging_.data(), n);
        }
        if (r < 0) {
            if (taken == 0)
                return -1;
            write_errno_ = errno; // reported by the next call
            break;
        }
        taken += n;
        if (r == 0) {
            pending_ = n;
            break;
        }
    }
    // Several records leave in one send; what the socket does not take
    // waits for flush.
    if (!kernel_bio_ && bio_.output().send_to(fd_) < 0 && !would_block(errno))
        write_errno_ = errno;
    counters_.bytes_sent += taken;
    return static_cast<ssize_t>(taken);
}

ssize_t tls_stream::kernel_writev(const iovec* iov, int iovcnt)
{
    // The kernel holds the send keys and makes the records itself: the
    // iovecs go straight to sendmsg, as for a plain stream (MSG_NOSIGNAL, no
    // copy, no OpenSSL). OpenSSL has nothing left to send once the handshake
    // is done (no tickets, no KeyUpdate with kTLS), so nothing interleaves.
    const ssize_t w = send_iovecs(fd_, iov, iovcnt);
    if (w > 0)
        counters_.bytes_sent += static_cast<std::uint64_t>(w);
    return w;
}

int tls_stream::flush()
{
    if (write_errno_ != 0) {
        errno = write_errno_;
        return -1;
    }
    const sigpipe_guard guard(kernel_bio_);
    if (pending_ > 0 && retry_pending() < 0)
        return -1;
    if (!kernel_bio_ && bio_.output().send_to(fd_) < 0) {
        if (!would_block(errno))
            write_errno_ = errno;
        return -1;
    }
    return 0;
}

} // namespace hashi::secure
