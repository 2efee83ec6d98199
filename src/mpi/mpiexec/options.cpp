// SPDX-License-Identifier: BSD-3-Clause
#include "options.hpp"

#include "common/number_text.hpp"
#include "slurm_allocation.hpp"

#include <cctype>
#include <numeric>

namespace hashi::mpiexec {
namespace {

constexpr int max_procs = 1 << 20;
constexpr int max_timeout = 365 * 24 * 3600;
constexpr int max_clients = 32; // IMPI's client_mask is 32 bits

// A flag's (or variable's: a label ending in '=') whole-number value.
int parse_count(std::string_view label, const std::string& text, int lo, int hi, std::string_view unit = {})
{
    std::string error;
    const auto v = parse_whole(
        label, text, {.lo = static_cast<std::uint64_t>(lo), .hi = static_cast<std::uint64_t>(hi), .unit = unit}, error);
    if (!v) {
        throw UsageError(error);
    }
    return static_cast<int>(*v);
}

bool valid_env_name(std::string_view name)
{
    if (name.empty() || (std::isdigit(static_cast<unsigned char>(name[0])) != 0)) {
        return false;
    }
    for (char c : name) {
        if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') {
            return false;
        }
    }
    return true;
}

LauncherKind parse_launcher(const std::string& name)
{
    if (name == "fork") {
        return LauncherKind::fork;
    }
    if (name == "ssh") {
        return LauncherKind::ssh;
    }
    if (name == "exec") {
        return LauncherKind::exec;
    }
    if (name == "slurm") {
        return LauncherKind::slurm;
    }
    throw UsageError("unknown launcher '" + name + "' (choose fork, ssh, exec or slurm)");
}

// Walks argv, handing out flag values with a clear error when one is missing.
class ArgCursor {
public:
    explicit ArgCursor(const std::vector<std::string>& args) : args_(args) { }
    [[nodiscard]] bool done() const { return pos_ >= args_.size(); }
    const std::string& peek() const { return args_[pos_]; }
    const std::string& next() { return args_[pos_++]; }
    const std::string& value(std::string_view flag)
    {
        if (done()) {
            throw UsageError("option " + std::string(flag) + " needs a value");
        }
        return next();
    }

private:
    const std::vector<std::string>& args_;
    size_t pos_ = 0;
};

// The hosts and slots of the Slurm allocation mpiexec runs in.
std::vector<HostSlots> hosts_of_allocation(const EnvLookup& env)
{
    auto nodelist = env("SLURM_JOB_NODELIST");
    if (!nodelist || nodelist->empty()) {
        nodelist = env("SLURM_NODELIST"); // what Slurm before 20.02 and srun steps also set
    }
    auto tasks = env("SLURM_TASKS_PER_NODE");
    if (!nodelist || nodelist->empty() || !tasks || tasks->empty()) {
        throw UsageError("-launcher slurm needs a Slurm allocation (SLURM_JOB_NODELIST and SLURM_TASKS_PER_NODE are "
                         "not both set): run mpiexec inside salloc or sbatch, or give -hosts");
    }
    try {
        return slurm_hosts(*nodelist, *tasks);
    } catch (const SlurmAllocationError& e) {
        throw UsageError("the Slurm allocation cannot be read (SLURM_JOB_NODELIST='" + *nodelist +
            "', SLURM_TASKS_PER_NODE='" + *tasks + "'): " + e.what());
    }
}

} // namespace

int Options::total_procs() const
{
    return std::accumulate(apps.begin(), apps.end(), 0, [](int sum, const AppSegment& a) { return sum + a.nprocs; });
}

