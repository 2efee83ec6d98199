// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target: arbitrary bytes from a process's PMI socket, cut into
// lines as mpiexec cuts them and fed to the PMI-1 server on behalf of
// several ranks. The server must answer or reject every line, never crash,
// never read out of bounds, and never send a reply longer than the client
// can read. The same lines go to the PMI port's authentication check, and
// the whole input to the decoder of what an ssh shim reads on stdin, which
// must refuse or accept without crashing or over-reading.
#include "mpi/mpiexec/pmi_auth.hpp"
#include "mpi/mpiexec/pmi_server.hpp"
#include "mpi/mpiexec/shim_handoff.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

using namespace hashi::mpiexec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    PmiJobInfo info;
    info.size = 4;
    info.universe_size = 4;
    info.process_mapping = "(vector,(0,2,2))";
    info.appnum = {0, 0, 1, 1};
    PmiServer server(info);
    // The first byte picks the sending rank of each line; out-of-range
    // ranks are fed too, as a buggy caller would.
    std::string_view bytes(reinterpret_cast<const char*>(data), size);
    {
        std::size_t pos = 0;
        ReadExact read = [&](char* buf, std::size_t n) {
            if (size - pos < n) {
                return false;
            }
            std::memcpy(buf, data + pos, n);
            pos += n;
            return true;
        };
        std::string why;
        auto handoff = decode_handoff(read, why);
        if (pos > size || (!handoff && why.empty())) {
            std::abort();
        }
    }
    const Secret token {};
    int rank = static_cast<unsigned char>(bytes[0]) % 6 - 1;
    bytes.remove_prefix(1);
    while (!bytes.empty()) {
        auto nl = bytes.find('\n');
        auto line = bytes.substr(0, nl == std::string_view::npos ? bytes.size() : nl + 1);
        bytes.remove_prefix(line.size());
        std::string why;
        if (auto claim = pmi_auth::parse_hello(line, why); claim) {
            (void)pmi_auth::proves(*claim, token);
        } else if (why.empty()) {
            std::abort();
        }
        auto result = server.handle(rank, line);
        for (const auto& reply : result.replies) {
            if (reply.line.empty() || reply.line.back() != '\n' || reply.rank < 0 || reply.rank >= info.size) {
                std::abort();
            }
        }
        if (!line.empty()) {
            rank = (rank + static_cast<unsigned char>(line[0])) % 6 - 1;
        }
    }
    return 0;
}
