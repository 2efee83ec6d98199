// SPDX-License-Identifier: BSD-3-Clause
// The address vector: a table of endpoint addresses whose index is the
// fi_addr_t. MPICH inserts all ranks at once, in rank order, and asserts
// that rank r gets index r; dynamic processes insert one at a time later.
#include "transport/domain_gate.hpp"
#include "transport/endpoint.hpp"
#include "transport/objects.hpp"

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>

namespace hashi::fi {

namespace {

int av_close(fid* f)
{
    auto* av = owner_of<av_obj>(reinterpret_cast<fid_av*>(f));
    if (av->refs > 0)
        return -FI_EBUSY;
    av->domain->refs--;
    delete av;
    return 0;
}

fi_ops av_fid_ops = {
    .size = sizeof(fi_ops),
    .close = gated<av_close>,
    .bind = no_bind,
    .control = no_control,
    .ops_open = no_ops_open,
    .tostr = no_tostr,
    .ops_set = no_ops_set,
};

int av_insert(fid_av* f, const void* addr, std::size_t count, fi_addr_t* fi_addr, std::uint64_t flags, void* context)
{
    return guarded([&]() -> int {
        auto* av = owner_of<av_obj>(f);
        if ((flags & ~FI_MORE) != 0)
            return -FI_EBADFLAGS;
        if (count > 0 && addr == nullptr)
            return -FI_EINVAL;
        (void)context;
        int inserted = 0;
        const auto* bytes = static_cast<const std::uint8_t*>(addr);
        for (std::size_t i = 0; i < count; ++i) {
            const std::uint8_t* one = bytes + i * address_size;
            auto a = endpoint_address::decode(one, address_size);
            if (!a) {
                log_error("fi_av_insert: entry %zu is not a hashi address (was it made by another provider?)", i);
                if (fi_addr != nullptr)
                    fi_addr[i] = FI_ADDR_NOTAVAIL;
                continue;
            }
            const fi_addr_t index = av->entries.size();
            av->entries.push_back(*a);
            endpoint_address::bytes raw;
            std::memcpy(raw.data(), one, address_size);
            av->raw.push_back(raw);
            if (fi_addr != nullptr)
                fi_addr[i] = index;
            for (endpoint* ep : av->endpoints)
                ep->on_av_insert(index, *a);
            ++inserted;
        }
        return inserted;
    });
}

int av_insertsvc(fid_av*, const char*, const char*, fi_addr_t*, std::uint64_t, void*)
{
    return -FI_ENOSYS;
}
int av_insertsym(fid_av*, const char*, std::size_t, const char*, std::size_t, fi_addr_t*, std::uint64_t, void*)
{
    return -FI_ENOSYS;
}
// MPICH never removes; removing would renumber nothing in a table AV, and a
// connection to the peer may still be draining, so it is not offered.
int av_remove(fid_av*, fi_addr_t*, std::size_t, std::uint64_t)
{
    return -FI_ENOSYS;
}

int av_lookup(fid_av* f, fi_addr_t fi_addr, void* addr, std::size_t* addrlen)
{
    auto* av = owner_of<av_obj>(f);
    if (addrlen == nullptr)
        return -FI_EINVAL;
    if (fi_addr >= av->raw.size())
        return -FI_EINVAL;
    const std::size_t room = *addrlen;
    *addrlen = address_size;
    if (addr != nullptr)
        std::memcpy(addr, av->raw[fi_addr].data(), std::min(room, address_size));
    return room < address_size ? -FI_ETOOSMALL : 0;
}

const char* av_straddr(fid_av*, const void* addr, char* buf, std::size_t* len)
{
    auto a = endpoint_address::decode(addr, address_size);
    const std::string s = a ? "hashi://" + a->describe() : std::string("hashi://invalid");
    if (buf != nullptr && len != nullptr && *len > 0) {
        std::snprintf(buf, *len, "%s", s.c_str());
    }
    if (len != nullptr)
        *len = s.size() + 1;
    return buf;
}

int av_set(fid_av*, fi_av_set_attr*, fid_av_set**, void*)
{
    return -FI_ENOSYS;
}

fi_ops_av av_ops = {
    .size = sizeof(fi_ops_av),
    .insert = gated<av_insert>,
    .insertsvc = gated<av_insertsvc>,
    .insertsym = gated<av_insertsym>,
    .remove = gated<av_remove>,
    .lookup = gated<av_lookup>,
    .straddr = gated<av_straddr>,
    .av_set = gated<av_set>,
};

} // namespace

int av_open(fid_domain* domain, fi_av_attr* attr, fid_av** out, void* context)
{
    return guarded([&]() -> int {
        auto* dom = owner_of<domain_obj>(domain);
        if (attr == nullptr)
            return -FI_EINVAL;
        // Named (shared) AVs are not offered. MPICH tries one first and must
        // see this fail: on success it would read a map address we never set.
        if (attr->name != nullptr)
            return -FI_ENOSYS;
        if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_TABLE && attr->type != FI_AV_MAP)
            return -FI_EINVAL;
        if (attr->rx_ctx_bits != 0)
            return -FI_EINVAL;
        if ((attr->flags & ~(FI_READ | FI_SYMMETRIC)) != 0)
            return -FI_EBADFLAGS;
        auto* av = new av_obj;
        av->box.owner = av;
        av->domain = dom;
        av->entries.reserve(attr->count);
        av->box.fid.fid.fclass = FI_CLASS_AV;
        av->box.fid.fid.context = context;
        av->box.fid.fid.ops = &av_fid_ops;
        av->box.fid.ops = &av_ops;
        dom->refs++;
        *out = &av->box.fid;
        return 0;
    });
}

} // namespace hashi::fi
