// SPDX-License-Identifier: BSD-3-Clause
// How a collective tells the transport how many of its processes send over
// the WAN at once, so each can pace itself to its share of the WAN rate
// instead of all of them bursting at line rate into the bottleneck.
//
// The share lives in a small process-wide structure that libhashi-coll
// exports under a C name (hashi_coll_wan_share); the `hashi` provider looks
// it up with dlsym(RTLD_DEFAULT) and, when it is present, paces its
// connections to other clusters to wan_rate / senders with
// SO_MAX_PACING_RATE. Other providers ignore it; the cap on concurrent
// senders that the algorithms keep is what protects the WAN then.
#pragma once

#include "hierarchy.hpp"

namespace hashi::coll {

// While alive, this process is one of `senders` processes of its cluster
// sending over the WAN at once. Nests; the innermost share wins.
class WanShare {
public:
    WanShare(const Hierarchy& h, int senders);
    ~WanShare();
    WanShare(const WanShare&) = delete;
    WanShare& operator=(const WanShare&) = delete;

private:
    int previous_;
};

} // namespace hashi::coll
