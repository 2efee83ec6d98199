// SPDX-License-Identifier: BSD-3-Clause
#include "ssh_shim.hpp"

#include "output_forwarder.hpp"
#include "pmi_auth.hpp"
#include "pmi_wire.hpp"
#include "rank_binding.hpp"
#include "shim_handoff.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <fcntl.h>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <netdb.h>
#include <optional>
#include <string>
#include <vector>

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

// The fd number MPICH's PMI client finds in PMI_FD.
constexpr int child_pmi_fd = 3;
// How long mpiexec may take to answer an authentication: it answers only
// once it has started every rank, which takes a while for a big job.
constexpr int auth_timeout_ms = 300000;

// Connects to mpiexec's PMI port and proves to be rank `id`'s `channel`;
// returns the connected descriptor, or -1 with `error` set.
int connect_authenticated(
    const std::string& port, const Secret& token, int id, pmi_auth::Channel channel, std::string& error)
{
    int fd = connect_to(port);
    if (fd < 0) {
        error = "cannot reach mpiexec at " + port + ": " + std::strerror(errno) +
            " (set HASHI_PMI_HOST to an address this host can reach)";
        return -1;
    }
    pmi_auth::Claim claim {id, channel, random_secret(), {}};
    write_all(fd, pmi_auth::client_hello(token, id, channel, claim.nonce));
    // Byte by byte: on the PMI channel nothing after this line is ours.
    std::string line;
    char c = 0;
    while (line.size() < pmi::max_line) {
        pollfd pfd {fd, POLLIN, 0};
        if (::poll(&pfd, 1, auth_timeout_ms) <= 0 || ::read(fd, &c, 1) != 1) {
            break;
        }
        line += c;
        if (c == '\n') {
            break;
        }
    }
    if (!pmi_auth::server_reply_ok(line, token, claim)) {
        error = "the process at " + port + " did not accept this rank or could not prove it is this job's mpiexec";
        ::close(fd);
        return -1;
    }
    return fd;
}

} // namespace

int run_ssh_shim(int argc, char** argv)
{
    const char* usage = ": internal mode of the ssh launcher (mpiexec -launcher ssh starts it); ";
    // Either "-- program" or a binding request (rank_binding.hpp) first.
    std::vector<std::string> words(argv + 2, argv + argc);
    size_t pos = 0;
    std::optional<BindRequest> bind;
    if (!words.empty() && words[0] == "--") {
        pos = 1;
    } else if (!words.empty()) {
        std::string bad;
        bind = parse_bind_request(words, pos, bad);
        if (!bind) {
            std::cerr << "mpiexec " << ssh_shim_flag << usage << bad << std::endl;
            return 2;
        }
    }
    const int first = 2 + static_cast<int>(pos);
    if (words.empty() || first >= argc) {
        std::cerr << "mpiexec " << ssh_shim_flag << usage << "needs '-- program'" << std::endl;
        return 2;
    }
    // Everything secret, and the environment, arrive on stdin first.
    std::string why;
    auto handoff = decode_handoff(fd_reader(STDIN_FILENO), why);
    if (!handoff) {
        std::cerr << "mpiexec " << ssh_shim_flag << usage << "cannot read what mpiexec sends on stdin: " << why
                  << std::endl;
        return 2;
    }
    // Bound here, on the rank's node, from this node's topology; the
    // program inherits the binding.
    if (bind && !bind_this_process_or_say_why(*bind)) {
        return 2;
    }
    std::string port;
    std::string id;
    for (const auto& [k, v] : handoff->env) {
        if (k == "PMI_PORT") {
            port = v;
        } else if (k == "PMI_ID") {
            id = v;
        }
    }
    int rank = -1;
    auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), rank);
    if (port.empty() || ec != std::errc() || end != id.data() + id.size()) {
        std::cerr << "mpiexec " << ssh_shim_flag << usage << "PMI_PORT or PMI_ID missing" << std::endl;
        return 2;
    }
    std::string error;
    int lifeline = connect_authenticated(port, handoff->token, rank, pmi_auth::Channel::lifeline, error);
    int pmi_fd = lifeline < 0 ? -1 : connect_authenticated(port, handoff->token, rank, pmi_auth::Channel::pmi, error);
    if (pmi_fd < 0) {
        std::cerr << "mpiexec (ssh shim on rank " << id << "): " << error << std::endl;
        return 1;
    }
    // The program talks PMI over the authenticated connection (PMI_FD), so
    // MPICH never dials the port itself.
    for (const auto& [k, v] : handoff->env) {
        if (k != "PMI_PORT" && k != "PMI_ID") {
            ::setenv(k.c_str(), v.c_str(), 1);
        }
    }
    ::unsetenv("PMI_PORT");
    ::unsetenv("PMI_ID");
    ::setenv("PMI_FD", std::to_string(child_pmi_fd).c_str(), 1);
    handoff.reset(); // the token is not needed any more

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
        if (pmi_fd == child_pmi_fd) {
            ::fcntl(child_pmi_fd, F_SETFD, 0);
        } else if (::dup2(pmi_fd, child_pmi_fd) < 0) {
            _exit(127);
        }
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
    ::close(pmi_fd); // the program's now

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
