// SPDX-License-Identifier: BSD-3-Clause
// The job's census on this machine (machine_census.hpp has the contract).
#include "transport/engine/machine_census.hpp"

#include "transport/common.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace hashi::fi {

// One page: the counts first, read without the lock; the rest is only
// touched under it.
struct machine_census::page {
    std::atomic<std::uint32_t> ranks;
    std::atomic<std::uint32_t> cpus;
    std::uint64_t cpu_set[8]; // CPUs 0-511 (a CPU beyond is not counted)
    std::int32_t slots[max_ranks]; // pids; 0 free
};
static_assert(sizeof(machine_census::page) <= 4096);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

namespace {

// Holds the file's lock for a scope.
class file_lock {
public:
    explicit file_lock(int fd) noexcept : fd_(fd)
    {
        while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
        }
    }
    ~file_lock() { ::flock(fd_, LOCK_UN); }
    file_lock(const file_lock&) = delete;
    file_lock& operator=(const file_lock&) = delete;

private:
    int fd_;
};

std::string file_name(const job_key& key)
{
    static constexpr char digits[] = "0123456789abcdef";
    const wire::mac m = key.sign("hashi machine census file", {});
    std::string name = "hashi-census-";
    for (std::size_t i = 0; i < 8; ++i) {
        name += digits[m[i] >> 4];
        name += digits[m[i] & 15];
    }
    return name;
}

bool gone(std::int32_t pid) noexcept
{
    return ::kill(pid, 0) != 0 && errno == ESRCH;
}

// A file this census may use: a regular file of this user that nobody
// else may read or write.
bool ours(const struct stat& st) noexcept
{
    return S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && (st.st_mode & 077) == 0;
}

bool census_name(std::string_view name) noexcept
{
    constexpr std::string_view prefix = "hashi-census-";
    if (name.size() != prefix.size() + 16 || name.substr(0, prefix.size()) != prefix)
        return false;
    for (const char c : name.substr(prefix.size()))
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    return true;
}

} // namespace

std::size_t machine_census::sweep(const std::string& dir) noexcept
{
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr)
        return 0;
    std::size_t removed = 0;
    while (const dirent* e = ::readdir(d)) {
        if (!census_name(e->d_name))
            continue;
        const int fd = ::openat(::dirfd(d), e->d_name, O_RDWR | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
            continue;
        struct stat st {};
        // Only files of ours, and never one whose lock is held: a rank of
        // that job is inside; it clears its own dead slots.
        if (::fstat(fd, &st) == 0 && ours(st) && ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
            // Under the lock the name still leads to this file, or it is
            // left alone: its last rank may have removed it and a rank of
            // the same job created it anew meanwhile. Nobody else can
            // remove the name now (that takes this lock).
            struct stat named {};
            bool keep = ::fstat(fd, &st) != 0 || st.st_nlink == 0 ||
                        ::fstatat(::dirfd(d), e->d_name, &named, AT_SYMLINK_NOFOLLOW) != 0 ||
                        named.st_ino != st.st_ino || named.st_dev != st.st_dev;
            if (!keep && st.st_size >= static_cast<off_t>(sizeof(page))) {
                void* m = ::mmap(nullptr, sizeof(page), PROT_READ, MAP_SHARED, fd, 0);
                if (m == MAP_FAILED) {
                    keep = true; // unreadable: leave it
                } else {
                    const auto* pg = static_cast<const page*>(m);
                    for (unsigned i = 0; i < max_ranks && !keep; ++i)
                        keep = pg->slots[i] != 0 && !gone(pg->slots[i]);
                    ::munmap(m, sizeof(page));
                }
            }
            // A file with no slot taken is also one that a rank has just
            // created and not yet locked: that rank finds st_nlink 0 under
            // its lock and creates it again (the constructor's retry).
            if (!keep && ::unlinkat(::dirfd(d), e->d_name, 0) == 0)
                ++removed;
            ::flock(fd, LOCK_UN);
        }
        ::close(fd);
    }
    ::closedir(d);
    return removed;
}

