// SPDX-License-Identifier: BSD-3-Clause
#include "ssh_shim.hpp"

#include "output_forwarder.hpp"
#include "pmi_wire.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <netdb.h>
#include <string>

namespace hashi::mpiexec {
namespace {

int connect_to(const std::string& hostport)
{
    auto colon = hostport.rfind(':');
    if (colon == std::string::npos) {
        return -1;
    }
    std::string host = hostport.substr(0, colon);
    std::string port = hostport.substr(colon + 1);
    addrinfo hints {};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0) {
        return -1;
    }
    int fd = -1;
    for (addrinfo* a = res; a != nullptr && fd < 0; a = a->ai_next) {
        fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            ::close(fd);
            fd = -1;
        }
    }
    ::freeaddrinfo(res);
    return fd;
}

} // namespace

int run_ssh_shim(int argc, char** argv)
{
    int first = 2;
    if (first < argc && std::strcmp(argv[first], "--") == 0) {
        ++first;
    }
    const char* port = std::getenv("PMI_PORT");
    const char* id = std::getenv("PMI_ID");
    if (first >= argc || port == nullptr || id == nullptr) {
        std::cerr << "mpiexec " << ssh_shim_flag
                  << ": internal mode of the ssh launcher; needs PMI_PORT, PMI_ID and '-- program'" << std::endl;
        return 2;
    }
    int lifeline = connect_to(port);
    if (lifeline < 0) {
        std::cerr << "mpiexec (ssh shim on rank " << id << "): cannot reach mpiexec at " << port << ": "
                  << std::strerror(errno) << " (set HASHI_PMI_HOST to an address this host can reach)" << std::endl;
        return 1;
    }
    write_all(lifeline, pmi::format("lifeline", {{"pmiid", id}}));

    sigset_t mask;
    sigemptyset(&mask);
    for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) {
        sigaddset(&mask, sig);
    }
    pthread_sigmask(SIG_BLOCK, &mask, nullptr);
    int sfd = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    ::signal(SIGPIPE, SIG_IGN);

    pid_t child = ::fork();
    if (child == 0) {
        ::setpgid(0, 0);
        ::signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        pthread_sigmask(SIG_SETMASK, &none, nullptr);
        ::execvp(argv[first], argv + first);
        std::cerr << "mpiexec (ssh shim): cannot execute '" << argv[first] << "': " << std::strerror(errno)
                  << std::endl;
        _exit(127);
    }
    if (child < 0) {
        std::cerr << "mpiexec (ssh shim): fork failed: " << std::strerror(errno) << std::endl;
        return 1;
    }
    ::setpgid(child, child);

    std::string inbuf;
    bool lifeline_open = true;
    int kill_stage = 0; // 1: SIGTERM sent after the lifeline broke, 2: SIGKILL sent
    for (;;) {
        std::array<pollfd, 2> fds {{{sfd, POLLIN, 0}, {lifeline_open ? lifeline : -1, POLLIN, 0}}};
        int n = ::poll(fds.data(), fds.size(), kill_stage == 1 ? 3000 : -1);
        if (n == 0 && kill_stage == 1) {
            ::kill(-child, SIGKILL);
            kill_stage = 2;
        }
        if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
            std::array<char, 1024> buf {};
            ssize_t r = ::read(lifeline, buf.data(), buf.size());
            if (r <= 0) {
                // mpiexec is gone or gave up on the job: the program must go too.
                lifeline_open = false;
                ::kill(-child, SIGTERM);
                kill_stage = 1;
            } else {
                inbuf.append(buf.data(), static_cast<size_t>(r));
                for (auto nl = inbuf.find('\n'); nl != std::string::npos; nl = inbuf.find('\n')) {
                    std::string err;
                    auto msg = pmi::parse(inbuf.substr(0, nl), err);
                    inbuf.erase(0, nl + 1);
                    if (msg && msg->cmd == "signal") {
                        int sig = std::atoi(msg->get("signo").value_or("0").c_str());
                        if (sig > 0 && sig < NSIG) {
                            ::kill(-child, sig);
                        }
                    }
                }
                if (inbuf.size() > pmi::max_line) {
                    inbuf.clear();
                }
            }
        }
        if ((fds[0].revents & POLLIN) != 0) {
            signalfd_siginfo si {};
            while (::read(sfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
                if (si.ssi_signo != SIGCHLD) {
                    ::kill(-child, static_cast<int>(si.ssi_signo));
                }
            }
            int st = 0;
            if (::waitpid(child, &st, WNOHANG) == child) {
                int sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
                int code = WIFEXITED(st) ? WEXITSTATUS(st) : 0;
                if (lifeline_open) {
                    write_all(lifeline,
                        pmi::format("exited",
                            {{"pmiid", id}, {"status", std::to_string(code)}, {"signal", std::to_string(sig)}}));
                }
                return sig != 0 ? 128 + sig : code;
            }
        }
    }
}

} // namespace hashi::mpiexec
