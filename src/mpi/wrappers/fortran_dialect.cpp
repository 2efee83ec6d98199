// SPDX-License-Identifier: BSD-3-Clause
#include "fortran_dialect.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <spawn.h>

extern char** environ;

namespace hashi::wrapper {

std::optional<int> gnu_fortran_major(std::string_view version_output)
{
    const auto line = version_output.substr(0, version_output.find('\n'));
    if (!line.starts_with("GNU Fortran")) {
        return std::nullopt;
    }
    // The version is the last word: "GNU Fortran (Debian 12.2.0-14) 12.2.0".
    const auto space = line.find_last_of(' ');
    if (space == std::string_view::npos) {
        return std::nullopt;
    }
    int major = 0;
    size_t i = space + 1;
    size_t digits = 0;
    for (; i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])) != 0 && digits < 4; ++i, ++digits) {
        major = major * 10 + (line[i] - '0');
    }
    if (digits == 0 || (i < line.size() && line[i] != '.')) {
        return std::nullopt;
    }
    return major;
}

std::vector<std::string> legacy_fortran_flags(std::optional<int> gnu_major)
{
    if (!gnu_major || *gnu_major < 10) {
        return {}; // gfortran 9 and older accept legacy code as it is
    }
    return {"-fallow-argument-mismatch", "-fallow-invalid-boz"};
}

std::string compiler_version_output(const std::string& compiler)
{
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) {
        return {};
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    std::string name = compiler;
    std::string flag = "--version";
    char* argv[] = {name.data(), flag.data(), nullptr};
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, name.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    std::string text;
    if (rc == 0) {
        char buf[1024];
        ssize_t n = 0;
        while (text.size() < 4096 && ((n = ::read(out[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))) {
            if (n > 0) {
                text.append(buf, static_cast<size_t>(n));
            }
        }
    }
    ::close(out[0]);
    if (rc != 0) {
        return {};
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return {};
    }
    return text;
}

} // namespace hashi::wrapper
