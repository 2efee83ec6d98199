// SPDX-License-Identifier: BSD-3-Clause
// The provider's diagnostics (common.hpp): `hashi[pid@host]: ...` lines on
// stderr, debug lines with FI_HASHI_DEBUG=1 or FI_LOG_LEVEL=debug. Apart
// from the entry point so that unit tests of parts that log can link it.
#include "transport/common.hpp"

#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hashi::fi {

namespace {

bool env_true(const char* name)
{
    const char* v = std::getenv(name);
    return v != nullptr && (std::strcmp(v, "1") == 0 || strcasecmp(v, "yes") == 0 || strcasecmp(v, "true") == 0);
}

void vlog(const char* level, const char* fmt, va_list ap)
{
    char host[64] = "?";
    gethostname(host, sizeof host - 1);
    char msg[1024];
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    // One write, so lines from several processes do not interleave.
    char line[1200];
    const int n =
        std::snprintf(line, sizeof line, "hashi[%d@%s]: %s%s\n", static_cast<int>(getpid()), host, level, msg);
    if (n > 0)
        (void)!write(STDERR_FILENO, line, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof line - 1));
}

} // namespace

bool debug_enabled() noexcept
{
    static const bool on = [] {
        const char* lvl = std::getenv("FI_LOG_LEVEL");
        return env_true("FI_HASHI_DEBUG") || (lvl != nullptr && strcasecmp(lvl, "debug") == 0);
    }();
    return on;
}

void log_error(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("error: ", fmt, ap);
    va_end(ap);
}

void log_warn(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("warning: ", fmt, ap);
    va_end(ap);
}

void log_debug_impl(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("", fmt, ap);
    va_end(ap);
}

} // namespace hashi::fi
