// SPDX-License-Identifier: BSD-3-Clause
#include "job.hpp"

#include "capacity.hpp"
#include "common/environment.hpp"
#include "common/install_paths.hpp"
#include "launcher.hpp"
#include "pmi_auth.hpp"
#include "pmi_listener.hpp"
#include "rank_binding.hpp"
#include "shim_handoff.hpp"
#include "ssh_shim.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>

extern char** environ;

namespace hashi::mpiexec {
namespace {

using Clock = std::chrono::steady_clock;

// How long the killed processes get between SIGTERM and SIGKILL.
constexpr auto kill_grace = std::chrono::seconds(3);
// After the last process exits, how long we wait for output still in flight
// (a grandchild may hold a pipe open forever).
constexpr auto drain_grace = std::chrono::seconds(2);
// The fd number MPICH's PMI client finds in PMI_FD.
constexpr int child_pmi_fd = 3;
// A connection to the PMI port must authenticate within this time; a real
// shim does it at once, an idle stranger is dropped.
constexpr auto auth_grace = std::chrono::seconds(10);
// Connections still authenticating at one time; beyond that a new one is
// closed at once, so a flood of strangers cannot use up our descriptors
// (real shims authenticate within milliseconds of connecting).
constexpr std::size_t max_unauthenticated = 256;
// At most one message about refused PMI connections this often.
constexpr auto refusal_log_interval = std::chrono::seconds(5);

const std::array forwarded_signals = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

[[noreturn]] void child_fail(int status_fd, int err)
{
    // Tells the parent why exec failed; it prints the message.
    (void)!::write(status_fd, &err, sizeof err);
    _exit(127);
}

std::string signal_name(int sig)
{
    const char* abbrev = sigabbrev_np(sig);
    const char* desc = sigdescr_np(sig);
    std::string s = "signal " + std::to_string(sig);
    if (abbrev != nullptr) {
        s += " (SIG" + std::string(abbrev);
        if (desc != nullptr) {
            s += ", " + std::string(desc);
        }
        s += ")";
    }
    return s;
}

std::vector<EnvVar> current_environment()
{
    std::vector<EnvVar> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string_view kv(*e);
        auto eq = kv.find('=');
        if (eq != std::string_view::npos && eq > 0) {
            env.emplace_back(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
        }
    }
    return env;
}

// Finds `prog` as execvp would; empty if it is not there.
std::string find_program(const std::string& prog, const std::string& wdir)
{
    namespace fs = std::filesystem;
    auto executable = [](const fs::path& p) { return ::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); };
    if (prog.find('/') != std::string::npos) {
        fs::path p = prog;
        if (p.is_relative()) {
            p = fs::path(wdir) / p;
        }
        return executable(p) ? p.string() : std::string();
    }
    const char* path = std::getenv("PATH");
    std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
    size_t pos = 0;
    while (pos <= dirs.size()) {
        auto colon = dirs.find(':', pos);
        auto dir = dirs.substr(pos, colon == std::string_view::npos ? std::string_view::npos : colon - pos);
        fs::path p = fs::path(dir.empty() ? "." : std::string(dir)) / prog;
        if (executable(p)) {
            return p.string();
        }
        if (colon == std::string_view::npos) {
            break;
        }
        pos = colon + 1;
    }
    return {};
}

std::string local_host_name()
{
    std::array<char, 256> buf {};
    if (::gethostname(buf.data(), buf.size() - 1) != 0) {
        return "localhost";
    }
    return buf.data();
}

std::string hex64(std::uint64_t v)
{
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

// A fresh job id for a job of one cluster: the provider refuses peers
// whose id differs, so two jobs on one network never talk by mistake.
std::uint64_t random_job_id()
{
    std::uint64_t v = 0;
    while (v == 0) {
        if (::getrandom(&v, sizeof v, 0) != static_cast<ssize_t>(sizeof v)) {
            throw std::runtime_error(std::string("cannot draw a job id: getrandom: ") + std::strerror(errno));
        }
    }
    return v;
}

} // namespace

Job::Job(Options opt, std::vector<EnvVar> job_vars)
    : opt_(std::move(opt)), job_vars_(std::move(job_vars)), inherited_env_(current_environment())
{
}

Job::~Job()
{
    // A Job destroyed early (exception) must not leave processes behind.
    if (!all_exited()) {
        kill_all(SIGKILL);
        reap_children();
    }
}

std::string Job::describe(const Process& p) const
{
    return "rank " + std::to_string(rank_offset_ + p.rank) + " (pid " + std::to_string(p.pid) + " on " + p.host + ")";
}

int Job::live_count() const
{
    return static_cast<int>(
        std::count_if(procs_.begin(), procs_.end(), [](const Process& p) { return p.pid > 0 && !p.exited; }));
}

bool Job::all_exited() const
{
    return live_count() == 0;
}

void Job::fail(int exit_status, const std::string& message, int culprit)
{
    if (status_) {
        return;
    }
    status_ = exit_status;
    // The culprit may still be alive (an MPI_Abort caller waits for us).
    int others = live_count();
    if (culprit >= 0 && procs_[culprit].pid > 0 && !procs_[culprit].exited) {
        --others;
    }
    std::cerr << "mpiexec: " << message;
    if (others > 0) {
        std::cerr << "; killing the " << (culprit >= 0 ? "other " : "") << others << (others == 1 ? " rank" : " ranks");
    }
    std::cerr << std::endl;
    if (impi_ && impi_->open()) {
        impi_->send_abort(exit_status, message);
    }
    kill_all(SIGTERM);
}

void Job::kill_all(int sig)
{
    for (auto& p : procs_) {
        if (p.pid <= 0 || p.exited) {
            continue;
        }
        if (PmiConnection* life = lifeline_of_rank_.empty() ? nullptr : lifeline_of_rank_[p.rank]; life != nullptr) {
            // ssh: the shim on the remote host delivers the signal, and
            // kills the program itself when the lifeline closes.
            if (sig == SIGKILL) {
                close_pmi(*life);
            } else {
                write_all(life->fd.get(), pmi::format("signal", {{"signo", std::to_string(sig)}}));
                continue;
            }
        }
        // Each process leads its own group, so helpers it started
        // (and a launcher's children) get the signal too.
        if (::kill(-p.pid, sig) != 0) {
            ::kill(p.pid, sig);
        }
    }
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT) {
        if (!killing_) {
            killing_ = true;
            kill_deadline_ = Clock::now() + kill_grace;
        }
    }
}

