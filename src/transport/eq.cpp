// SPDX-License-Identifier: BSD-3-Clause
// The event queue (fi_eq_open). An RDM endpoint over TCP has no connection
// events to report and the address vector inserts synchronously, so the
// provider itself never writes an event: the queue carries what the
// application writes (fi_eq_write, when opened with FI_WRITE), and exists
// because libfabric's own tools (fi_pingpong, fabtests) open one before
// anything else and give up when a provider has none.
//
// Events are kept in order, errors among them; a read that meets an error
// entry at the head answers -FI_EAVAIL, as the libfabric man page asks.
// Waits (fi_eq_sread, and FI_GETWAIT for FI_WAIT_FD) use one eventfd that
// is readable while the queue holds anything. Any thread may use the queue:
// one mutex guards it, since an EQ is a fabric-level object and not bound
// by the domain's threading model.
#include "common/unique_fd.hpp"
#include "transport/objects.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rdma/fi_errno.h>

#include <chrono>
#include <cstring>
#include <mutex>

namespace hashi::fi {

namespace {

// What fi_eq_attr::size 0 means here: enough for any application's own
// bookkeeping; writes beyond the size answer -FI_EAGAIN.
constexpr std::size_t default_eq_size = 1024;

struct eq_entry {
    std::uint32_t event = 0;
    std::vector<std::uint8_t> bytes; // the event's buffer as written
    bool error = false;
    fi_eq_err_entry err {};
};

struct eq_obj {
    fid_box<fid_eq, eq_obj> box {};
    fabric_obj* fabric = nullptr;
    fi_eq_attr attr {};
    std::mutex lock;
    std::deque<eq_entry> entries;
    UniqueFd ready; // eventfd: its count is nonzero while entries is not empty

    // Called with lock held.
    void signal_state()
    {
        std::uint64_t v = 0;
        if (entries.empty()) {
            while (::read(ready.get(), &v, sizeof v) > 0) {
            }
        } else {
            v = 1;
            [[maybe_unused]] const auto n = ::write(ready.get(), &v, sizeof v);
        }
    }
};

eq_obj* eq_of(fid_eq* e)
{
    return owner_of<eq_obj>(e);
}

int eq_close(fid* f)
{
    auto* eq = eq_of(reinterpret_cast<fid_eq*>(f));
    eq->fabric->refs--;
    delete eq;
    return 0;
}

int eq_control(fid* f, int command, void* arg)
{
    auto* eq = eq_of(reinterpret_cast<fid_eq*>(f));
    if (command != FI_GETWAIT)
        return -FI_ENOSYS;
    if (eq->attr.wait_obj != FI_WAIT_FD)
        return -FI_ENODATA;
    if (arg == nullptr)
        return -FI_EINVAL;
    *static_cast<int*>(arg) = eq->ready.get();
    return 0;
}

fi_ops eq_fid_ops = {
    .size = sizeof(fi_ops),
    .close = eq_close,
    .bind = no_bind,
    .control = eq_control,
    .ops_open = no_ops_open,
    .tostr = no_tostr,
    .ops_set = no_ops_set,
};

ssize_t eq_read(fid_eq* e, std::uint32_t* event, void* buf, std::size_t len, std::uint64_t flags)
{
    return guarded([&]() -> ssize_t {
        if ((flags & ~static_cast<std::uint64_t>(FI_PEEK)) != 0)
            return -FI_EBADFLAGS;
        auto* eq = eq_of(e);
        std::lock_guard<std::mutex> g(eq->lock);
        if (eq->entries.empty())
            return -FI_EAGAIN;
        const eq_entry& head = eq->entries.front();
        if (head.error)
            return -FI_EAVAIL;
        if (len < head.bytes.size() || (buf == nullptr && !head.bytes.empty()))
            return -FI_ETOOSMALL;
        if (event != nullptr)
            *event = head.event;
        if (!head.bytes.empty())
            std::memcpy(buf, head.bytes.data(), head.bytes.size());
        const auto n = static_cast<ssize_t>(head.bytes.size());
        if ((flags & FI_PEEK) == 0) {
            eq->entries.pop_front();
            eq->signal_state();
        }
        return n;
    });
}

ssize_t eq_readerr(fid_eq* e, fi_eq_err_entry* out, std::uint64_t flags)
{
    return guarded([&]() -> ssize_t {
        if ((flags & ~static_cast<std::uint64_t>(FI_PEEK)) != 0)
            return -FI_EBADFLAGS;
        if (out == nullptr)
            return -FI_EINVAL;
        auto* eq = eq_of(e);
        std::lock_guard<std::mutex> g(eq->lock);
        if (eq->entries.empty() || !eq->entries.front().error)
            return -FI_EAGAIN;
        *out = eq->entries.front().err;
        if ((flags & FI_PEEK) == 0) {
            eq->entries.pop_front();
            eq->signal_state();
        }
        return static_cast<ssize_t>(sizeof(fi_eq_err_entry));
    });
}

// fi_eq_write: an event the application queues for itself (error entries
// come only from a provider, and this one has none to report).
ssize_t eq_write(fid_eq* e, std::uint32_t event, const void* buf, std::size_t len, std::uint64_t flags)
{
    return guarded([&]() -> ssize_t {
        auto* eq = eq_of(e);
        if ((eq->attr.flags & FI_WRITE) == 0)
            return -FI_EINVAL; // the queue was not opened for application writes
        if (flags != 0)
            return -FI_EBADFLAGS;
        if (buf == nullptr && len != 0)
            return -FI_EINVAL;
        std::lock_guard<std::mutex> g(eq->lock);
        if (eq->entries.size() >= eq->attr.size)
            return -FI_EAGAIN;
        eq_entry en;
        en.event = event;
        en.bytes.assign(static_cast<const std::uint8_t*>(buf), static_cast<const std::uint8_t*>(buf) + len);
        eq->entries.push_back(std::move(en));
        eq->signal_state();
        return static_cast<ssize_t>(len);
    });
}

ssize_t eq_sread(fid_eq* e, std::uint32_t* event, void* buf, std::size_t len, int timeout_ms, std::uint64_t flags)
{
    auto* eq = eq_of(e);
    if (eq->attr.wait_obj == FI_WAIT_NONE)
        return -FI_EINVAL; // a queue without a wait object cannot be waited on
    using clock = std::chrono::steady_clock;
    const auto until = clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
    for (;;) {
        const ssize_t r = eq_read(e, event, buf, len, flags);
        if (r != -FI_EAGAIN)
            return r;
        int wait = -1;
        if (timeout_ms >= 0) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - clock::now()).count();
            if (left <= 0)
                return -FI_EAGAIN;
            wait = static_cast<int>(left);
        }
        pollfd p {eq->ready.get(), POLLIN, 0};
        if (::poll(&p, 1, wait) < 0 && errno != EINTR)
            return -FI_EOTHER;
    }
}

