// SPDX-License-Identifier: BSD-3-Clause
// What the provider offers (one fi_info for RDM endpoints) and how it answers
// an application's hints.
#pragma once

#include <rdma/fabric.h>

#include <cstddef>
#include <cstdint>

namespace hashi::fi {

// Capabilities, in the order they were built (v0 messages, v1 tagged, v2 RMA).
inline constexpr std::uint64_t provider_caps = FI_MSG | FI_SEND | FI_RECV | FI_MULTI_RECV | FI_TAGGED |
    FI_DIRECTED_RECV | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE | FI_LOCAL_COMM | FI_REMOTE_COMM;
inline constexpr std::uint64_t provider_msg_order = FI_ORDER_SAS | FI_ORDER_RAR | FI_ORDER_RAW | FI_ORDER_WAR |
    FI_ORDER_WAW | FI_ORDER_SAR | FI_ORDER_SAW | FI_ORDER_RAS | FI_ORDER_WAS | FI_ORDER_RMA_RAR | FI_ORDER_RMA_RAW |
    FI_ORDER_RMA_WAR | FI_ORDER_RMA_WAW;
inline constexpr std::size_t provider_iov_limit = 8;
inline constexpr std::size_t provider_inject_size = 4096;
inline constexpr std::size_t provider_tx_size = 4096;
inline constexpr std::size_t provider_rx_size = 4096;

// fi_getinfo's provider entry point.
int getinfo(std::uint32_t version, const char* node, const char* service, std::uint64_t flags, const fi_info* hints,
    fi_info** info);

} // namespace hashi::fi