machine_census::machine_census(const job_key& key, const std::string& dir) noexcept
{
    try {
        path_ = dir + "/" + file_name(key);
    } catch (...) {
        why_ = "out of memory";
        return;
    }
    // Files of jobs whose every rank was killed (SIGKILL, or mpiexec's
    // SIGTERM after an error) have nobody left to remove them.
    if (const std::size_t n = sweep(dir))
        HASHI_DEBUG("machine census: removed %zu file(s) of jobs with no rank left in %s", n, dir.c_str());
    // A last rank out may remove the file between our open and our lock:
    // then open again, a new one.
    for (int attempt = 0; attempt < 4 && page_ == nullptr; ++attempt) {
        fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd_ < 0) {
            why_ = std::string("cannot open ") + path_ + ": " + std::strerror(errno);
            return;
        }
        struct stat st {};
        if (::fstat(fd_, &st) != 0 || !ours(st)) {
            why_ = path_ + " is not a file of this user that only this user may read";
            ::close(fd_);
            fd_ = -1;
            return;
        }
        bool stale = false;
        {
            const file_lock lock(fd_);
            stale = ::fstat(fd_, &st) != 0 || st.st_nlink == 0;
            if (!stale && !join_locked(st))
                break;
        }
        // Closed only once unlocked: the lock's release must not reach a
        // descriptor number that another thread has been given meanwhile.
        if (stale) {
            ::close(fd_);
            fd_ = -1;
        }
    }
    if (page_ == nullptr && fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
    if (page_ == nullptr && why_.empty())
        why_ = path_ + " kept being removed while this rank opened it";
    if (!why_.empty())
        HASHI_DEBUG("machine census unknown: %s", why_.c_str());
}

bool machine_census::join_locked(const struct stat& st) noexcept
{
    if (st.st_size < static_cast<off_t>(sizeof(page)) && ::ftruncate(fd_, sizeof(page)) != 0) {
        why_ = std::string("cannot size ") + path_ + ": " + std::strerror(errno);
        return false;
    }
    void* m = ::mmap(nullptr, sizeof(page), PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (m == MAP_FAILED) {
        why_ = std::string("cannot map ") + path_ + ": " + std::strerror(errno);
        return false;
    }
    page_ = static_cast<page*>(m);
    clear_departed();
    for (unsigned i = 0; i < max_ranks && slot_ < 0; ++i) {
        if (page_->slots[i] == 0) {
            page_->slots[i] = ::getpid();
            slot_ = static_cast<int>(i);
        }
    }
    if (slot_ < 0)
        why_ = path_ + " has no free slot (more than " + std::to_string(max_ranks) + " ranks on this machine)";
    cpu_set_t mine;
    CPU_ZERO(&mine);
    if (::sched_getaffinity(0, sizeof mine, &mine) == 0) {
        for (unsigned c = 0; c < 512 && c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &mine))
                page_->cpu_set[c / 64] |= std::uint64_t(1) << (c % 64);
    }
    recount();
    return true;
}

void machine_census::clear_departed() noexcept
{
    for (unsigned i = 0; i < max_ranks; ++i)
        if (page_->slots[i] != 0 && gone(page_->slots[i]))
            page_->slots[i] = 0;
}

machine_census::~machine_census()
{
    if (page_ == nullptr)
        return;
    {
        const file_lock lock(fd_);
        if (slot_ >= 0)
            page_->slots[slot_] = 0;
        clear_departed();
        recount();
        if (page_->ranks.load(std::memory_order_relaxed) == 0)
            ::unlink(path_.c_str()); // under the lock: a rank that opened it meanwhile sees st_nlink 0
    }
    ::munmap(page_, sizeof(page));
    ::close(fd_);
}

void machine_census::recount() noexcept
{
    std::uint32_t n = 0;
    for (unsigned i = 0; i < max_ranks; ++i)
        n += page_->slots[i] != 0;
    std::uint32_t c = 0;
    for (const std::uint64_t w : page_->cpu_set)
        c += static_cast<std::uint32_t>(std::popcount(w));
    page_->ranks.store(n, std::memory_order_relaxed);
    page_->cpus.store(c, std::memory_order_relaxed);
}

unsigned machine_census::ranks() const noexcept
{
    return page_ != nullptr && slot_ >= 0 ? page_->ranks.load(std::memory_order_relaxed) : 0;
}

unsigned machine_census::cpus() const noexcept
{
    return page_ != nullptr && slot_ >= 0 ? page_->cpus.load(std::memory_order_relaxed) : 0;
}

} // namespace hashi::fi