void Job::start_all()
{
    int nranks = opt_.total_procs();
    std::string local = local_host_name();
    placement_ = place_ranks(opt_.hosts, nranks, opt_.ppn, local);
    if (auto problem = capacity_problem(opt_, nranks, ::sysconf(_SC_NPROCESSORS_ONLN), raise_descriptor_limit())) {
        throw UsageError(*problem);
    }
    if (opt_.launcher == LauncherKind::fork && opt_.binding.binds()) {
        try {
            local_bindings_ = plan_bindings(CpuTopology::of_this_process(), opt_.binding);
        } catch (const BindingError& e) {
            throw UsageError("cannot bind ranks on " + local + ": " + e.what() + "; nothing was started");
        }
    }
    if (!join_federation()) {
        return;
    }

    PmiJobInfo info;
    info.size = nranks;
    int slots = 0;
    for (const auto& h : opt_.hosts) {
        slots += h.slots;
    }
    info.universe_size = impi_ ? global_size_ : std::max(nranks, slots);
    // One name for every cluster: ranks of a federated job share one space.
    info.kvsname = "hashi_" + job_id_;
    info.process_mapping = process_mapping(global_node_of_rank_);
    info.global_barrier = impi_ != nullptr;
    if (info.process_mapping.size() > pmi::vallen_max) {
        std::cerr << "mpiexec: warning: the process mapping is too long for PMI (" << info.process_mapping.size()
                  << " bytes); MPICH will guess node locality from host names" << std::endl;
        info.process_mapping.clear();
    }
    for (size_t a = 0; a < opt_.apps.size(); ++a) {
        for (int i = 0; i < opt_.apps[a].nprocs; ++i) {
            info.appnum.push_back(static_cast<int>(a));
        }
    }
    pmi_ = std::make_unique<PmiServer>(info);
    procs_.resize(nranks);
    pmi_of_rank_.assign(nranks, nullptr);
    lifeline_of_rank_.assign(nranks, nullptr);

    if (starts_through_shim(opt_.launcher)) {
        // Processes started over ssh or srun cannot inherit a socket: their shims
        // connect back to this port (PMI_PORT) and prove who they are.
        std::set<std::string> hosts(placement_.node_names.begin(), placement_.node_names.end());
        auto l = open_pmi_listener(hashi::env_text("HASHI_PMI_HOST"), hashi::env_text("HASHI_PMI_BIND"),
            std::vector<std::string>(hosts.begin(), hosts.end()), local);
        pmi_listener_ = std::move(l.fd);
        pmi_port_ = l.advertised;
        shim_exe_ = (hashi::install_paths().bindir / "mpiexec").string();
        if (opt_.verbose) {
            std::cerr << "mpiexec: PMI port bound to " << l.bound << ", ranks told " << pmi_port_ << std::endl;
        }
    }

    int rank = 0;
    for (size_t a = 0; a < opt_.apps.size(); ++a) {
        for (int i = 0; i < opt_.apps[a].nprocs; ++i) {
            start_one(rank++, opt_.apps[a], static_cast<int>(a));
            if (status_) {
                return; // a start failed; fail() has killed what was started
            }
        }
    }
}

