// SPDX-License-Identifier: BSD-3-Clause
// Which receive backend an endpoint uses: FI_HASHI_RECV=user (recv/
// user_backend.hpp), kernel (recv/kernel_backend.hpp, the o2g module) or
// auto, the default: kernel when the module's device is there and every
// stream of the job is plain TCP (the module cannot read protected or
// relayed streams), user otherwise.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace hashi::fi {

enum class recv_backend_kind : std::uint8_t { user, kernel, kernel_if_it_opens };

// nullopt with `err` set when FI_HASHI_RECV is not one of the three, or
// asks for kernel where it cannot work (no `device`, or streams that are
// not plain). `auto` with the device present gives kernel_if_it_opens: the
// engine falls back to user space, with a warning, if opening it fails.
std::optional<recv_backend_kind> recv_backend_from_environment(
    bool plain_streams, std::string& err, const char* device = "/dev/o2g");

} // namespace hashi::fi
