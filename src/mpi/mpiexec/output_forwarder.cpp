// SPDX-License-Identifier: BSD-3-Clause
#include "output_forwarder.hpp"

#include <unistd.h>

#include <cerrno>

namespace hashi::mpiexec {

namespace {
// A process that never writes a newline must not make us buffer forever.
constexpr size_t max_pending = 64 * 1024;
} // namespace

bool write_all(int fd, std::string_view data)
{
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return false;
        }
        data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

OutputForwarder::OutputForwarder(int out_fd, int rank, bool prefix)
    : out_fd_(out_fd), prefix_(prefix ? "[" + std::to_string(rank) + "] " : "")
{
}

void OutputForwarder::emit(std::string_view line)
{
    if (prefix_.empty()) {
        write_all(out_fd_, line);
    } else {
        std::string buf;
        buf.reserve(prefix_.size() + line.size());
        buf += prefix_;
        buf += line;
        write_all(out_fd_, buf);
    }
}

void OutputForwarder::feed(std::string_view bytes)
{
    pending_ += bytes;
    size_t start = 0;
    for (size_t nl = pending_.find('\n'); nl != std::string::npos; nl = pending_.find('\n', start)) {
        emit(std::string_view(pending_).substr(start, nl + 1 - start));
        start = nl + 1;
    }
    pending_.erase(0, start);
    if (pending_.size() >= max_pending) {
        emit(pending_);
        pending_.clear();
    }
}

void OutputForwarder::finish()
{
    if (!pending_.empty()) {
        if (!prefix_.empty()) {
            pending_ += '\n';
        }
        emit(pending_);
        pending_.clear();
    }
}

} // namespace hashi::mpiexec