bool Job::join_federation()
{
    const auto& fed = opt_.federation;
    const int nranks = opt_.total_procs();
    if (!fed.active()) {
        global_size_ = nranks;
        job_id_ = hex64(random_job_id());
        job_key_ = random_secret();
        global_node_of_rank_ = placement_.node_of_rank;
        return true;
    }
    ImpiSettings settings;
    settings.client = fed.client;
    settings.server = fed.server;
    settings.timeout = std::chrono::seconds(fed.timeout_seconds);
    try {
        settings.credentials = impi::resolve_credentials({.secret = fed.secret,
                                                             .secret_file = fed.secret_file,
                                                             .key = fed.key,
                                                             .enable_key = fed.enable_key,
                                                             .enable_none = fed.enable_none},
            hashi::env_value);
    } catch (const impi::CredentialError& e) {
        throw UsageError(e.what());
    }
    impi::LocalClient local;
    local.host_addr.resize(placement_.node_names.size());
    local.host_of_proc = placement_.node_of_rank;
    const impi::Credentials creds = settings.credentials;
    impi_ = std::make_unique<ImpiClient>(std::move(settings));
    auto started = Clock::now();
    FederatedJob job;
    try {
        job = impi_->join(local, signal_fd_.get());
    } catch (const ImpiInterrupted&) {
        // Closing the connection tells the server this client is gone.
        impi_.reset();
        signalfd_siginfo si {};
        int sig = ::read(signal_fd_.get(), &si, sizeof si) == static_cast<ssize_t>(sizeof si)
            ? static_cast<int>(si.ssi_signo)
            : SIGINT;
        std::cerr << "mpiexec: got " << signal_name(sig) << " while joining impi-server; no rank was started"
                  << std::endl;
        status_ = 128 + sig;
        return false;
    }
    global_size_ = job.global_size;
    rank_offset_ = job.rank_offset;
    cluster_id_ = fed.client;
    job_id_ = hex64(job.job_id);
    relays_ = impi::relay_list_text(job.relays);
    global_node_of_rank_ = std::move(job.node_of_rank);
    // Every cluster must arrive at the same key without sending it: from
    // the job's secret where there is one (a stranger who saw the whole
    // startup still cannot compute it), else from what the weak IMPI
    // methods share, which a stranger may know as well.
    if (creds.secret) {
        job_key_ = derive_job_key(*creds.secret, job.job_id);
    } else {
        std::string material;
        if (creds.key) {
            for (int shift = 56; shift >= 0; shift -= 8) {
                material += static_cast<char>((*creds.key >> shift) & 0xff);
            }
        }
        job_key_ = derive_job_key(material, job.job_id);
        std::cerr << "mpiexec: warning: no IMPI secret is configured (only "
                  << (creds.key ? "IMPI_AUTH_KEY" : "IMPI_AUTH_NONE") << "), so the ranks' job key is derived from "
                  << (creds.key ? "the IMPI key and the job id" : "the job id")
                  << ", which strangers can learn: ranks of different clusters are not protected against strangers "
                     "(give impi-server and every cluster the same -impi-secret-file)"
                  << std::endl;
    }
    if (opt_.verbose) {
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
        std::cerr << "mpiexec: joined impi-server at " << fed.server << " as client " << fed.client << " of "
                  << job.nclients << " in " << ms << " ms: global ranks " << rank_offset_ << ".."
                  << rank_offset_ + nranks - 1 << " of " << global_size_ << ", job " << job_id_ << std::endl;
    }
    return true;
}

void Job::on_local_barrier_complete()
{
    if (barrier_pending_) {
        return;
    }
    barrier_pending_ = true;
    std::string error;
    if (!impi_->send_barrier(pmi_->take_new_entries(), error)) {
        fail(1, error);
    }
}

void Job::on_impi_readable()
{
    for (auto& e : impi_->on_readable()) {
        switch (e.kind) {
        case ImpiClient::Event::Kind::barrier_out:
            barrier_pending_ = false;
            for (const auto& r : pmi_->release_barrier(e.entries)) {
                send_pmi(r.rank, r.line);
            }
            break;
        case ImpiClient::Event::Kind::aborted:
        case ImpiClient::Event::Kind::failed:
            fail(e.code, e.message);
            break;
        }
    }
}

void Job::leave_federation()
{
    if (!impi_ || !impi_->open()) {
        return;
    }
    int status = status_.value_or(0);
    if (status == 0) {
        for (const auto& p : procs_) {
            if (WIFSIGNALED(p.wait_status) || (WIFEXITED(p.wait_status) && WEXITSTATUS(p.wait_status) != 0)) {
                status = 1;
            }
        }
    }
    if (status == 0) {
        impi_->send_fini();
    } else {
        impi_->send_abort(status,
            "mpiexec of cluster " + std::to_string(cluster_id_) + " ended with status " + std::to_string(status));
    }
}

