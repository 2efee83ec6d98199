// SPDX-License-Identifier: BSD-3-Clause
// lr_rab (Nguyen et al.): as lr_lr, but lane j of every cluster runs
// Rabenseifner across the clusters on its piece: recursive-halving
// reduce-scatter, recursive-doubling allgather, with MPICH's fold for a
// cluster count that is not a power of two. 2 ceil(log2 S) WAN latencies
// instead of lr_lr's 2(S-1).
#include "../algorithms.hpp"
#include "ring_blocks.hpp"

namespace hashi::coll::algo {

namespace {

void wan_rabenseifner(
    Schedule& s, const std::vector<int>& peers, int me, Block b, void* buf, void* temp, const TypeInfo& ti)
{
    const int n = static_cast<int>(peers.size());
    if (n < 2 || b.count == 0)
        return;
    int pof2 = 1;
    while (pof2 * 2 <= n)
        pof2 *= 2;
    const int rem = n - pof2;
    void* mine = element(buf, ti, b.begin);

    // Fold: of the first 2*rem peers, each even one hands its piece to the
    // odd one after it and gets the result back at the end.
    int v; // my index among the pof2 that remain
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            s.push_back({{{peers[me + 1], mine, b.count, true}}, {}});
            s.push_back({{{peers[me + 1], mine, b.count, false}}, {}});
            return;
        }
        s.push_back({{{peers[me - 1], temp, b.count, false}}, {{temp, mine, b.count}}});
        v = me / 2;
    } else {
        v = me - rem;
    }
    auto peer_of = [&](int w) { return peers[w < rem ? 2 * w + 1 : w + rem]; };
    // Block i of pof2 nearly equal blocks of b starts at bound(i).
    auto bound = [&](int i) { return b.begin + piece(b.count, pof2, i).first; };
    auto range = [&](int lo, int hi) -> std::pair<void*, int> {
        return {element(buf, ti, bound(lo)), static_cast<int>(bound(hi) - bound(lo))};
    };

    // Recursive halving: keep the half that holds block v, send the other.
    int lo = 0, hi = pof2;
    for (int mask = pof2 / 2; mask >= 1; mask /= 2) {
        const int mid = (lo + hi) / 2;
        const bool upper = (v & mask) != 0;
        const auto [give, give_n] = upper ? range(lo, mid) : range(mid, hi);
        if (upper)
            lo = mid;
        else
            hi = mid;
        const auto [keep, keep_n] = range(lo, hi);
        const int partner = peer_of(v ^ mask);
        s.push_back({{{partner, give, give_n, true}, {partner, temp, keep_n, false}}, {{temp, keep, keep_n}}});
    }
    // Recursive doubling: swap the blocks held with the partner group.
    for (int mask = 1; mask < pof2; mask *= 2) {
        const bool upper = (v & mask) != 0;
        const int olo = upper ? lo - mask : hi, ohi = upper ? lo : hi + mask;
        const auto [held, held_n] = range(lo, hi);
        const auto [other, other_n] = range(olo, ohi);
        const int partner = peer_of(v ^ mask);
        s.push_back({{{partner, held, held_n, true}, {partner, other, other_n, false}}, {}});
        lo = std::min(lo, olo);
        hi = std::max(hi, ohi);
    }
    if (me < 2 * rem)
        s.push_back({{{peers[me - 1], mine, b.count, true}}, {}});
}

} // namespace

int allreduce_lr_rab(
    const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, const Hierarchy& h, const Tuning& t)
{
    return hier_allreduce(sendbuf, recvbuf, count, type, op, h, t, {0, 1}, wan_rabenseifner);
}

} // namespace hashi::coll::algo
