// SPDX-License-Identifier: BSD-3-Clause
#include "rank_binding.hpp"

#include "common/number_text.hpp"
#include "cpu_topology.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

namespace hashi::mpiexec {

std::vector<std::string> bind_request_args(const BindRequest& req)
{
    std::vector<std::string> args {"--bind-to", req.bind_to.empty() ? std::string("none") : req.bind_to};
    if (!req.map_by.empty()) {
        args.insert(args.end(), {"--map-by", req.map_by});
    }
    args.insert(args.end(),
        {"--local-index", std::to_string(req.local_index), "--rank", std::to_string(req.rank), "--host", req.host});
    if (req.report) {
        args.emplace_back("--report");
    }
    args.emplace_back("--");
    return args;
}

std::optional<BindRequest> parse_bind_request(const std::vector<std::string>& args, size_t& pos, std::string& error)
{
    BindRequest req;
    while (pos < args.size() && args[pos] != "--") {
        const auto& flag = args[pos++];
        if (flag == "--report") {
            req.report = true;
            continue;
        }
        if (pos >= args.size()) {
            error = flag + " needs a value";
            return std::nullopt;
        }
        const auto& value = args[pos++];
        if (flag == "--bind-to") {
            req.bind_to = value == "none" ? std::string() : value;
        } else if (flag == "--map-by") {
            req.map_by = value;
        } else if (flag == "--host") {
            req.host = value;
        } else if (flag == "--local-index" || flag == "--rank") {
            auto n = parse_whole(flag, value, {.lo = 0, .hi = 1U << 30}, error);
            if (!n) {
                return std::nullopt;
            }
            (flag == "--rank" ? req.rank : req.local_index) = static_cast<int>(*n);
        } else {
            error = "unknown word '" + flag + "'";
            return std::nullopt;
        }
    }
    if (pos >= args.size()) {
        error = "needs '-- program'";
        return std::nullopt;
    }
    ++pos; // "--"
    return req;
}

AffinityMask::AffinityMask(const std::vector<unsigned>& cpus)
{
    unsigned highest = 0;
    for (unsigned c : cpus) {
        highest = std::max(highest, c);
    }
    const int count = static_cast<int>(highest) + 1;
    set_ = CPU_ALLOC(count);
    size_ = CPU_ALLOC_SIZE(count);
    CPU_ZERO_S(size_, set_);
    for (unsigned c : cpus) {
        CPU_SET_S(c, size_, set_);
    }
}

AffinityMask::~AffinityMask()
{
    CPU_FREE(set_);
}

bool AffinityMask::apply() const noexcept
{
    return ::sched_setaffinity(0, size_, set_) == 0;
}

std::vector<unsigned> current_affinity()
{
    // Large enough for any machine the kernel supports today; grows if not.
    for (int count = 1024; count <= (1 << 20); count *= 8) {
        cpu_set_t* set = CPU_ALLOC(count);
        const size_t size = CPU_ALLOC_SIZE(count);
        if (::sched_getaffinity(0, size, set) == 0) {
            std::vector<unsigned> cpus;
            for (int c = 0; c < count; ++c) {
                if (CPU_ISSET_S(c, size, set)) {
                    cpus.push_back(static_cast<unsigned>(c));
                }
            }
            CPU_FREE(set);
            return cpus;
        }
        CPU_FREE(set);
        if (errno != EINVAL) {
            break;
        }
    }
    return {};
}

std::string binding_report(const BindRequest& req, const std::optional<CpuBinding>& binding)
{
    std::string line = "mpiexec: rank " + std::to_string(req.rank) + " on " + req.host;
    const std::string asked = "-bind-to " + (req.bind_to.empty() ? std::string("none") : req.bind_to) +
        (req.map_by.empty() ? std::string() : " -map-by " + req.map_by);
    if (binding) {
        return line + " bound to cpus " + cpu_list_text(binding->cpus) + " (" + binding->what + "; " + asked + ")";
    }
    return line + " not bound, may run on cpus " + cpu_list_text(current_affinity()) + " (" + asked + ")";
}

std::string bind_this_process(const BindRequest& req)
{
    const std::string where = "cannot bind rank " + std::to_string(req.rank) + " on " + req.host + ": ";
    std::optional<CpuBinding> binding;
    try {
        const auto spec = parse_binding(req.bind_to, req.map_by);
        if (spec.binds()) {
            binding = binding_of(plan_bindings(CpuTopology::of_this_process(), spec), req.local_index);
        }
    } catch (const BindingError& e) {
        throw BindingError(where + e.what());
    }
    if (binding && !AffinityMask(binding->cpus).apply()) {
        throw BindingError(
            where + "sched_setaffinity to cpus " + cpu_list_text(binding->cpus) + ": " + std::strerror(errno));
    }
    return req.report ? binding_report(req, binding) : std::string();
}

bool bind_this_process_or_say_why(const BindRequest& req)
{
    try {
        if (auto line = bind_this_process(req); !line.empty()) {
            std::cerr << line << std::endl;
        }
        return true;
    } catch (const BindingError& e) {
        std::cerr << "mpiexec: " << e.what() << std::endl;
        return false;
    }
}

int run_exec_binder(int argc, char** argv)
{
    std::vector<std::string> args(argv + 2, argv + argc);
    size_t pos = 0;
    std::string error;
    auto req = parse_bind_request(args, pos, error);
    if (!req || pos >= args.size()) {
        std::cerr << "mpiexec " << exec_binder_flag
                  << ": internal mode of the exec launcher (mpiexec -bind-to starts it): "
                  << (req ? std::string("no program after '--'") : error) << std::endl;
        return 2;
    }
    if (!bind_this_process_or_say_why(*req)) {
        return 2;
    }
    char** program = argv + 2 + pos;
    ::execvp(program[0], program);
    std::cerr << "mpiexec: cannot execute '" << program[0] << "' for rank " << req->rank << " on " << req->host << ": "
              << std::strerror(errno) << std::endl;
    return 127;
}

} // namespace hashi::mpiexec