void Job::start_one(int rank, const AppSegment& app, int /*app_index*/)
{
    Process& p = procs_[rank];
    p.rank = rank;
    p.host = placement_.node_names[placement_.node_of_rank[rank]];
    int node = placement_.node_of_rank[rank];
    int local_rank = 0;
    int local_size = 0;
    for (int r = 0; r < static_cast<int>(placement_.node_of_rank.size()); ++r) {
        if (placement_.node_of_rank[r] == node) {
            if (r < rank) {
                ++local_rank;
            }
            ++local_size;
        }
    }
    std::string wdir = app.wdir.value_or(opt_.gwdir.value_or(std::filesystem::current_path().string()));

    const bool remote = starts_through_shim(opt_.launcher);
    std::vector<EnvVar> pmi_vars = {
        {"PMI_RANK", std::to_string(rank_offset_ + rank)}, {"PMI_SIZE", std::to_string(global_size_)}};
    if (remote) {
        pmi_vars.emplace_back("PMI_PORT", pmi_port_);
        pmi_vars.emplace_back("PMI_ID", std::to_string(rank));
    } else {
        pmi_vars.emplace_back("PMI_FD", std::to_string(child_pmi_fd));
    }
    // Among the PMI variables so that nothing the user sets replaces it.
    pmi_vars.emplace_back("HASHI_JOB_KEY", to_hex(job_key_));
    std::vector<EnvVar> per_rank = job_vars_;
    per_rank.emplace_back("MPI_LOCALRANKID", std::to_string(local_rank));
    per_rank.emplace_back("MPI_LOCALNRANKS", std::to_string(local_size));
    per_rank.emplace_back("HASHI_NODE_NAME", p.host);
    per_rank.emplace_back("HASHI_CLUSTER_ID", std::to_string(cluster_id_));
    per_rank.emplace_back("HASHI_JOB_ID", job_id_);
    if (!relays_.empty()) {
        per_rank.emplace_back("HASHI_RELAYS", relays_); // the ranks reach other clusters through these
    }
    // srun needs mpiexec's environment (SLURM_JOB_ID, SLURM_CONF, PATH)
    // whatever -genv* say, and passes it on to the shim it starts.
    auto env = process_environment(opt_, opt_.launcher == LauncherKind::slurm ? EnvPolicy::all : opt_.env_policy, app,
        inherited_env_, per_rank, pmi_vars);

    if (!remote && find_program(app.argv[0], wdir).empty()) {
        fail(127,
            "program '" + app.argv[0] + "' not found or not executable" +
                (app.argv[0].find('/') == std::string::npos ? " (searched PATH)" : "") + "; nothing was started");
        return;
    }

    // Over ssh only what is set explicitly travels (and -genvlist names);
    // the rest of the remote environment is the remote login's.
    // It travels on ssh's stdin with the rank's token (shim_handoff.hpp),
    // never on the command line, and the local ssh client does not get it.
    std::string handoff;
    if (remote) {
        auto policy = opt_.env_policy == EnvPolicy::list ? EnvPolicy::list : EnvPolicy::none;
        p.token = random_secret();
        handoff = encode_handoff({p.token, process_environment(opt_, policy, app, inherited_env_, per_rank, pmi_vars)});
        std::erase_if(env, [](const EnvVar& kv) { return kv.first == "HASHI_JOB_KEY"; });
    }
    // Bound where the rank runs: here for fork, else by the process that
    // execs the rank on its node (rank_binding.hpp).
    const BindRequest bind_request {.bind_to = opt_.binding.binds() ? opt_.binding.bind_text : std::string(),
        .map_by = opt_.binding.map_text,
        .local_index = local_rank,
        .rank = rank_offset_ + rank,
        .host = p.host,
        .report = opt_.print_bindings || (opt_.verbose && opt_.binding.binds())};
    std::unique_ptr<AffinityMask> affinity;
    std::vector<std::string> program = app.argv;
    if (opt_.launcher == LauncherKind::fork) {
        auto binding = local_bindings_ ? binding_of(*local_bindings_, local_rank) : std::nullopt;
        if (binding) {
            affinity = std::make_unique<AffinityMask>(binding->cpus);
        }
        if (bind_request.report) {
            std::cerr << binding_report(bind_request, binding) << std::endl;
        }
    } else {
        std::vector<std::string> front;
        if (remote) {
            front = {shim_exe_, ssh_shim_flag};
        } else if (opt_.binding.binds() || opt_.print_bindings) {
            front = {(hashi::install_paths().bindir / "mpiexec").string(), exec_binder_flag};
        }
        if (!front.empty()) {
            if (opt_.binding.binds() || opt_.print_bindings) {
                auto words = bind_request_args(bind_request);
                front.insert(front.end(), words.begin(), words.end());
            } else {
                front.emplace_back("--");
            }
            program.insert(program.begin(), front.begin(), front.end());
        }
    }
    auto argv = launch_argv(opt_, {p.host, rank_offset_ + rank}, program, wdir);
    if (opt_.verbose) {
        std::string line = "mpiexec: rank " + std::to_string(rank) + " on " + p.host + ":";
        for (const auto& a : argv) {
            line += " " + shell_quote(a);
        }
        std::cerr << line << std::endl;
    }

    int out_pipe[2];
    int err_pipe[2];
    int in_pipe[2] = {-1, -1};
    // Only MPI rank 0 reads stdin; in a federated job that is cluster 0's.
    const bool gets_stdin = rank_offset_ + rank == 0;
    int status_pipe[2];
    int pmi_pair[2] = {-1, -1};
    if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
        ::pipe2(status_pipe, O_CLOEXEC) != 0 || ((gets_stdin || remote) && ::pipe2(in_pipe, O_CLOEXEC) != 0) ||
        (!remote && ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pmi_pair) != 0)) {
        fail(1,
            std::string("cannot create pipes for rank ") + std::to_string(rank) + ": " + std::strerror(errno) +
                " (too many processes for the open-file limit? see ulimit -n)");
        return;
    }

    // Everything the child needs is prepared before fork: after it only
    // async-signal-safe calls are allowed.
    std::vector<char*> cargv;
    for (auto& a : argv) {
        cargv.push_back(a.data());
    }
    cargv.push_back(nullptr);
    std::vector<std::string> envstr;
    envstr.reserve(env.size());
    for (const auto& [k, v] : env) {
        envstr.push_back(k + "=" + v);
    }
    std::vector<char*> cenv;
    for (auto& e : envstr) {
        cenv.push_back(e.data());
    }
    cenv.push_back(nullptr);
    std::string resolved = opt_.launcher == LauncherKind::fork ? find_program(argv[0], wdir) : std::string();

    sigset_t all;
    sigfillset(&all);
    sigset_t old;
    pthread_sigmask(SIG_SETMASK, &all, &old);
    const pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid == 0) {
        // Child: default signal dispositions, nothing blocked (mpiexec
        // blocks the signals it reads through signalfd; the program must
        // not inherit that), its own process group.
        for (int sig : forwarded_signals) {
            ::signal(sig, SIG_DFL);
        }
        ::signal(SIGPIPE, SIG_DFL);
        ::signal(SIGCHLD, SIG_DFL);
        ::setpgid(0, 0);
        // If mpiexec itself is killed (SIGKILL gives it no chance to clean
        // up), its ranks die with it instead of running on as orphans.
        // The setting survives exec, so it holds through 'ip netns exec'.
        if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) {
            _exit(127);
        }
        int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (::dup2(in_pipe[0] >= 0 ? in_pipe[0] : devnull, STDIN_FILENO) < 0 || ::dup2(out_pipe[1], STDOUT_FILENO) < 0 ||
            ::dup2(err_pipe[1], STDERR_FILENO) < 0) {
            child_fail(status_pipe[1], errno);
        }
        if (!remote) {
            if (pmi_pair[1] == child_pmi_fd) {
                ::fcntl(child_pmi_fd, F_SETFD, 0);
            } else if (::dup2(pmi_pair[1], child_pmi_fd) < 0) {
                child_fail(status_pipe[1], errno);
            }
        }
        if (!remote && ::chdir(wdir.c_str()) != 0) {
            child_fail(status_pipe[1], errno);
        }
        if (affinity && !affinity->apply()) {
            child_fail(status_pipe[1], errno);
        }
        sigset_t none;
        sigemptyset(&none);
        pthread_sigmask(SIG_SETMASK, &none, nullptr);
        if (!resolved.empty()) {
            ::execve(resolved.c_str(), cargv.data(), cenv.data());
        } else {
            ::execvpe(cargv[0], cargv.data(), cenv.data());
        }
        child_fail(status_pipe[1], errno);
    }
    int fork_errno = errno;
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    ::close(status_pipe[1]);
    if (in_pipe[0] >= 0) {
        ::close(in_pipe[0]);
    }
    if (pmi_pair[1] >= 0) {
        ::close(pmi_pair[1]);
    }
    if (pid < 0) {
        ::close(out_pipe[0]);
        ::close(err_pipe[0]);
        ::close(status_pipe[0]);
        if (in_pipe[1] >= 0) {
            ::close(in_pipe[1]);
        }
        if (pmi_pair[0] >= 0) {
            ::close(pmi_pair[0]);
        }
        fail(1, "cannot fork rank " + std::to_string(rank) + ": " + std::strerror(fork_errno));
        return;
    }
    // Also from the parent, so a kill(-pid) right after fork reaches it.
    ::setpgid(pid, pid);
    p.pid = pid;
    rank_of_pid_[pid] = rank;
    p.stdout_fd.reset(out_pipe[0]);
    p.stderr_fd.reset(err_pipe[0]);
    p.out = std::make_unique<OutputForwarder>(STDOUT_FILENO, rank_offset_ + rank, opt_.prepend_rank);
    p.err = std::make_unique<OutputForwarder>(STDERR_FILENO, rank_offset_ + rank, opt_.prepend_rank);
    if (remote) {
        // Small enough for the pipe: this does not wait for ssh. A failed
        // ssh is reported by its exit.
        write_all(in_pipe[1], handoff);
        if (!gets_stdin) {
            ::close(in_pipe[1]); // the rank reads end of input after the handoff
            in_pipe[1] = -1;
        }
    }
    if (in_pipe[1] >= 0) {
        p.stdin_fd.reset(in_pipe[1]);
        ::fcntl(in_pipe[1], F_SETFL, O_NONBLOCK);
        // A background job (`mpiexec ... &`) reading its terminal would be
        // stopped by SIGTTIN; rank 0 gets EOF instead.
        bool background_tty = ::isatty(STDIN_FILENO) != 0 && ::tcgetpgrp(STDIN_FILENO) != ::getpgrp();
        stdin_open_ = !background_tty;
        if (background_tty) {
            p.stdin_fd.reset();
        }
    }
    if (pmi_pair[0] >= 0) {
        auto c = std::make_unique<PmiConnection>();
        c->fd.reset(pmi_pair[0]);
        c->rank = rank;
        pmi_of_rank_[rank] = c.get();
        pmi_conns_.push_back(std::move(c));
    }

    // Exec status: EOF means exec succeeded (the pipe was close-on-exec).
    int err = 0;
    ssize_t n;
    do {
        n = ::read(status_pipe[0], &err, sizeof err);
    } while (n < 0 && errno == EINTR);
    ::close(status_pipe[0]);
    if (n == static_cast<ssize_t>(sizeof err)) {
        std::string what = argv[0];
        fail(127,
            "cannot start rank " + std::to_string(rank) + ": '" + what + "': " + std::strerror(err) +
                (err == ENOENT && opt_.launcher == LauncherKind::exec ? " (check -launcher-exec)" : ""),
            rank);
    }
}

