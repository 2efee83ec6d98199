// SPDX-License-Identifier: BSD-3-Clause
// The TCP PMI port of the ssh launcher: which address to bind and which
// host:port to tell the ranks. It is bound to the one address the ranks are
// told to use, not to every interface, so it is not offered on networks
// that have no business reaching it.
#pragma once

#include "common/unique_fd.hpp"

#include <optional>
#include <string>
#include <vector>

namespace hashi::mpiexec {

struct PmiListener {
    UniqueFd fd;
    std::string advertised; // host:port for PMI_PORT
    std::string bound; // address:port actually bound, for messages
};

// `pmi_host` is HASHI_PMI_HOST (the name or address the ranks use),
// `bind_addr` HASHI_PMI_BIND (an IPv4 address to bind instead, 0.0.0.0 for
// every interface). Without either, the address is the local one the
// kernel would use towards the remote hosts, when they all agree on one;
// otherwise every interface, advertised under `local_name`. Throws
// std::runtime_error saying what to set when the port cannot be opened.
PmiListener open_pmi_listener(const std::optional<std::string>& pmi_host, const std::optional<std::string>& bind_addr,
    const std::vector<std::string>& remote_hosts, const std::string& local_name);

} // namespace hashi::mpiexec
