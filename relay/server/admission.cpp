// SPDX-License-Identifier: BSD-3-Clause
#include "relay/server/admission.hpp"

#include <algorithm>
#include <map>

namespace hashi::impi {

Admission::Admission(AdmissionLimits limits) : limits_(limits)
{
    // A limit of 0 would evict every newcomer at once: at least one slot.
    limits_.per_source = std::max<std::size_t>(limits_.per_source, 1);
    limits_.total = std::max<std::size_t>(limits_.total, 1);
}

std::vector<Admission::Entry>::iterator Admission::oldest_unauthenticated(const std::string* source)
{
    return std::find_if(entries_.begin(), entries_.end(),
        [&](const Entry& e) { return !e.authenticated && (source == nullptr || e.source == *source); });
}

std::vector<Admission::Entry>::iterator Admission::busiest_oldest()
{
    std::map<std::string, std::size_t> count;
    std::size_t most = 0;
    for (const auto& e : entries_) {
        if (!e.authenticated) {
            most = std::max(most, ++count[e.source]);
        }
    }
    // entries_ is in order of arrival: the first match is the oldest.
    return std::find_if(
        entries_.begin(), entries_.end(), [&](const Entry& e) { return !e.authenticated && count[e.source] == most; });
}

std::vector<Admission::Eviction> Admission::admit(Id id, const std::string& source, Clock::time_point now)
{
    std::vector<Eviction> out;
    if (unauthenticated_from(source) >= limits_.per_source) {
        auto it = oldest_unauthenticated(&source);
        out.push_back({it->id, Reason::same_source});
        entries_.erase(it);
    }
    // The newcomer counts for its address, so an address that sends a
    // second connection is the busiest, but it is never the victim: it is
    // the youngest, and a tie at one connection each picks the oldest.
    entries_.push_back({id, source, now + limits_.deadline, false});
    if (unauthenticated() > limits_.total) {
        auto it = busiest_oldest();
        out.push_back({it->id, Reason::full});
        entries_.erase(it);
    }
    return out;
}

void Admission::authenticated(Id id)
{
    for (auto& e : entries_) {
        if (e.id == id) {
            e.authenticated = true;
        }
    }
}

void Admission::remove(Id id)
{
    std::erase_if(entries_, [id](const Entry& e) { return e.id == id; });
}

std::vector<Admission::Eviction> Admission::expired(Clock::time_point now)
{
    std::vector<Eviction> out;
    for (const auto& e : entries_) {
        if (now >= e.deadline) {
            out.push_back({e.id, Reason::deadline});
        }
    }
    std::erase_if(entries_, [now](const Entry& e) { return now >= e.deadline; });
    return out;
}

Admission::Clock::time_point Admission::next_deadline() const
{
    auto next = Clock::time_point::max();
    for (const auto& e : entries_) {
        next = std::min(next, e.deadline);
    }
    return next;
}

std::size_t Admission::unauthenticated() const
{
    return static_cast<std::size_t>(
        std::count_if(entries_.begin(), entries_.end(), [](const Entry& e) { return !e.authenticated; }));
}

std::size_t Admission::unauthenticated_from(const std::string& source) const
{
    return static_cast<std::size_t>(std::count_if(
        entries_.begin(), entries_.end(), [&](const Entry& e) { return !e.authenticated && e.source == source; }));
}

const char* reason_text(Admission::Reason r)
{
    switch (r) {
    case Admission::Reason::same_source:
        return "evicted: its address opened more unauthenticated connections than -max-unauth-per-source";
    case Admission::Reason::full:
        return "evicted: -max-unauth unauthenticated connections reached, this was the oldest of the busiest address";
    case Admission::Reason::deadline:
        return "did not authenticate and join within -auth-timeout";
    }
    return "?";
}

} // namespace hashi::impi