void Job::send_pmi(int rank, const std::string& line)
{
    PmiConnection* c = rank >= 0 && rank < static_cast<int>(pmi_of_rank_.size()) ? pmi_of_rank_[rank] : nullptr;
    if (c == nullptr || !c->fd) {
        return; // the process is gone; its death is handled elsewhere
    }
    write_all(c->fd.get(), line);
}

void Job::close_pmi(PmiConnection& c)
{
    if (c.rank >= 0 && c.rank < static_cast<int>(pmi_of_rank_.size())) {
        if (pmi_of_rank_[c.rank] == &c) {
            pmi_of_rank_[c.rank] = nullptr;
        }
        if (lifeline_of_rank_[c.rank] == &c) {
            lifeline_of_rank_[c.rank] = nullptr;
        }
    }
    c.fd.reset();
}

void Job::on_identify(PmiConnection& c, std::string_view line)
{
    // First line on a TCP connection: an ssh shim proving which rank's
    // lifeline or PMI connection it is (pmi_auth.hpp). Nothing is sent
    // before the proof checks out, so a stranger gets no byte of the job.
    std::string why;
    auto claim = pmi_auth::parse_hello(line, why);
    if (!claim) {
        refuse_pmi(c, why);
        return;
    }
    const int rank = claim->pmiid;
    const bool lifeline = claim->channel == pmi_auth::Channel::lifeline;
    auto& slot = lifeline ? lifeline_of_rank_ : pmi_of_rank_;
    if (rank >= static_cast<int>(procs_.size()) || !pmi_auth::proves(*claim, procs_[rank].token)) {
        refuse_pmi(c, "wrong proof for rank " + std::to_string(rank));
        return;
    }
    if (slot[rank] != nullptr) {
        refuse_pmi(c, "rank " + std::to_string(rank) + " is already connected (a replay?)");
        return;
    }
    c.rank = rank;
    c.lifeline = lifeline;
    slot[rank] = &c;
    write_all(c.fd.get(), pmi_auth::server_reply(procs_[rank].token, *claim));
    if (lifeline && killing_) {
        close_pmi(c); // the job is already being torn down
    }
    // The PMI channel becomes the program's PMI_FD: MPICH speaks first
    // (cmd=init), rank and size come from its environment.
}

