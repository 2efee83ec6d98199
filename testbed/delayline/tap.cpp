// SPDX-License-Identifier: BSD-3-Clause
#include "tap.hpp"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>
#include <sched.h>
#include <system_error>

namespace hashi::delayline {
namespace {

[[noreturn]] void fail(const TapEnd& end, const std::string& what)
{
    throw std::system_error(errno, std::generic_category(), end.describe() + ": " + what);
}

// Restores the caller's namespace whatever happens in between, so the
// second tap is not created relative to the first one's namespace.
class NetnsGuard {
public:
    NetnsGuard() : home_(::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC))
    {
        if (!home_) {
            throw std::system_error(errno, std::generic_category(), "cannot open /proc/self/ns/net");
        }
    }
    NetnsGuard(const NetnsGuard&) = delete;
    NetnsGuard(NetnsGuard&&) = delete;
    NetnsGuard& operator=(NetnsGuard&&) = delete;
    NetnsGuard& operator=(const NetnsGuard&) = delete;
    ~NetnsGuard() { (void)::setns(home_.get(), CLONE_NEWNET); }

private:
    UniqueFd home_;
};

} // namespace

UniqueFd open_tap(const TapEnd& end)
{
    const std::string path = end.netns.starts_with('/') ? end.netns : "/run/netns/" + end.netns;
    UniqueFd ns(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!ns) {
        fail(end, "cannot open namespace " + path + " (does `ip netns list` show it?)");
    }
    NetnsGuard back_home;
    if (::setns(ns.get(), CLONE_NEWNET) != 0) {
        fail(end, "cannot enter namespace " + path + " (needs root)");
    }
    UniqueFd tap(::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC));
    if (!tap) {
        fail(end, "cannot open /dev/net/tun (is the tun driver built in?)");
    }
    ifreq ifr {};
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
    std::strncpy(ifr.ifr_name, end.ifname.c_str(), IFNAMSIZ - 1);
    if (::ioctl(tap.get(), TUNSETIFF, &ifr) != 0) {
        fail(end, "cannot create the tap (an interface of that name may exist already)");
    }
    // Without offloads the kernel would segment every TSO frame before
    // handing it to us, and forwarding 1 Gbit/s would take a core.
    if (::ioctl(tap.get(), TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6) != 0) {
        fail(end, "cannot enable checksum and TSO offloads on the tap");
    }
    return tap;
}

} // namespace hashi::delayline
