// SPDX-License-Identifier: BSD-3-Clause
#include "startup_tables.hpp"

#include <algorithm>
#include <limits>

namespace hashi::impi {
namespace {

constexpr std::uint32_t min_tag_ub = 32767; // IMPI_MINIMUM_TAG_UB

// Bytes per unit of a label: per client (C_), per host (H_), per proc (P_).
enum class Scope { client, host, proc, opaque };
struct LabelShape {
    Scope scope;
    std::size_t unit;
};

LabelShape shape_of(std::uint32_t l)
{
    switch (l) {
    case label::c_version:
        return {Scope::client, 0}; // a list of {major, minor}, checked apart
    case label::c_nhosts:
    case label::c_nprocs:
    case label::c_datalen:
    case label::c_tagub:
    case label::c_coll_xsize:
    case label::c_coll_maxlinear:
    case label::hashi_ext:
        return {Scope::client, 4};
    case label::h_ipv6:
        return {Scope::host, 16};
    case label::h_port:
    case label::h_nprocs:
    case label::h_ackmark:
    case label::h_hiwater:
        return {Scope::host, 4};
    case label::p_ipv6:
        return {Scope::proc, 16};
    case label::p_pid:
        return {Scope::proc, 8};
    case label::hashi_p_host:
        return {Scope::proc, 4};
    default:
        return {Scope::opaque, 0};
    }
}

std::string hex_label(std::uint32_t l)
{
    static const char* digits = "0123456789abcdef";
    std::string s = "0x";
    for (int shift = 12; shift >= 0; shift -= 4) {
        s += digits[(l >> shift) & 0xf];
    }
    return s;
}

Bytes u32s(const std::vector<std::uint32_t>& values)
{
    Writer w;
    for (auto v : values) {
        w.u32(v);
    }
    return w.take();
}

std::vector<std::uint32_t> read_u32s(ByteView b)
{
    Reader in(b);
    std::vector<std::uint32_t> v;
    while (auto x = in.u32()) {
        v.push_back(*x);
    }
    return v;
}

// Cuts a concatenation into the contributions of the clients in `mask`.
// `size_of(k)` is client k's contribution size; nullopt for a variable one
// (only C_VERSION, which the caller cuts itself).
template <typename SizeOf>
std::optional<std::map<std::uint32_t, ByteView>> split(const CollOut& reply, std::uint32_t nclients, SizeOf size_of)
{
    std::map<std::uint32_t, ByteView> parts;
    Reader in(reply.data);
    for (std::uint32_t k = 0; k < nclients; ++k) {
        if ((reply.client_mask & (1u << k)) == 0) {
            continue;
        }
        auto part = in.take(size_of(k));
        if (!part) {
            return std::nullopt;
        }
        parts[k] = *part;
    }
    if (!in.at_end()) {
        return std::nullopt;
    }
    return parts;
}

} // namespace

Ipv6 ipv4_mapped(std::uint32_t ipv4)
{
    Ipv6 a {};
    a[10] = 0xff;
    a[11] = 0xff;
    a[12] = static_cast<std::uint8_t>(ipv4 >> 24);
    a[13] = static_cast<std::uint8_t>(ipv4 >> 16);
    a[14] = static_cast<std::uint8_t>(ipv4 >> 8);
    a[15] = static_cast<std::uint8_t>(ipv4);
    return a;
}

std::vector<CollIn> contributions(const LocalClient& c)
{
    const auto nhosts = static_cast<std::uint32_t>(c.host_addr.size());
    const auto nprocs = static_cast<std::uint32_t>(c.host_of_proc.size());
    std::vector<std::uint32_t> per_host_procs(nhosts, 0);
    for (int h : c.host_of_proc) {
        ++per_host_procs[static_cast<std::size_t>(h)];
    }
    Writer host_ips;
    for (const auto& a : c.host_addr) {
        host_ips.bytes(a);
    }
    Writer proc_ips;
    Writer pids;
    std::vector<std::uint32_t> hosts;
    for (std::uint32_t p = 0; p < nprocs; ++p) {
        proc_ips.bytes(c.host_addr[static_cast<std::size_t>(c.host_of_proc[p])]);
        // Procs are not started before the startup ends (their global rank
        // comes from it), so the "pid" is the proc's index in the client:
        // unique per host, which is all IMPI asks.
        pids.u64(p);
        hosts.push_back(static_cast<std::uint32_t>(c.host_of_proc[p]));
    }
    auto minus_one = static_cast<std::uint32_t>(-1); // "default" for the COLL_ labels
    return {
        {label::c_version, u32s({0, 0})},
        {label::c_nhosts, u32s({nhosts})},
        {label::c_nprocs, u32s({nprocs})},
        {label::c_datalen, u32s({c.datalen})},
        {label::c_tagub, u32s({0x7fffffff})},
        {label::c_coll_xsize, u32s({minus_one})},
        {label::c_coll_maxlinear, u32s({minus_one})},
        {label::h_ipv6, host_ips.take()},
        {label::h_port, u32s(std::vector<std::uint32_t>(nhosts, 0))}, // no IMPI host mesh: the provider connects
        {label::h_nprocs, u32s(per_host_procs)},
        {label::h_ackmark, u32s(std::vector<std::uint32_t>(nhosts, c.ackmark))},
        {label::h_hiwater, u32s(std::vector<std::uint32_t>(nhosts, c.hiwater))},
        {label::p_ipv6, proc_ips.take()},
        {label::p_pid, pids.take()},
        {label::hashi_ext, u32s({hashi_ext_version})},
        {label::hashi_p_host, u32s(hosts)},
    };
}

std::string check_contribution(std::uint32_t l, ByteView data, ClientShape& shape)
{
    auto s = shape_of(l);
    auto name = "label " + hex_label(l);
    if (l == label::c_version) {
        if (data.empty() || data.size() % 8 != 0 || data.size() > 8 * 16) {
            return name + " (C_VERSION) must hold 1 to 16 {major, minor} pairs, got " + std::to_string(data.size()) +
                " bytes";
        }
        return {};
    }
    std::size_t count = 1;
    if (s.scope == Scope::opaque) {
        return {};
    }
    if (s.scope == Scope::host || s.scope == Scope::proc) {
        count = s.scope == Scope::host ? shape.nhosts : shape.nprocs;
        if (count == 0) {
            return name + " came before C_NHOSTS and C_NPROCS, which give its size";
        }
    }
    if (data.size() != count * s.unit) {
        return name + " must have " + std::to_string(count * s.unit) + " bytes, got " + std::to_string(data.size());
    }
    if (l == label::c_nhosts || l == label::c_nprocs) {
        auto v = *Reader(data).u32();
        auto limit = l == label::c_nhosts ? max_hosts_per_client : max_procs_per_client;
        auto& field = l == label::c_nhosts ? shape.nhosts : shape.nprocs;
        if (field != 0) {
            return name + " sent twice";
        }
        if (v == 0 || v > limit) {
            return name + " value " + std::to_string(v) + " is out of range (1.." + std::to_string(limit) + ")";
        }
        field = v;
    }
    return {};
}

std::uint32_t Federation::total_procs() const
{
    return rank_offset(clients.size());
}

std::uint32_t Federation::rank_offset(std::size_t k) const
{
    std::uint32_t n = 0;
    for (std::size_t i = 0; i < k && i < clients.size(); ++i) {
        n += clients[i].nprocs;
    }
    return n;
}

std::uint32_t Federation::host_offset(std::size_t k) const
{
    std::uint32_t n = 0;
    for (std::size_t i = 0; i < k && i < clients.size(); ++i) {
        n += clients[i].nhosts;
    }
    return n;
}

std::optional<Federation> negotiate(
    const std::map<std::uint32_t, CollOut>& replies, std::uint32_t nclients, std::string& error)
{
    if (nclients == 0 || nclients > max_clients) {
        error = "the job has " + std::to_string(nclients) + " clients (1.." + std::to_string(max_clients) + " allowed)";
        return std::nullopt;
    }
    const std::uint32_t all = nclients == 32 ? 0xffffffffu : (1u << nclients) - 1;
    auto get = [&](std::uint32_t l, const char* what) -> const CollOut* {
        auto it = replies.find(l);
        if (it == replies.end()) {
            error = std::string("the server sent no ") + what + " label";
            return nullptr;
        }
        if (l != label::hashi_ext && l != label::hashi_p_host && it->second.client_mask != all) {
            error = std::string(what) + " is missing from some clients (mask " +
                std::to_string(it->second.client_mask) + ")";
            return nullptr;
        }
        return &it->second;
    };
    Federation f;
    f.clients.resize(nclients);

    // Shape first: C_NHOSTS and C_NPROCS size every other label.
    for (auto [l, what] : {std::pair {label::c_nhosts, "C_NHOSTS"}, std::pair {label::c_nprocs, "C_NPROCS"}}) {
        const auto* r = get(l, what);
        if (r == nullptr) {
            return std::nullopt;
        }
        auto values = read_u32s(r->data);
        if (r->data.size() != 4 * nclients) {
            error = std::string(what) + " has the wrong size";
            return std::nullopt;
        }
        for (std::uint32_t k = 0; k < nclients; ++k) {
            ClientShape shape;
            if (auto e = check_contribution(l, ByteView(r->data).subspan(4 * k, 4), shape); !e.empty()) {
                error = "client " + std::to_string(k) + ": " + e;
                return std::nullopt;
            }
            f.clients[k].present = true;
            (l == label::c_nhosts ? f.clients[k].nhosts : f.clients[k].nprocs) = values[k];
        }
    }
    if (f.total_procs() > std::numeric_limits<std::int32_t>::max() / 2) {
        error = "too many processes in the job";
        return std::nullopt;
    }

    // Version 0.0 must be in every client's list.
    if (const auto* r = get(label::c_version, "C_VERSION"); r == nullptr) {
        return std::nullopt;
    } else {
        auto v = read_u32s(r->data);
        std::uint32_t found = 0;
        for (std::size_t i = 0; i + 1 < v.size(); i += 2) {
            if (v[i] == 0 && v[i + 1] == 0) {
                ++found;
            }
        }
        if (r->data.size() % 8 != 0 || found < nclients) {
            error = "not every client supports IMPI version 0.0";
            return std::nullopt;
        }
    }

    // One Int4 per client: minimum, or agreement.
    auto per_client = [&](std::uint32_t l, const char* what) -> std::optional<std::vector<std::uint32_t>> {
        const auto* r = get(l, what);
        if (r == nullptr) {
            return std::nullopt;
        }
        if (r->data.size() != 4 * nclients) {
            error = std::string(what) + " has the wrong size";
            return std::nullopt;
        }
        return read_u32s(r->data);
    };
    auto datalen = per_client(label::c_datalen, "C_DATALEN");
    auto tagub = datalen ? per_client(label::c_tagub, "C_TAGUB") : std::nullopt;
    auto xsize = tagub ? per_client(label::c_coll_xsize, "C_COLL_XSIZE") : std::nullopt;
    auto maxlinear = xsize ? per_client(label::c_coll_maxlinear, "C_COLL_MAXLINEAR") : std::nullopt;
    if (!maxlinear) {
        return std::nullopt;
    }
    f.datalen = *std::min_element(datalen->begin(), datalen->end());
    f.tagub = *std::min_element(tagub->begin(), tagub->end());
    if (f.datalen == 0 || f.tagub < min_tag_ub || f.tagub > 0x7fffffff) {
        error = "negotiated C_DATALEN " + std::to_string(f.datalen) + " or C_TAGUB " + std::to_string(f.tagub) +
            " is out of range (DATALEN >= 1, 32767 <= TAGUB <= 2147483647)";
        return std::nullopt;
    }
    for (auto [values, what, out] : {std::tuple {&*xsize, "C_COLL_XSIZE", &f.coll_xsize},
             std::tuple {&*maxlinear, "C_COLL_MAXLINEAR", &f.coll_maxlinear}}) {
        for (std::uint32_t k = 1; k < nclients; ++k) {
            if ((*values)[k] != (*values)[0]) {
                error = std::string(what) + " differs: client 0 says " +
                    std::to_string(static_cast<std::int32_t>((*values)[0])) + ", client " + std::to_string(k) +
                    " says " + std::to_string(static_cast<std::int32_t>((*values)[k]));
                return std::nullopt;
            }
        }
        *out = static_cast<std::int32_t>((*values)[0]);
    }

    // Per-host labels: sizes, proc counts, minimum ack window.
    auto host_size = [&](std::size_t unit) {
        return [&f, unit](std::uint32_t k) { return f.clients[k].nhosts * unit; };
    };
    auto proc_size = [&](std::size_t unit) {
        return [&f, unit](std::uint32_t k) { return f.clients[k].nprocs * unit; };
    };
    std::map<std::uint32_t, std::map<std::uint32_t, ByteView>> cut;
    for (auto [l, what, unit, per_proc] : {std::tuple {label::h_ipv6, "H_IPV6", 16, false},
             std::tuple {label::h_port, "H_PORT", 4, false}, std::tuple {label::h_nprocs, "H_NPROCS", 4, false},
             std::tuple {label::h_ackmark, "H_ACKMARK", 4, false}, std::tuple {label::h_hiwater, "H_HIWATER", 4, false},
             std::tuple {label::p_ipv6, "P_IPV6", 16, true}, std::tuple {label::p_pid, "P_PID", 8, true}}) {
        const auto* r = get(l, what);
        if (r == nullptr) {
            return std::nullopt;
        }
        auto parts = per_proc ? split(*r, nclients, proc_size(unit)) : split(*r, nclients, host_size(unit));
        if (!parts) {
            error = std::string(what) + " does not match the clients' host and proc counts";
            return std::nullopt;
        }
        cut[l] = std::move(*parts);
    }
    f.ackmark = std::numeric_limits<std::uint32_t>::max();
    f.hiwater = std::numeric_limits<std::uint32_t>::max();
    for (std::uint32_t k = 0; k < nclients; ++k) {
        auto counts = read_u32s(cut[label::h_nprocs][k]);
        std::uint64_t sum = 0;
        for (auto c : counts) {
            sum += c;
        }
        if (sum != f.clients[k].nprocs) {
            error = "client " + std::to_string(k) + ": H_NPROCS adds up to " + std::to_string(sum) +
                ", C_NPROCS says " + std::to_string(f.clients[k].nprocs);
            return std::nullopt;
        }
        for (auto a : read_u32s(cut[label::h_ackmark][k])) {
            f.ackmark = std::min(f.ackmark, a);
        }
        for (auto h : read_u32s(cut[label::h_hiwater][k])) {
            f.hiwater = std::min(f.hiwater, h);
        }
        // Without Hashi's per-proc host label, a client's procs fill its
        // hosts in order, as H_NPROCS counts them.
        for (std::uint32_t h = 0; h < counts.size(); ++h) {
            f.clients[k].host_of_proc.insert(f.clients[k].host_of_proc.end(), counts[h], static_cast<int>(h));
        }
    }
    if (f.ackmark == 0 || f.ackmark > f.hiwater) {
        error = "negotiated H_ACKMARK " + std::to_string(f.ackmark) + " and H_HIWATER " + std::to_string(f.hiwater) +
            " break 1 <= ACKMARK <= HIWATER";
        return std::nullopt;
    }

    // Hashi's labels: only from clients that announced the extension.
    if (auto it = replies.find(label::hashi_ext); it != replies.end()) {
        auto parts = split(it->second, nclients, [](std::uint32_t) { return std::size_t {4}; });
        if (!parts) {
            error = "the Hashi extension label has the wrong size";
            return std::nullopt;
        }
        for (auto& [k, v] : *parts) {
            f.clients[k].hashi = *Reader(v).u32() >= hashi_ext_version;
        }
    }
    if (auto it = replies.find(label::hashi_p_host); it != replies.end()) {
        auto parts = split(it->second, nclients, proc_size(4));
        if (!parts) {
            error = "the Hashi proc-host label does not match the clients' proc counts";
            return std::nullopt;
        }
        for (auto& [k, v] : *parts) {
            auto hosts = read_u32s(v);
            auto& c = f.clients[k];
            for (auto h : hosts) {
                if (h >= c.nhosts) {
                    error = "client " + std::to_string(k) + " places a proc on host " + std::to_string(h) + " of " +
                        std::to_string(c.nhosts);
                    return std::nullopt;
                }
            }
            c.host_of_proc.assign(hosts.begin(), hosts.end());
        }
    }
    return f;
}

} // namespace hashi::impi