void Job::refuse_pmi(PmiConnection& c, const std::string& why)
{
    close_pmi(c);
    ++refusals_unlogged_;
    auto now = Clock::now();
    if (now - refusal_logged_ < refusal_log_interval) {
        return;
    }
    std::cerr << "mpiexec: warning: refused a connection to the PMI port from " << c.peer << ": " << why;
    if (refusals_unlogged_ > 1) {
        std::cerr << " (" << refusals_unlogged_ << " refused since the last message)";
    }
    std::cerr << "; the job goes on" << std::endl;
    refusal_logged_ = now;
    refusals_unlogged_ = 0;
}

void Job::expire_unauthenticated()
{
    auto now = Clock::now();
    for (auto& c : pmi_conns_) {
        if (c->fd && c->rank < 0 && now >= c->auth_deadline) {
            refuse_pmi(*c, "no authentication within " + std::to_string(auth_grace.count()) + " s");
        }
    }
}

void Job::on_lifeline_line(PmiConnection& c, std::string_view line)
{
    std::string error;
    auto msg = pmi::parse(line, error);
    if (msg && msg->cmd == "exited") {
        Process& p = procs_[c.rank];
        try {
            p.remote_status = std::stoi(msg->get("status").value_or("0"));
            p.remote_signal = std::stoi(msg->get("signal").value_or("0"));
            p.remote_reported = true;
        } catch (const std::exception&) {
            p.remote_reported = false;
        }
    }
}

void Job::drain_lifeline(int rank)
{
    // The ssh client may be reaped before we read what its shim said last.
    for (int i = 0; i < 20 && lifeline_of_rank_[rank] != nullptr && !procs_[rank].remote_reported; ++i) {
        pollfd pfd {lifeline_of_rank_[rank]->fd.get(), POLLIN, 0};
        if (::poll(&pfd, 1, 50) > 0) {
            on_pmi_readable(*lifeline_of_rank_[rank]);
        }
    }
}

void Job::on_pmi_line(PmiConnection& c, std::string_view line)
{
    if (c.rank < 0) {
        on_identify(c, line);
        return;
    }
    if (c.lifeline) {
        on_lifeline_line(c, line);
        return;
    }
    auto result = pmi_->handle(c.rank, line);
    for (const auto& r : result.replies) {
        send_pmi(r.rank, r.line);
    }
    if (!result.error.empty()) {
        int rank = c.rank;
        close_pmi(c);
        fail(1, describe(procs_[rank]) + " sent a bad PMI message (" + result.error + ")", rank);
        return;
    }
    if (result.barrier_complete) {
        on_local_barrier_complete();
    }
    if (result.abort_code) {
        fail(*result.abort_code,
            describe(procs_[c.rank]) + " called MPI_Abort with exit code " + std::to_string(*result.abort_code),
            c.rank);
    }
}

void Job::on_pmi_readable(PmiConnection& c)
{
    std::array<char, 4096> buf {};
    ssize_t n = ::read(c.fd.get(), buf.data(), buf.size());
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
        return;
    }
    if (n <= 0 && c.rank < 0) {
        refuse_pmi(c, "closed before authenticating");
        return;
    }
    if (n <= 0) {
        close_pmi(c); // the process exited or closed PMI; its exit is reaped separately
        return;
    }
    c.inbuf.append(buf.data(), static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl = c.inbuf.find('\n'); nl != std::string::npos && c.fd; nl = c.inbuf.find('\n', start)) {
        std::string line = c.inbuf.substr(start, nl + 1 - start);
        start = nl + 1;
        on_pmi_line(c, line);
    }
    c.inbuf.erase(0, start);
    if (c.fd && c.inbuf.size() > pmi::max_line) {
        int rank = c.rank;
        if (rank < 0) {
            refuse_pmi(c, "first line longer than " + std::to_string(pmi::max_line) + " bytes");
            return;
        }
        close_pmi(c);
        fail(1, describe(procs_[rank]) + " sent a PMI line longer than " + std::to_string(pmi::max_line) + " bytes",
            rank);
    }
}

