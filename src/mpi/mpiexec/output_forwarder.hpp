// SPDX-License-Identifier: BSD-3-Clause
// Forwards a process's stdout or stderr to mpiexec's, whole lines at a time
// so lines of different ranks do not interleave mid-line, optionally
// prefixed with "[rank] ".
#pragma once

#include <string>
#include <string_view>

namespace hashi::mpiexec {

class OutputForwarder {
public:
    OutputForwarder(int out_fd, int rank, bool prefix);

    // Takes bytes read from the process; writes every complete line.
    void feed(std::string_view bytes);
    // The process closed its end: writes what is left, adding a newline only
    // when a prefix is in use (so raw output stays byte-exact).
    void finish();

private:
    void emit(std::string_view line);

    int out_fd_;
    std::string prefix_;
    std::string pending_;
};

// Writes all of `data` to `fd`, retrying on EINTR and short writes.
// Returns false if the descriptor is gone (EPIPE, EBADF...).
bool write_all(int fd, std::string_view data);

} // namespace hashi::mpiexec
