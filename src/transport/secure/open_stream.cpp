// SPDX-License-Identifier: BSD-3-Clause
#include "transport/secure/open_stream.hpp"

#include "transport/secure/integrity_stream.hpp"
#include "transport/secure/plain_stream.hpp"
#include "transport/secure/tls_stream.hpp"

#include <stdexcept>

namespace hashi::secure {

std::unique_ptr<byte_stream> open_stream(int fd, protection level, stream_role role,
    std::span<const std::uint8_t> key, std::span<const std::uint8_t> binding, std::string& error,
    const stream_options& opt)
{
    try {
        switch (level) {
        case protection::none:
            return std::make_unique<plain_stream>(fd);
        case protection::integrity: {
            const secret c2a = derive_secret(key, binding, connector_to_acceptor_label);
            const secret a2c = derive_secret(key, binding, acceptor_to_connector_label);
            const bool conn = role == stream_role::connector;
            return std::make_unique<integrity_stream>(fd, conn ? c2a : a2c, conn ? a2c : c2a, opt.integrity_mac);
        }
        case protection::encryption:
            return std::make_unique<tls_stream>(fd, role, derive_secret(key, binding, tls_psk_label), opt.tls);
        }
        error = "unknown protection level";
    } catch (const std::exception& e) {
        error = std::string("cannot open a ") + protection_name(level) + " stream: " + e.what();
    }
    return nullptr;
}

} // namespace hashi::secure
