// SPDX-License-Identifier: BSD-3-Clause
// hashi-info's lines about the o2g kernel module (kmod/): loaded or not,
// its version, whether /dev/o2g is there, its parameters and its counters
// (what it holds now, how often each path ran or failed), read from
// /sys/module/o2g and /sys/class/misc/o2g/counters.
#pragma once

#include <ostream>

namespace hashi {

void print_kernel_module(std::ostream& out);

} // namespace hashi
