// SPDX-License-Identifier: BSD-3-Clause
// The op table (operations.hpp).
#include "transport/engine/operations.hpp"

namespace hashi::fi {

op* operations::new_op()
{
    op* o;
    if (!free_.empty()) {
        o = free_.back();
        free_.pop_back();
        *o = op {};
    } else {
        all_.push_back(std::make_unique<op>());
        o = all_.back().get();
    }
    ++live_;
    return o;
}

void operations::release(op* o) noexcept
{
    settle(*o);
    o->owned.reset();
    --live_;
    free_.push_back(o);
}

void operations::expect(op& o, op::waits what)
{
    if (o.id == 0)
        o.id = next_id_++;
    o.wait = what;
    by_id_[o.id] = &o;
}

void operations::settle(op& o) noexcept
{
    if (o.wait != op::waits::nothing)
        by_id_.erase(o.id);
    o.wait = op::waits::nothing;
}

op* operations::find(std::uint64_t id, op::waits what, const peer* from) const noexcept
{
    auto it = by_id_.find(id);
    if (it == by_id_.end() || it->second->wait != what || it->second->p != from)
        return nullptr;
    return it->second;
}

std::vector<op*> operations::waiting_on(const peer* p) const
{
    std::vector<op*> out;
    for (const auto& [id, o] : by_id_)
        if (o->p == p)
            out.push_back(o);
    return out;
}

} // namespace hashi::fi