const char* eq_strerror(fid_eq*, int prov_errno, const void*, char* buf, std::size_t len)
{
    const char* text = fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno);
    if (buf != nullptr && len > 0) {
        std::strncpy(buf, text, len - 1);
        buf[len - 1] = '\0';
        return buf;
    }
    return text;
}

fi_ops_eq eq_ops = {
    .size = sizeof(fi_ops_eq),
    .read = eq_read,
    .readerr = eq_readerr,
    .write = eq_write,
    .sread = eq_sread,
    .strerror = eq_strerror,
};

} // namespace

int eq_open(fid_fabric* fabric, fi_eq_attr* attr, fid_eq** out, void* context)
{
    return guarded([&]() -> int {
        if (attr == nullptr || out == nullptr)
            return -FI_EINVAL;
        if ((attr->flags & ~static_cast<std::uint64_t>(FI_WRITE)) != 0)
            return -FI_EBADFLAGS;
        fi_eq_attr a = *attr;
        switch (a.wait_obj) {
        case FI_WAIT_NONE:
        case FI_WAIT_FD:
            break;
        case FI_WAIT_UNSPEC:
        case FI_WAIT_MUTEX_COND:
            // Waiting is internal (fi_eq_sread): an eventfd serves both.
            break;
        default:
            return -FI_ENOSYS; // wait sets and others: not offered
        }
        if (a.size == 0)
            a.size = default_eq_size;
        UniqueFd ready(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
        if (!ready)
            return -FI_ENOMEM;
        auto* fab = owner_of<fabric_obj>(fabric);
        auto* eq = new eq_obj;
        eq->box.owner = eq;
        eq->box.fid.fid.fclass = FI_CLASS_EQ;
        eq->box.fid.fid.context = context;
        eq->box.fid.fid.ops = &eq_fid_ops;
        eq->box.fid.ops = &eq_ops;
        eq->fabric = fab;
        eq->attr = a;
        eq->ready = std::move(ready);
        fab->refs++;
        *out = &eq->box.fid;
        return 0;
    });
}

} // namespace hashi::fi