void Job::accept_pmi_connection()
{
    sockaddr_in from {};
    socklen_t len = sizeof from;
    int fd = ::accept4(pmi_listener_.get(), reinterpret_cast<sockaddr*>(&from), &len, SOCK_CLOEXEC);
    if (fd < 0) {
        return;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<PmiConnection>();
    c->fd.reset(fd);
    c->auth_deadline = Clock::now() + auth_grace;
    char addr[INET_ADDRSTRLEN] = "?";
    ::inet_ntop(AF_INET, &from.sin_addr, addr, sizeof addr);
    c->peer = std::string(addr) + ":" + std::to_string(ntohs(from.sin_port));
    auto pending = std::count_if(
        pmi_conns_.begin(), pmi_conns_.end(), [](const std::unique_ptr<PmiConnection>& p) { return p->fd && p->rank < 0; });
    if (static_cast<std::size_t>(pending) >= max_unauthenticated) {
        refuse_pmi(*c, std::to_string(max_unauthenticated) + " connections are already waiting to authenticate");
        return;
    }
    pmi_conns_.push_back(std::move(c));
}

void Job::forward_stdin()
{
    Process& p0 = procs_[0];
    if (stdin_buf_.empty()) {
        std::array<char, 16384> buf {};
        ssize_t n = ::read(STDIN_FILENO, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) {
            return;
        }
        if (n <= 0) {
            stdin_open_ = false;
            p0.stdin_fd.reset(); // rank 0 sees EOF
            return;
        }
        stdin_buf_.assign(buf.data(), static_cast<size_t>(n));
    }
    ssize_t w = ::write(p0.stdin_fd.get(), stdin_buf_.data(), stdin_buf_.size());
    if (w > 0) {
        stdin_buf_.erase(0, static_cast<size_t>(w));
    } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
        // Rank 0 closed its stdin: stop forwarding, drop the rest.
        stdin_open_ = false;
        stdin_buf_.clear();
        p0.stdin_fd.reset();
    }
}

void Job::on_process_exit(Process& p)
{
    p.exited = true;
    int sig = WIFSIGNALED(p.wait_status) ? WTERMSIG(p.wait_status) : 0;
    int code = WIFEXITED(p.wait_status) ? WEXITSTATUS(p.wait_status) : 0;
    if (starts_through_shim(opt_.launcher)) {
        // While the job is torn down the exact remote status is not
        // reported, and waiting for it rank by rank would take a second each.
        if (!killing_) {
            drain_lifeline(p.rank);
        }
        if (p.remote_reported) {
            sig = p.remote_signal;
            code = p.remote_status;
        }
        // The program is over; its lifeline has nothing more to say.
        if (PmiConnection* life = lifeline_of_rank_[p.rank]; life != nullptr) {
            close_pmi(*life);
        }
    }
    if (killing_) {
        return; // a consequence of a failure already reported, or of a user signal
    }
    if (sig != 0) {
        fail(128 + sig, describe(p) + " was killed by " + signal_name(sig), p.rank);
    } else if (code != 0) {
        std::string why;
        if (opt_.launcher == LauncherKind::ssh && code == 255 && !p.remote_reported) {
            why = " (ssh could not run it; see ssh's message above)";
        } else if (opt_.launcher == LauncherKind::slurm && !p.remote_reported) {
            why = " (srun could not run it; see srun's message above)";
        } else if (code > 128 && pmi_->initialized(p.rank)) {
            // MPICH exits with its error code's low byte when MPI_Init
            // fails (e.g. on a bad setting): 128 + the error class, which
            // reads like a signal (143 = 128 + MPI_ERR_OTHER = "SIGTERM").
            why = " (its own exit status, not a signal: MPICH exits with 128 + the MPI error class, here " +
                std::to_string(code - 128) + ", when MPI_Init or another MPI call fails; its message is above)";
        }
        fail(code, describe(p) + " exited with status " + std::to_string(code) + why, p.rank);
    } else if (pmi_->initialized(p.rank) && !pmi_->finalized(p.rank)) {
        fail(1, describe(p) + " exited without calling MPI_Finalize", p.rank);
    }
}

void Job::reap_children()
{
    for (;;) {
        int st = 0;
        pid_t pid = ::waitpid(-1, &st, WNOHANG);
        if (pid <= 0) {
            return;
        }
        // A map, not a scan: a big job's teardown reaps every process.
        if (auto it = rank_of_pid_.find(pid); it != rank_of_pid_.end() && !procs_[it->second].exited) {
            procs_[it->second].wait_status = st;
            on_process_exit(procs_[it->second]);
        }
    }
}