Options parse_options(const std::vector<std::string>& args, const EnvLookup& env, std::string_view default_provider)
{
    Options opt;
    bool hosts_given = false;
    bool impi_timeout_given = false;
    std::string bind_to;
    std::string map_by;
    ArgCursor cur(args);
    AppSegment seg;

    auto finish_segment = [&](bool at_colon) {
        if (seg.argv.empty()) {
            throw UsageError(at_colon ? "nothing before ':' (each ':' must follow a program)"
                                      : "no program given (usage: mpiexec [options] -n N program [args])");
        }
        opt.apps.push_back(std::move(seg));
        seg = AppSegment {};
    };

    while (!cur.done()) {
        const std::string& a = cur.next();
        if (!seg.argv.empty()) {
            // Inside a program's arguments: only ':' ends them.
            if (a == ":") {
                finish_segment(true);
            } else {
                seg.argv.push_back(a);
            }
            continue;
        }
        if (a == ":") {
            finish_segment(true);
        } else if (a == "-h" || a == "-help" || a == "--help") {
            opt.help = true;
        } else if (a == "-version" || a == "--version") {
            opt.version = true;
        } else if (a == "-n" || a == "-np") {
            seg.nprocs = parse_count("option " + a, cur.value(a), 1, max_procs);
        } else if (a == "-env") {
            const auto& k = cur.value(a);
            if (!valid_env_name(k)) {
                throw UsageError("-env: '" + k + "' is not a valid environment variable name");
            }
            seg.env.emplace_back(k, cur.value("-env " + k));
        } else if (a == "-genv") {
            const auto& k = cur.value(a);
            if (!valid_env_name(k)) {
                throw UsageError("-genv: '" + k + "' is not a valid environment variable name");
            }
            opt.genv.emplace_back(k, cur.value("-genv " + k));
        } else if (a == "-genvall") {
            opt.env_policy = EnvPolicy::all;
        } else if (a == "-genvnone") {
            opt.env_policy = EnvPolicy::none;
        } else if (a == "-genvlist") {
            opt.env_policy = EnvPolicy::list;
            const auto& list = cur.value(a);
            size_t pos = 0;
            while (pos <= list.size()) {
                auto comma = list.find(',', pos);
                auto name = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
                if (!valid_env_name(name)) {
                    throw UsageError("-genvlist: '" + name + "' is not a valid environment variable name");
                }
                opt.env_list.push_back(name);
                if (comma == std::string::npos) {
                    break;
                }
                pos = comma + 1;
            }
        } else if (a == "-wdir") {
            seg.wdir = cur.value(a);
        } else if (a == "-gwdir") {
            opt.gwdir = cur.value(a);
        } else if (a == "-hosts" || a == "-host") {
            if (hosts_given) {
                throw UsageError("hosts given twice (use one -hosts or one -f)");
            }
            try {
                opt.hosts = parse_host_list(cur.value(a));
            } catch (const HostListError& e) {
                throw UsageError(std::string(a) + ": " + e.what());
            }
            hosts_given = true;
        } else if (a == "-f" || a == "-hostfile" || a == "-machinefile") {
            if (hosts_given) {
                throw UsageError("hosts given twice (use one -hosts or one -f)");
            }
            try {
                opt.hosts = read_hostfile(cur.value(a));
            } catch (const HostListError& e) {
                throw UsageError(std::string("bad hostfile: ") + e.what());
            }
            hosts_given = true;
        } else if (a == "-ppn") {
            opt.ppn = parse_count("option " + a, cur.value(a), 1, max_procs);
        } else if (a == "-launcher") {
            opt.launcher = parse_launcher(cur.value(a));
        } else if (a == "-launcher-exec") {
            opt.launcher_exec = cur.value(a);
            if (opt.launcher_exec.find_first_not_of(" \t") == std::string::npos) {
                throw UsageError("-launcher-exec: the template is empty");
            }
        } else if (a == "-l" || a == "-prepend-rank") {
            opt.prepend_rank = true;
        } else if (a == "-v" || a == "-verbose") {
            opt.verbose = true;
        } else if (a == "-bind-to" || a == "-binding") {
            bind_to = cur.value(a);
        } else if (a == "-map-by") {
            map_by = cur.value(a);
        } else if (a == "-print-bindings") {
            opt.print_bindings = true;
        } else if (a == "-oversubscribe") {
            opt.oversubscribe = true;
        } else if (a == "-provider") {
            opt.provider = cur.value(a);
            if (opt.provider.empty()) {
                throw UsageError("-provider: the provider name is empty");
            }
        } else if (a == "-timeout") {
            opt.timeout_seconds = parse_count("option " + a, cur.value(a), 1, max_timeout, "seconds");
        } else if (a == "-client") {
            if (opt.federation.active()) {
                throw UsageError("-client given twice");
            }
            opt.federation.client = parse_count("option " + a, cur.value(a), 0, max_clients - 1);
            opt.federation.server = cur.value("-client " + std::to_string(opt.federation.client));
            auto colon = opt.federation.server.rfind(':');
            if (colon == std::string::npos || colon == 0 || colon + 1 == opt.federation.server.size()) {
                throw UsageError("-client " + std::to_string(opt.federation.client) + ": '" + opt.federation.server +
                    "' is not addr:port (use the address impi-server printed)");
            }
        } else if (a == "-impi-secret-file") {
            opt.federation.secret_file = cur.value(a);
        } else if (a == "-impi-secret") {
            opt.federation.secret = cur.value(a);
        } else if (a == "-impi-key") {
            opt.federation.key = cur.value(a);
        } else if (a == "-impi-auth-key") {
            opt.federation.enable_key = true;
        } else if (a == "-impi-auth-none") {
            opt.federation.enable_none = true;
        } else if (a == "-impi-timeout") {
            impi_timeout_given = true;
            opt.federation.timeout_seconds = parse_count("option " + a, cur.value(a), 1, max_timeout, "seconds");
        } else if (!a.empty() && a[0] == '-') {
            throw UsageError("unknown option '" + a + "' (mpiexec -help lists the options)");
        } else {
            seg.argv.push_back(a);
        }
    }
    if (opt.help || opt.version) {
        return opt;
    }
    // A trailing ':' promises another program, as does an empty command line.
    if (!seg.argv.empty() || opt.apps.empty() || (!args.empty() && args.back() == ":")) {
        finish_segment(false);
    }

    try {
        opt.binding = parse_binding(bind_to, map_by);
    } catch (const BindingError& e) {
        throw UsageError(std::string(e.what()) + " (mpiexec -help lists the forms)");
    }

    // Defaults from the environment, weaker than flags.
    if (!hosts_given) {
        if (auto hf = env("HASHI_HOSTFILE"); hf && !hf->empty()) {
            try {
                opt.hosts = read_hostfile(*hf);
            } catch (const HostListError& e) {
                throw UsageError(std::string("bad hostfile (from HASHI_HOSTFILE): ") + e.what());
            }
        }
    }
    if (opt.provider.empty()) {
        if (auto p = env("HASHI_PROVIDER"); p && !p->empty()) {
            opt.provider = *p;
        } else if (auto fp = env("FI_PROVIDER"); fp && !fp->empty()) {
            opt.provider = *fp;
        } else {
            opt.provider = std::string(default_provider);
        }
    }
    if (opt.timeout_seconds == 0) {
        if (auto t = env("MPIEXEC_TIMEOUT"); t && !t->empty()) {
            opt.timeout_seconds = parse_count("MPIEXEC_TIMEOUT=", *t, 1, max_timeout, "seconds");
        }
    }
    const auto& fed = opt.federation;
    if (!fed.active() &&
        (fed.secret || fed.secret_file || fed.key || fed.enable_key || fed.enable_none || impi_timeout_given)) {
        throw UsageError("the -impi-* options belong to a federated job: add -client K addr:port");
    }
    if (fed.active() && !impi_timeout_given) {
        if (auto t = env("HASHI_IMPI_TIMEOUT"); t && !t->empty()) {
            opt.federation.timeout_seconds = parse_count("HASHI_IMPI_TIMEOUT=", *t, 1, max_timeout, "seconds");
        }
    }
    bool launcher_from_flag = false;
    for (const auto& a : args) {
        if (a == "-launcher") {
            launcher_from_flag = true;
        }
        if (a == ":") {
            break;
        }
    }
    bool launcher_chosen = launcher_from_flag;
    if (!launcher_from_flag) {
        if (auto l = env("HASHI_LAUNCHER"); l && !l->empty()) {
            launcher_chosen = true;
            try {
                opt.launcher = parse_launcher(*l);
            } catch (const UsageError& e) {
                throw UsageError(std::string("HASHI_LAUNCHER (environment): ") + e.what());
            }
        }
    }
    if (opt.launcher_exec.empty()) {
        if (auto t = env("HASHI_LAUNCHER_EXEC"); t && !t->empty()) {
            opt.launcher_exec = *t;
        }
    }
    // A template without a launcher means the exec launcher, as in Hydra's
    // -launcher-exec; a template with fork is a contradiction.
    if (!opt.launcher_exec.empty() && opt.launcher == LauncherKind::fork) {
        if (launcher_from_flag) {
            throw UsageError("-launcher-exec was given with -launcher fork, which runs programs directly; "
                             "use -launcher exec (or drop -launcher fork)");
        }
        opt.launcher = LauncherKind::exec;
    }
    // Inside a Slurm allocation the hosts are Slurm's, as with Hydra: a
    // plain `mpiexec -n 4 ./app` in salloc or sbatch runs on the allocation.
    const bool in_allocation = env("SLURM_JOB_ID").has_value();
    if (!launcher_chosen && opt.launcher == LauncherKind::fork && opt.launcher_exec.empty() && opt.hosts.empty() &&
        in_allocation) {
        opt.launcher = LauncherKind::slurm;
    }
    if (opt.launcher == LauncherKind::slurm && opt.hosts.empty()) {
        opt.hosts = hosts_of_allocation(env);
    }
    if (opt.launcher == LauncherKind::exec) {
        if (opt.launcher_exec.empty()) {
            throw UsageError("-launcher exec needs a template, e.g. -launcher-exec 'ip netns exec {host}'");
        }
        if (opt.launcher_exec.find("{host}") == std::string::npos) {
            throw UsageError("-launcher-exec template '" + opt.launcher_exec +
                "' does not mention {host}; every process would start the same way");
        }
    }
    if ((opt.launcher == LauncherKind::ssh || opt.launcher == LauncherKind::exec) && opt.hosts.empty()) {
        throw UsageError("launcher " + std::string(opt.launcher == LauncherKind::ssh ? "ssh" : "exec") +
            " needs hosts (-hosts or -f)");
    }

    // Segments without -n: all slots if hosts are known, else one process.
    int slots = 0;
    for (const auto& h : opt.hosts) {
        slots += h.slots;
    }
    for (auto& app : opt.apps) {
        if (app.nprocs == 0) {
            app.nprocs = opt.apps.size() == 1 && slots > 0 ? slots : 1;
        }
    }
    if (opt.total_procs() > max_procs) {
        throw UsageError("too many processes in total (" + std::to_string(opt.total_procs()) + ")");
    }
    return opt;
}

