// SPDX-License-Identifier: BSD-3-Clause
#include "pmi_server.hpp"

#include <utility>

namespace hashi::mpiexec {

PmiServer::PmiServer(PmiJobInfo info) : info_(std::move(info))
{
    if (!info_.process_mapping.empty()) {
        kvs_["PMI_process_mapping"] = info_.process_mapping;
    }
    // MPICH asks for this key to learn about failed processes; a running
    // job has none (a failure kills the job).
    kvs_["PMI_dead_processes"] = "";
}

PmiServer::Result PmiServer::handle(int rank, std::string_view line)
{
    if (rank < 0 || rank >= info_.size) {
        return {.replies = {}, .abort_code = {}, .error = "rank " + std::to_string(rank) + " is not in the job"};
    }
    // A multi-line command (mcmd=spawn ...) runs until "endcmd"; we do not
    // offer spawn, and say so once the block is complete.
    if (in_multiline_.contains(rank)) {
        std::string_view l = line;
        if (!l.empty() && l.back() == '\n') {
            l.remove_suffix(1);
        }
        if (l == "endcmd") {
            in_multiline_.erase(rank);
            return {
                .replies = {{rank,
                    pmi::format("spawn_result", {{"rc", "-1"}, {"errmsg", "hashi_mpiexec_does_not_support_spawn"}})}},
                .abort_code = {},
                .error = {}};
        }
        if (line.size() >= pmi::max_line) {
            return {.replies = {}, .abort_code = {}, .error = "line too long in multi-line command"};
        }
        return {};
    }
    std::string error;
    auto msg = pmi::parse(line, error);
    if (!msg) {
        return {.replies = {}, .abort_code = {}, .error = error};
    }
    return handle_message(rank, *msg);
}

PmiServer::Result PmiServer::handle_message(int rank, const pmi::Message& msg)
{
    Result r;
    auto reply = [&](std::string_view cmd, std::vector<std::pair<std::string, std::string>> fields = {}) {
        r.replies.push_back({rank, pmi::format(cmd, fields)});
    };
    const std::string& cmd = msg.cmd;

    if (cmd == "init") {
        auto version = msg.get("pmi_version");
        auto subversion = msg.get("pmi_subversion");
        if (version != "1") {
            reply("response_to_init", {{"pmi_version", "1"}, {"pmi_subversion", "1"}, {"rc", "-1"}});
        } else {
            initialized_.insert(rank);
            reply(
                "response_to_init", {{"pmi_version", "1"}, {"pmi_subversion", subversion.value_or("1")}, {"rc", "0"}});
        }
    } else if (cmd == "get_maxes") {
        reply("maxes",
            {{"kvsname_max", std::to_string(pmi::kvsname_max)}, {"keylen_max", std::to_string(pmi::keylen_max)},
                {"vallen_max", std::to_string(pmi::vallen_max)}});
    } else if (cmd == "get_appnum") {
        int appnum = rank < static_cast<int>(info_.appnum.size()) ? info_.appnum[rank] : 0;
        reply("appnum", {{"appnum", std::to_string(appnum)}});
    } else if (cmd == "get_universe_size") {
        reply("universe_size", {{"size", std::to_string(info_.universe_size)}});
    } else if (cmd == "get_my_kvsname") {
        reply("my_kvsname", {{"kvsname", info_.kvsname}});
    } else if (cmd == "put") {
        auto kvsname = msg.get("kvsname");
        auto key = msg.get("key");
        auto value = msg.get("value");
        if (!kvsname || !key || !value) {
            reply("put_result", {{"rc", "-1"}, {"msg", "put_needs_kvsname_key_and_value"}});
        } else if (*kvsname != info_.kvsname) {
            reply("put_result", {{"rc", "-1"}, {"msg", "unknown_kvsname_" + *kvsname}});
        } else if (key->empty() || key->size() > pmi::keylen_max || value->size() > pmi::vallen_max) {
            reply("put_result", {{"rc", "-1"}, {"msg", "key_or_value_too_long"}});
        } else {
            kvs_[*key] = *value;
            if (info_.global_barrier && new_key_set_.insert(*key).second) {
                new_keys_.push_back(*key);
            }
            reply("put_result", {{"rc", "0"}, {"msg", "success"}});
        }
    } else if (cmd == "get") {
        auto kvsname = msg.get("kvsname");
        auto key = msg.get("key");
        if (!kvsname || !key) {
            reply("get_result", {{"rc", "-1"}, {"msg", "get_needs_kvsname_and_key"}});
        } else if (*kvsname != info_.kvsname) {
            reply("get_result", {{"rc", "-1"}, {"msg", "unknown_kvsname_" + *kvsname}});
        } else if (auto it = kvs_.find(*key); it == kvs_.end()) {
            reply("get_result", {{"rc", "-1"}, {"msg", "key_" + *key + "_not_found"}});
        } else {
            reply("get_result", {{"rc", "0"}, {"msg", "success"}, {"value", it->second}});
        }
    } else if (cmd == "barrier_in") {
        in_barrier_.insert(rank);
        if (info_.global_barrier) {
            r.barrier_complete = static_cast<int>(in_barrier_.size()) == info_.size;
        } else if (static_cast<int>(in_barrier_.size()) == info_.size) {
            for (int rk : in_barrier_) {
                r.replies.push_back({rk, pmi::format("barrier_out")});
            }
            in_barrier_.clear();
        }
    } else if (cmd == "finalize") {
        finalized_.insert(rank);
        reply("finalize_ack");
    } else if (cmd == "abort") {
        int code = 1;
        if (auto c = msg.get("exitcode")) {
            try {
                code = std::stoi(*c);
            } catch (const std::exception&) {
                code = 1;
            }
        }
        r.abort_code = code;
    } else if (cmd == "publish_name") {
        auto service = msg.get("service");
        auto port = msg.get("port");
        if (!service || !port) {
            reply("publish_result", {{"rc", "-1"}, {"msg", "publish_needs_service_and_port"}});
        } else if (published_.contains(*service)) {
            reply("publish_result", {{"rc", "-1"}, {"msg", "service_" + *service + "_already_published"}});
        } else {
            published_[*service] = *port;
            reply("publish_result", {{"rc", "0"}, {"msg", "success"}});
        }
    } else if (cmd == "unpublish_name") {
        auto service = msg.get("service");
        if (service && published_.erase(*service) > 0) {
            reply("unpublish_result", {{"rc", "0"}, {"msg", "success"}});
        } else {
            reply("unpublish_result", {{"rc", "-1"}, {"msg", "service_not_published"}});
        }
    } else if (cmd == "lookup_name") {
        auto service = msg.get("service");
        auto it = service ? published_.find(*service) : published_.end();
        if (it == published_.end()) {
            reply("lookup_result", {{"rc", "-1"}, {"msg", "service_not_found"}});
        } else {
            reply("lookup_result", {{"rc", "0"}, {"msg", "success"}, {"port", it->second}});
        }
    } else if (cmd == "spawn") {
        in_multiline_.insert(rank);
    } else {
        r.error = "unknown PMI command '" + cmd + "'";
    }
    return r;
}

std::vector<KeyValue> PmiServer::take_new_entries()
{
    std::vector<KeyValue> out;
    out.reserve(new_keys_.size());
    for (const auto& k : new_keys_) {
        out.emplace_back(k, kvs_[k]);
    }
    new_keys_.clear();
    new_key_set_.clear();
    return out;
}

std::vector<PmiServer::Reply> PmiServer::release_barrier(const std::vector<KeyValue>& remote_entries)
{
    for (const auto& [k, v] : remote_entries) {
        kvs_[k] = v;
    }
    std::vector<Reply> replies;
    for (int rk : in_barrier_) {
        replies.push_back({rk, pmi::format("barrier_out")});
    }
    in_barrier_.clear();
    return replies;
}

} // namespace hashi::mpiexec
