// SPDX-License-Identifier: BSD-3-Clause
// The SCASH wire protocol on the duplicated protocol communicator. Nothing
// else defines bytes on the wire.
//
// Requests go to the service thread of the target with kTagRequest and
// start with a MsgHeader; the answer comes back to the requesting
// (application) thread with kTagReply. The application thread has at most
// one request outstanding, so replies need no matching beyond the source.
//
//   PageGet      arg = global page, count pages (0 = 1)   reply: the raw pages
//   Diffs        count entries {DiffEntry, diff bytes}  reply: Ack
//   LockAcquire  arg = lock id              reply (when granted): count global pages to invalidate
//   LockRelease  arg = lock id, count global pages written    reply: Ack
//   Stop         to oneself at finalize     no reply
#ifndef HASHI_SCASH_PROTOCOL_HPP
#define HASHI_SCASH_PROTOCOL_HPP

#include <cstdint>

namespace hashi::scash {

inline constexpr int kTagRequest = 1;
inline constexpr int kTagReply = 2;

enum class MsgType : std::uint32_t { PageGet = 1, Diffs, LockAcquire, LockRelease, Ack, LockGrant, Stop };

struct MsgHeader {
    MsgType type;
    std::uint32_t count;
    std::uint64_t arg;
};

struct DiffEntry {
    std::uint64_t page; // global page
    std::uint32_t bytes;
    std::uint32_t reserved;
};

} // namespace hashi::scash
#endif
