// SPDX-License-Identifier: BSD-3-Clause
// FI_HASHI_RECV (backend_choice.hpp).
#include "transport/recv/backend_choice.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace hashi::fi {

std::optional<recv_backend_kind> recv_backend_from_environment(bool plain_streams, std::string& err, const char* device)
{
    const char* v = std::getenv("FI_HASHI_RECV");
    // The default is user: the module matches every tagged message now
    // (MPI_Probe and rendezvous included), but a rank receiving through it
    // is not faster yet (bench/kmod: 0.73x the message rate, kmod/README.md),
    // so loading the module must not change a job that did not ask for it.
    const std::string_view want = v != nullptr && *v != '\0' ? v : "user";
    const bool present = ::access(device, F_OK) == 0;
    if (want == "user")
        return recv_backend_kind::user;
    if (want == "auto")
        return present && plain_streams ? recv_backend_kind::kernel_if_it_opens : recv_backend_kind::user;
    if (want != "kernel") {
        err = "FI_HASHI_RECV=" + std::string(want) + " is not a receive backend: use user, kernel or auto";
        return std::nullopt;
    }
    if (!present) {
        err = std::string("FI_HASHI_RECV=kernel, but ") + device +
            " does not exist: load the o2g module (modprobe o2g; package hashi-o2g-dkms) or use FI_HASHI_RECV=user";
        return std::nullopt;
    }
    if (!plain_streams) {
        err = "FI_HASHI_RECV=kernel reads plain TCP only, and this job's streams go through relays or are "
              "protected (HASHI_RELAYS, FI_HASHI_PROTECT_LOCAL): use FI_HASHI_RECV=user";
        return std::nullopt;
    }
    return recv_backend_kind::kernel;
}

} // namespace hashi::fi