std::string usage_text()
{
    return R"(Usage: mpiexec [global options] [local options] program [args] [: [local options] program [args] ...]

Local options (per program):
  -n, -np N             number of processes (default: all slots of the hosts, else 1)
  -env NAME VALUE       set NAME for this program's processes
  -wdir DIR             working directory of this program's processes

Global options:
  -hosts H1[:N],H2[:N]  hosts to run on, with slot counts (default: this host)
  -f, -hostfile FILE    hostfile: one 'host', 'host:N' or 'host slots=N' per line, '#' comments
  -ppn N                processes per host (default: fill each host's slots, then wrap)
  -oversubscribe        start more than 64 processes per CPU of this machine
  -bind-to OBJ[:N]      bind each rank to N (default 1) objects of its node, as Hydra:
                        core, hwthread, socket, numa, l1cache, l2cache, l3cache,
                        machine; rr (one hwthread each); user:0+1,2-3,4x2 (CPUs
                        per local rank); none (default). Ranks beyond the node's
                        objects share them again from the first
  -map-by OBJ[:N]       go round these objects when handing out bindings
                        (default: the -bind-to object), e.g. -bind-to core -map-by socket
  -print-bindings       print each rank's CPUs as bound where it starts (-v does too)
  -genv NAME VALUE      set NAME for every process
  -genvall              pass mpiexec's whole environment (default)
  -genvnone             pass no environment except what -genv/-env set
  -genvlist A,B         pass only the listed variables
  -gwdir DIR            working directory of every process
  -launcher fork|ssh|exec|slurm
                        fork: processes on this host; ssh: one ssh per process;
                        exec: run a template command per process; slurm: one
                        srun step per process, hosts and slots from the Slurm
                        allocation unless -hosts/-f are given (chosen by itself
                        inside salloc/sbatch when no hosts and no launcher are given)
  -launcher-exec TEMPLATE
                        exec template, {host} and {rank} substituted, e.g.
                        'ip netns exec {host}'; for ssh, the ssh command;
                        for slurm, the srun command (default 'srun')
  -provider NAME        libfabric provider for the job (default from HASHI_PROVIDER,
                        then FI_PROVIDER, then the build's default)
  -l, -prepend-rank     prefix each output line with [rank]
  -timeout SEC          kill the job after SEC seconds (also MPIEXEC_TIMEOUT)
  -v, -verbose          say what is launched and how
  -version              print versions and exit
  -h, -help             print this help

One job across clusters (impi-server -server N prints addr:port; see relay/README.md):
  -client K ADDR:PORT   run cluster K's ranks (K = 0..31) of the job; ranks get global
                        ranks, client 0's first, and HASHI_CLUSTER_ID=K
  -impi-secret-file F   the job's secret, shared with impi-server and every cluster
                        (also HASHI_IMPI_SECRET_FILE, or HASHI_IMPI_SECRET=secret)
  -impi-secret S        the secret itself (visible in ps; prefer the file)
  -impi-auth-key        also offer IMPI_AUTH_KEY, the key from -impi-key N or IMPI_AUTH_KEY
  -impi-auth-none       also offer IMPI_AUTH_NONE (no authentication)
  -impi-timeout SEC     wait at most SEC seconds for the server and the other
                        clusters before any rank starts (default 60; also HASHI_IMPI_TIMEOUT)

Exit status: 0 when every process exits 0; the MPI_Abort code when a process
aborts; 128+signal when a process is killed by a signal; otherwise the first
non-zero exit status. When one process fails, the others are killed.
)";
}

} // namespace hashi::mpiexec
