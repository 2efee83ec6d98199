// SPDX-License-Identifier: BSD-3-Clause
#include "scash/diff.hpp"

#include <cstring>

namespace hashi::scash {

namespace {

void put16(std::vector<std::byte>& out, std::size_t v)
{
    out.push_back(std::byte(v & 0xff));
    out.push_back(std::byte((v >> 8) & 0xff));
}

std::size_t get16(const std::byte* p)
{
    return std::size_t(p[0]) | (std::size_t(p[1]) << 8);
}

} // namespace

std::size_t encode_diff(std::span<const std::byte> twin, std::span<const std::byte> page, std::vector<std::byte>& out)
{
    const std::size_t n = page.size();
    const std::size_t start_size = out.size();
    std::size_t i = 0;
    while (i < n) {
        // Skip equal 8-byte words quickly; the run boundaries below are
        // still found byte by byte.
        while (i + 8 <= n && std::memcmp(&twin[i], &page[i], 8) == 0)
            i += 8;
        while (i < n && twin[i] == page[i])
            ++i;
        if (i == n)
            break;
        std::size_t end = i + 1;
        // A run may not exceed the 16-bit length field.
        while (end < n && twin[end] != page[end] && end - i < 0xffff)
            ++end;
        put16(out, i);
        put16(out, end - i);
        out.insert(out.end(), page.begin() + std::ptrdiff_t(i), page.begin() + std::ptrdiff_t(end));
        i = end;
    }
    return out.size() - start_size;
}

bool apply_diff(std::span<const std::byte> diff, std::span<std::byte> page)
{
    std::size_t i = 0;
    while (i < diff.size()) {
        if (diff.size() - i < 4)
            return false;
        const std::size_t off = get16(&diff[i]);
        const std::size_t len = get16(&diff[i + 2]);
        i += 4;
        if (len > diff.size() - i || off > page.size() || len > page.size() - off)
            return false;
        std::memcpy(&page[off], &diff[i], len);
        i += len;
    }
    return true;
}

} // namespace hashi::scash