void Job::handle_signals()
{
    signalfd_siginfo si {};
    while (::read(signal_fd_.get(), &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
        int sig = static_cast<int>(si.ssi_signo);
        if (sig == SIGCHLD) {
            reap_children();
            continue;
        }
        if (sig == SIGUSR1 || sig == SIGUSR2) {
            kill_all(sig);
            continue;
        }
        // Interrupts: pass the first on; a second means "now".
        ++user_signals_;
        if (user_signals_ == 1) {
            std::cerr << "mpiexec: got " << signal_name(sig) << ", passing it to all ranks" << std::endl;
            if (!status_) {
                status_ = 128 + sig;
            }
            killing_ = true;
            kill_deadline_ = Clock::now() + kill_grace;
            kill_all(sig);
        } else {
            std::cerr << "mpiexec: got " << signal_name(sig) << " again, killing all ranks" << std::endl;
            kill_all(SIGKILL);
        }
    }
}

void Job::event_loop()
{
    if (opt_.timeout_seconds > 0) {
        timeout_deadline_ = Clock::now() + std::chrono::seconds(opt_.timeout_seconds);
    }
    bool draining = false;
    for (;;) {
        bool outputs_open =
            std::any_of(procs_.begin(), procs_.end(), [](const Process& p) { return p.stdout_fd || p.stderr_fd; });
        if (all_exited()) {
            if (!outputs_open) {
                return;
            }
            if (!draining) {
                draining = true;
                drain_deadline_ = Clock::now() + drain_grace;
            } else if (Clock::now() >= drain_deadline_) {
                return;
            }
        }

        // What each pollfd is for.
        enum class Kind { signal, stdin_in, stdin_out, out, err, pmi, listener, impi };
        struct Slot {
            Kind kind;
            size_t index;
        };
        std::vector<pollfd> fds;
        std::vector<Slot> slots;
        auto add = [&](int fd, short events, Kind kind, size_t index) {
            fds.push_back({fd, events, 0});
            slots.push_back({kind, index});
        };
        add(signal_fd_.get(), POLLIN, Kind::signal, 0);
        if (stdin_open_ && !procs_.empty() && procs_[0].stdin_fd) {
            if (stdin_buf_.empty()) {
                add(STDIN_FILENO, POLLIN, Kind::stdin_in, 0);
            } else {
                add(procs_[0].stdin_fd.get(), POLLOUT, Kind::stdin_out, 0);
            }
        }
        for (size_t i = 0; i < procs_.size(); ++i) {
            if (procs_[i].stdout_fd) {
                add(procs_[i].stdout_fd.get(), POLLIN, Kind::out, i);
            }
            if (procs_[i].stderr_fd) {
                add(procs_[i].stderr_fd.get(), POLLIN, Kind::err, i);
            }
        }
        for (size_t i = 0; i < pmi_conns_.size(); ++i) {
            if (pmi_conns_[i]->fd) {
                add(pmi_conns_[i]->fd.get(), POLLIN, Kind::pmi, i);
            }
        }
        if (pmi_listener_) {
            add(pmi_listener_.get(), POLLIN, Kind::listener, 0);
        }
        if (impi_ && impi_->open()) {
            add(impi_->fd(), POLLIN, Kind::impi, 0);
        }

        auto now = Clock::now();
        auto next = now + std::chrono::seconds(1);
        if (killing_) {
            next = std::min(next, kill_deadline_);
        }
        if (opt_.timeout_seconds > 0 && !killing_) {
            next = std::min(next, timeout_deadline_);
        }
        if (draining) {
            next = std::min(next, drain_deadline_);
        }
        for (const auto& c : pmi_conns_) {
            if (c->fd && c->rank < 0) {
                next = std::min(next, c->auth_deadline);
            }
        }
        int wait_ms = static_cast<int>(
            std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count()));
        int n = ::poll(fds.data(), fds.size(), wait_ms);
        if (n < 0 && errno != EINTR) {
            throw std::runtime_error(std::string("poll failed: ") + std::strerror(errno));
        }
        now = Clock::now();
        if (killing_ && now >= kill_deadline_ && !all_exited()) {
            kill_all(SIGKILL);
            kill_deadline_ = now + std::chrono::hours(1);
        }
        if (opt_.timeout_seconds > 0 && !killing_ && now >= timeout_deadline_) {
            fail(124, "the job ran longer than the timeout of " + std::to_string(opt_.timeout_seconds) + " s");
        }
        expire_unauthenticated();
        if (n <= 0) {
            continue;
        }
        for (size_t k = 0; k < fds.size(); ++k) {
            if (fds[k].revents == 0) {
                continue;
            }
            const Slot& s = slots[k];
            switch (s.kind) {
            case Kind::signal:
                handle_signals();
                break;
            case Kind::stdin_in:
            case Kind::stdin_out:
                forward_stdin();
                break;
            case Kind::out:
            case Kind::err: {
                Process& p = procs_[s.index];
                UniqueFd& fd = s.kind == Kind::out ? p.stdout_fd : p.stderr_fd;
                auto& fwd = s.kind == Kind::out ? p.out : p.err;
                std::array<char, 16384> buf {};
                ssize_t r = ::read(fd.get(), buf.data(), buf.size());
                if (r > 0) {
                    fwd->feed(std::string_view(buf.data(), static_cast<size_t>(r)));
                } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
                    fwd->finish();
                    fd.reset();
                }
                break;
            }
            case Kind::pmi:
                if (pmi_conns_[s.index]->fd) {
                    on_pmi_readable(*pmi_conns_[s.index]);
                }
                break;
            case Kind::listener:
                accept_pmi_connection();
                break;
            case Kind::impi:
                on_impi_readable();
                break;
            }
        }
        std::erase_if(pmi_conns_, [](const std::unique_ptr<PmiConnection>& c) { return !c->fd; });
    }
}

int Job::run()
{
    // Signals arrive through a descriptor so the loop sees them in order
    // with everything else; SIGPIPE is ignored so a vanished reader of our
    // output is an error code, not our death.
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    for (int sig : forwarded_signals) {
        sigaddset(&mask, sig);
    }
    ::signal(SIGPIPE, SIG_IGN);
    pthread_sigmask(SIG_BLOCK, &mask, nullptr);
    signal_fd_.reset(::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!signal_fd_) {
        throw std::runtime_error(std::string("signalfd: ") + std::strerror(errno));
    }

    start_all();
    event_loop();
    reap_children();
    leave_federation();
    if (refusals_unlogged_ > 0) {
        std::cerr << "mpiexec: warning: refused " << refusals_unlogged_ << " more connection"
                  << (refusals_unlogged_ == 1 ? "" : "s") << " to the PMI port since the last message" << std::endl;
    }

    if (status_) {
        return *status_;
    }
    // Every process exited on its own: the first non-zero status, if any
    // slipped through (none should, on_process_exit reports them).
    for (const auto& p : procs_) {
        if (WIFSIGNALED(p.wait_status)) {
            return 128 + WTERMSIG(p.wait_status);
        }
        if (WIFEXITED(p.wait_status) && WEXITSTATUS(p.wait_status) != 0) {
            return WEXITSTATUS(p.wait_status);
        }
    }
    return 0;
}

} // namespace hashi::mpiexec
