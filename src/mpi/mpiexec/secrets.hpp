// SPDX-License-Identifier: BSD-3-Clause
// The secrets mpiexec hands out: the job key every rank of a job shares
// (HASHI_JOB_KEY, which the provider uses to authenticate ranks to each
// other) and the per-rank tokens that ssh-launched ranks use to prove who
// they are on the PMI port. Random bytes, HMAC-SHA256, hex, and a
// comparison whose time does not depend on where two values differ.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hashi::mpiexec {

constexpr std::size_t secret_size = 32;
using Secret = std::array<std::uint8_t, secret_size>;

// From the kernel (getrandom); throws std::runtime_error if it cannot.
// The same type as impi::Nonce, whose generator it uses.
Secret random_secret();

// HMAC-SHA256(key, message).
Secret hmac_sha256(std::string_view key, std::string_view message);

// The job key of a federated job, the same in every cluster:
// HMAC-SHA256(material, "hashi rank key v1" || job id as 8 bytes big-endian).
// `material` is the job's IMPI secret, or with the weak IMPI methods what
// the clusters share instead (see Job::join_federation).
Secret derive_job_key(std::string_view material, std::uint64_t job_id);

// Lowercase hex, two digits a byte.
std::string to_hex(const Secret& s);
// Exactly 2 * secret_size hex digits (either case); nullopt otherwise.
std::optional<Secret> secret_from_hex(std::string_view hex);

// Constant-time equality (lengths are not secret).
bool same_secret(const Secret& a, const Secret& b);

} // namespace hashi::mpiexec
