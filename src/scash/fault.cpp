// SPDX-License-Identifier: BSD-3-Clause
// Access detection: the application view's protections follow the page
// states, so the first read of an invalid page and the first write of a
// read-only page raise SIGSEGV, and the handler here moves the page along
// its state machine (page_state.hpp).
//
// The handler calls MPI (to fetch a page from its home). That is only sound
// because the fault is synchronous: it comes from the application's own load
// or store, never from inside MPI, as long as no pointer into a shared
// region is handed to MPI (scash.h says so). The handler never allocates:
// the written-page lists are reserved ahead.
#include "scash/protocol.hpp"
#include "scash/runtime.hpp"
#include "scash/wait.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ucontext.h>

namespace hashi::scash {

namespace {

struct sigaction previous_action;
bool installed = false;

void die(const char* msg)
{
    // Async-signal-safe: write(2), then the default action.
    ssize_t ignored = write(STDERR_FILENO, msg, std::strlen(msg));
    (void)ignored;
    std::abort();
}

// x86-64 reports whether the fault was a write; elsewhere a write to an
// invalid page costs a second fault (read first, then write).
bool fault_was_write([[maybe_unused]] void* uctx)
{
#if defined(__x86_64__)
    auto* uc = static_cast<ucontext_t*>(uctx);
    return (uc->uc_mcontext.gregs[REG_ERR] & 0x2) != 0;
#else
    return false;
#endif
}

// Fetches pages [page, page + n) from their (common) home into the backing
// view: one request, one reply.
void fetch_pages(Runtime& rt, Region& r, std::size_t page, std::size_t n)
{
    const int home = r.homes.home(page);
    if (home == rt.rank)
        die("scash: internal error: this process is the home of an invalid page\n");
    MsgHeader h {MsgType::PageGet, std::uint32_t(n), global_page(r.id, page)};
    MPI_Request req[2];
    if (MPI_Irecv(r.backing_page(page, rt.page_size), int(n * rt.page_size), MPI_BYTE, home, kTagReply, rt.proto,
            &req[0]) != MPI_SUCCESS ||
        isend_bytes(rt, &h, sizeof h, home, kTagRequest, req[1]) != MPI_SUCCESS)
        die("scash: sending a page request failed; the job cannot continue\n");
    if (!wait_all(rt, req))
        die("scash: receiving a page failed; the job cannot continue\n");
    rt.stats.pages_fetched.fetch_add(n, std::memory_order_relaxed);
    for (std::size_t i = 0; i < n; ++i)
        r.flags[page + i] &= std::uint8_t(~kPristine);
}

// How many pages a read fault on page fetches: the page, then the invalid
// pages right after it with the same home, up to rt.fetch_batch in all.
std::size_t fetch_run(const Runtime& rt, const Region& r, std::size_t page)
{
    const int home = r.homes.home(page);
    std::size_t n = 1;
    while (n < rt.fetch_batch && page + n < r.npages && r.state[page + n] == PageState::Invalid &&
        r.homes.home(page + n) == home)
        ++n;
    return n;
}

void on_write(Runtime& rt, Region& r, std::size_t page)
{
    rt.stats.write_faults.fetch_add(1, std::memory_order_relaxed);
    if (r.homes.home(page) != rt.rank) {
        // The twin records the page before this process's writes, so the
        // release can send only what changed. A pristine page's twin is
        // zeros: no copy (the first writes of a fresh region, e.g. a fill
        // before the first barrier moves the homes to the writers).
        if (r.flags[page] & kPristine)
            r.flags[page] |= kZeroTwin;
        else
            std::memcpy(r.twin_page(page, rt.page_size), r.backing_page(page, rt.page_size), rt.page_size);
        r.flags[page] |= kTwinned;
    }
    r.flags[page] &= std::uint8_t(~kPristine);
    const GlobalPage g = global_page(r.id, page);
    if (!(r.flags[page] & kWrittenInterval)) {
        r.flags[page] |= kWrittenInterval;
        rt.written_interval.push_back(g);
    }
    if (!(r.flags[page] & kWrittenRelease)) {
        r.flags[page] |= kWrittenRelease;
        rt.written_release.push_back(g);
    }
    set_protection(rt, r, page, PageState::Writable);
}

void handler(int sig, siginfo_t* info, void* uctx)
{
    Runtime* rt = runtime();
    Region* r = rt ? rt->regions.find(info->si_addr) : nullptr;
    if (!r) {
        // Not ours: let the previous disposition handle the re-executed access.
        sigaction(sig, &previous_action, nullptr);
        return;
    }
    const auto offset = std::size_t(static_cast<std::byte*>(info->si_addr) - r->app);
    const std::size_t page = offset / rt->page_size;
    switch (r->state[page]) {
    case PageState::Invalid: {
        rt->stats.read_faults.fetch_add(1, std::memory_order_relaxed);
        const std::size_t n = fetch_run(*rt, *r, page);
        fetch_pages(*rt, *r, page, n);
        if (fault_was_write(uctx)) {
            if (n > 1) // the pages after the faulting one are readable copies now
                set_protection(*rt, *r, page + 1, PageState::ReadOnly, n - 1);
            on_write(*rt, *r, page);
        } else {
            set_protection(*rt, *r, page, PageState::ReadOnly, n); // one call for the whole run
        }
        break;
    }
    case PageState::ReadOnly:
        on_write(*rt, *r, page);
        break;
    case PageState::Writable:
        die("scash: fault on a writable shared page (was its protection changed outside SCASH?)\n");
    }
}

} // namespace

void set_protection(Runtime& rt, Region& r, std::size_t page, PageState s, std::size_t n)
{
    const int prot = s == PageState::Invalid ? PROT_NONE
        : s == PageState::ReadOnly           ? PROT_READ
                                             : PROT_READ | PROT_WRITE;
    if (mprotect(r.app_page(page, rt.page_size), n * rt.page_size, prot) != 0)
        die("scash: mprotect failed (too many distinct protections? raise vm.max_map_count)\n");
    for (std::size_t i = 0; i < n; ++i)
        r.state[page + i] = s;
}

void set_protection_runs(Runtime& rt, std::vector<GlobalPage>& pages, PageState s)
{
    // One mprotect per run of consecutive pages of one region: a page index
    // lives in the low 32 bits, so consecutive pages are consecutive values.
    std::sort(pages.begin(), pages.end());
    for (std::size_t i = 0; i < pages.size();) {
        std::size_t k = 1;
        while (i + k < pages.size() && pages[i + k] == pages[i] + k)
            ++k;
        if (Region* r = rt.regions.by_id(region_of(pages[i])))
            set_protection(rt, *r, page_of(pages[i]), s, k);
        i += k;
    }
    pages.clear();
}

void fetch_copies(Runtime& rt, Region& r, std::size_t page, std::size_t n)
{
    // Runs of invalid pages with one home: one request each.
    const std::size_t end = page + n;
    while (page < end) {
        if (r.state[page] != PageState::Invalid) {
            ++page;
            continue;
        }
        std::size_t k = 1;
        while (
            page + k < end && r.state[page + k] == PageState::Invalid && r.homes.home(page + k) == r.homes.home(page))
            ++k;
        fetch_pages(rt, r, page, k);
        set_protection(rt, r, page, PageState::ReadOnly, k);
        page += k;
    }
}

void invalidate_page(Runtime& rt, Region& r, std::size_t page)
{
    if (r.state[page] != PageState::Invalid) {
        rt.stats.invalidations.fetch_add(1, std::memory_order_relaxed);
        set_protection(rt, r, page, PageState::Invalid);
    }
    r.flags[page] &= std::uint8_t(~(kTwinned | kZeroTwin));
}

void reserve_written_lists(Runtime& rt)
{
    std::size_t total = 0;
    for (std::uint32_t i = 0; i < rt.regions.count(); ++i)
        if (Region* r = rt.regions.by_id(i))
            total += r->npages;
    rt.written_interval.reserve(total);
    rt.written_release.reserve(total);
}

bool install_fault_handler()
{
    struct sigaction sa { };
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &previous_action) != 0)
        return false;
    installed = true;
    return true;
}

void remove_fault_handler()
{
    if (installed)
        sigaction(SIGSEGV, &previous_action, nullptr);
    installed = false;
}

} // namespace hashi::scash
