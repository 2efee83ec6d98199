// SPDX-License-Identifier: BSD-3-Clause
// Hierarchical alltoallv: every block crosses the WAN once, sent by one of
// at most L = min(t.wan_senders, cluster size) lanes of its cluster.
//
// Lane l of cluster A sends, to every rank of every other cluster, the
// blocks of the "sources" it serves: the ranks of A at lane positions
// p = l (mod L), itself included. A source that is not a lane hands its
// remote-bound blocks to its lane first (with their sizes, the only counts
// the lane does not know). Blocks between two ranks of one cluster go
// directly, at the same time as the WAN traffic.
//
// Why lanes send to each destination instead of one exchange per lane pair
// followed by a local delivery: on the target grid a node's own link (not
// the WAN) is the bottleneck, and with one rank per node every rank is a
// lane, so this way no byte crosses a node link twice, while a lane-pair
// exchange sends each remote block over the local network once more on one
// side. What bounds the WAN is the number of concurrent senders per cluster
// pair (L), which this keeps. With several ranks per node, a source at lane
// position p is usually on the node of lane p mod L (lanes are node-spread),
// so its hand-over goes through shared memory.
#include "../algorithms.hpp"
#include "../datatype.hpp"
#include "../pacing.hpp"
#include "ring_blocks.hpp" // WireType

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace hashi::coll::algo {

namespace {

constexpr int tag_local = 1; // a block between two ranks of one cluster
constexpr int tag_sizes = 2; // a source's remote block sizes, to its lane
constexpr int tag_handover = 3; // a source's remote blocks, to its lane
constexpr int tag_wan = 16; // + the source's lane position: a block crossing the WAN

// One block to send: `count` elements of `type` at `buf`, `bytes` of data.
struct Out {
    const void* buf = nullptr;
    MPI_Count count = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Count bytes = 0;
};

// A block a lane receives from one of its sources and passes on.
struct Relay {
    int dest = 0;
    int tag = 0;
    char* data = nullptr;
    MPI_Count bytes = 0;
};

int lanes_of(const Hierarchy& h, const Tuning& t, int cluster)
{
    return std::max(1, std::min(t.wan_senders, h.cluster_size(cluster)));
}

// The lane that sends rank s's blocks over the WAN.
int lane_for(const Hierarchy& h, const Tuning& t, int s)
{
    const int c = h.cluster_of[s];
    return h.lanes[c][h.lane_of[s] % lanes_of(h, t, c)];
}

} // namespace

int alltoallv_hier(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype, void* recvbuf,
    const int* recvcounts, const int* rdispls, MPI_Datatype recvtype, const Hierarchy& h, const Tuning& t)
{
    // Tags carry the source's lane position; a cluster too large for the
    // tag space (never on real grids) goes to MPICH. Every rank sees the
    // same bound and sizes, so all take the same path.
    int* tag_ub = nullptr;
    int has_ub = 0;
    PMPI_Comm_get_attr(h.comm, MPI_TAG_UB, &tag_ub, &has_ub);
    if (!has_ub || *tag_ub < tag_wan + h.max_cluster_size)
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, h.comm);

    const int P = h.size, me = h.rank, A = h.my_cluster;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    int rc = MPI_SUCCESS;
    // Checked before any message moves, so a bad count is this rank's error
    // (as in MPICH) and never a wrong size handed to a lane.
    for (int d = 0; d < P; ++d)
        if (recvcounts[d] < 0 || (!in_place && sendcounts[d] < 0))
            return MPI_ERR_COUNT;

    MPI_Count rsize = 0;
    if ((rc = PMPI_Type_size_c(recvtype, &rsize)) != MPI_SUCCESS)
        return rc;
    const TypeInfo rinfo = type_info(recvtype);
    const WireType rwire(recvtype), swire(in_place ? MPI_DATATYPE_NULL : sendtype);

    // What this rank sends to each rank. In place, the data to send is in
    // recvbuf, which receives overwrite: pack it away first.
    std::vector<Out> out(P);
    std::unique_ptr<char[]> packed;
    if (in_place) {
        MPI_Count total = 0;
        for (int d = 0; d < P; ++d)
            total += recvcounts[d] * rsize;
        packed = std::make_unique<char[]>(std::max<MPI_Count>(total, 1));
        MPI_Count pos = 0;
        for (int d = 0; d < P; ++d) {
            const MPI_Count at = pos;
            rc = PMPI_Pack_c(
                element(recvbuf, rinfo, rdispls[d]), recvcounts[d], recvtype, packed.get(), total, &pos, h.comm);
            if (rc != MPI_SUCCESS)
                return rc;
            out[d] = {packed.get() + at, pos - at, MPI_PACKED, pos - at};
        }
    } else {
        MPI_Count ssize = 0;
        if ((rc = PMPI_Type_size_c(sendtype, &ssize)) != MPI_SUCCESS)
            return rc;
        const TypeInfo sinfo = type_info(sendtype);
        for (int d = 0; d < P; ++d)
            out[d] = {element(sendbuf, sinfo, sdispls[d]), sendcounts[d], swire.get(), sendcounts[d] * ssize};
    }

    const int my_lanes = lanes_of(h, t, A);
    const bool lane = h.my_lane < my_lanes;
    std::vector<int> remote; // ranks of other clusters, ascending
    for (int d = 0; d < P; ++d)
        if (h.cluster_of[d] != A)
            remote.push_back(d);
    const auto nremote = static_cast<int>(remote.size());

    std::vector<MPI_Request> reqs, size_reqs, relay_reqs;
    auto post = [&](int r) {
        if (r == MPI_SUCCESS)
            return true;
        rc = r;
        return false;
    };
    // On an error, receives still pending would write into buffers that are
    // about to be freed: cancel what is pending, then return the error.
    auto give_up = [&]() {
        for (auto* list : {&reqs, &size_reqs, &relay_reqs}) {
            for (MPI_Request& r : *list)
                PMPI_Cancel(&r);
            PMPI_Waitall(static_cast<int>(list->size()), list->data(), MPI_STATUSES_IGNORE);
        }
        return rc;
    };

    // Receives first, so nothing waits in unexpected queues: from my own
    // cluster directly, from others through the source's lane.
    for (int s = 0; s < P; ++s) {
        if (recvcounts[s] * rsize == 0)
            continue;
        const bool local = h.cluster_of[s] == A;
        const int from = local ? s : lane_for(h, t, s);
        const int tag = local ? tag_local : tag_wan + h.lane_of[s];
        MPI_Request r;
        if (!post(PMPI_Irecv_c(element(recvbuf, rinfo, rdispls[s]), recvcounts[s], rwire.get(), from, tag, h.comm, &r)))
            return give_up();
        reqs.push_back(r);
    }

    // A lane learns how big each remote-bound block of its sources is.
    std::vector<int> sources; // ranks whose remote blocks I send, myself excluded
    if (lane && nremote > 0)
        for (int p = h.my_lane + my_lanes; p < h.my_cluster_size(); p += my_lanes)
            sources.push_back(h.lanes[A][p]);
    std::vector<std::vector<MPI_Count>> sizes(sources.size(), std::vector<MPI_Count>(nremote));
    size_reqs.assign(sources.size(), MPI_REQUEST_NULL);
    for (std::size_t i = 0; i < sources.size(); ++i)
        if (!post(PMPI_Irecv(sizes[i].data(), nremote, MPI_COUNT, sources[i], tag_sizes, h.comm, &size_reqs[i])))
            return give_up();

    std::unique_ptr<WanShare> share;
    std::vector<MPI_Count> my_sizes;
    if (lane) {
        // My own blocks go over the WAN at once; they need no hand-over.
        if (nremote > 0)
            share = std::make_unique<WanShare>(h, my_lanes);
        for (int d : remote) {
            if (out[d].bytes == 0)
                continue;
            MPI_Request r;
            if (!post(PMPI_Isend_c(out[d].buf, out[d].count, out[d].type, d, tag_wan + h.my_lane, h.comm, &r)))
                return give_up();
            reqs.push_back(r);
        }
    } else if (nremote > 0) {
        const int to = lane_for(h, t, me);
        for (int d : remote)
            my_sizes.push_back(out[d].bytes);
        MPI_Request r;
        if (!post(PMPI_Isend(my_sizes.data(), nremote, MPI_COUNT, to, tag_sizes, h.comm, &r)))
            return give_up();
        reqs.push_back(r);
        for (int d : remote) {
            if (out[d].bytes == 0)
                continue;
            if (!post(PMPI_Isend_c(out[d].buf, out[d].count, out[d].type, to, tag_handover, h.comm, &r)))
                return give_up();
            reqs.push_back(r);
        }
    }

    for (int d : h.members[A]) {
        if (out[d].bytes == 0)
            continue;
        MPI_Request r;
        if (!post(PMPI_Isend_c(out[d].buf, out[d].count, out[d].type, d, tag_local, h.comm, &r)))
            return give_up();
        reqs.push_back(r);
    }

    if (!sources.empty()) {
        // Relay my sources' blocks, each as soon as it has arrived. A source
        // sends them in the order of `remote` on one tag, and the receives
        // are posted in that order, so each lands in its own slot.
        if (!post(PMPI_Waitall(static_cast<int>(size_reqs.size()), size_reqs.data(), MPI_STATUSES_IGNORE)))
            return give_up();
        std::vector<std::unique_ptr<char[]>> store;
        std::vector<Relay> relays;
        for (std::size_t i = 0; i < sources.size(); ++i) {
            MPI_Count total = 0;
            for (MPI_Count b : sizes[i])
                total += b;
            store.push_back(std::make_unique<char[]>(std::max<MPI_Count>(total, 1)));
            char* at = store.back().get();
            for (int k = 0; k < nremote; ++k) {
                if (sizes[i][k] == 0)
                    continue;
                relays.push_back({remote[k], tag_wan + h.lane_of[sources[i]], at, sizes[i][k]});
                MPI_Request r;
                if (!post(PMPI_Irecv_c(at, sizes[i][k], MPI_PACKED, sources[i], tag_handover, h.comm, &r)))
                    return give_up();
                relay_reqs.push_back(r);
                at += sizes[i][k];
            }
        }
        for (std::size_t left = relays.size(); left > 0; --left) {
            int i = MPI_UNDEFINED;
            if (!post(PMPI_Waitany(static_cast<int>(relay_reqs.size()), relay_reqs.data(), &i, MPI_STATUS_IGNORE)))
                return give_up();
            if (i == MPI_UNDEFINED)
                break;
            const Relay& x = relays[i];
            MPI_Request r;
            if (!post(PMPI_Isend_c(x.data, x.bytes, MPI_PACKED, x.dest, x.tag, h.comm, &r)))
                return give_up();
            reqs.push_back(r);
        }
        // The relayed sends read from `store`: finish before it goes.
        return PMPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
    }
    return PMPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
}

} // namespace hashi::coll::algo
