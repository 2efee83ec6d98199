// SPDX-License-Identifier: BSD-3-Clause
#include "stats_file.hpp"

#include <cerrno>
#include <cstdio>
#include <sstream>
#include <system_error>

namespace hashi::delayline {

void write_stats_file(const std::string& path, std::uint64_t snapshot, const std::vector<NamedDirection>& directions)
{
    std::ostringstream text;
    text << "snapshot=" << snapshot << '\n';
    for (const NamedDirection& d : directions) {
        const DirectionStats& s = *d.stats;
        text << "direction=" << d.label << " from=" << d.from << " to=" << d.to << " frames=" << s.frames.get()
             << " bytes=" << s.bytes.get() << " lost_frames=" << s.lost_frames.get()
             << " lost_bytes=" << s.lost_bytes.get() << " queue_drop_frames=" << s.dropped_frames.get()
             << " queue_drop_bytes=" << s.dropped_bytes.get() << " write_errors=" << s.write_errors.get()
             << " peak_queue_bytes=" << s.peak_queue_bytes.get() << '\n';
    }
    const std::string body = text.str();
    // Written beside the file and renamed over it: rename is atomic, so a
    // reader never sees half a snapshot.
    const std::string temporary = path + ".tmp";
    std::FILE* out = std::fopen(temporary.c_str(), "w");
    if (out == nullptr) {
        throw std::system_error(errno, std::generic_category(), "writing " + temporary);
    }
    const bool written = std::fwrite(body.data(), 1, body.size(), out) == body.size();
    const int saved_errno = errno;
    if (std::fclose(out) != 0 || !written) {
        throw std::system_error(written ? errno : saved_errno, std::generic_category(), "writing " + temporary);
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
        throw std::system_error(errno, std::generic_category(), "renaming " + temporary + " to " + path);
    }
}

} // namespace hashi::delayline
