// SPDX-License-Identifier: BSD-3-Clause
// The job's census on this machine (src/transport/engine/machine_census.hpp)
// with real files, real processes and real signals: ranks of one job count
// each other, another job's do not, a rank killed by a signal is cleared
// by the next one that registers, the last one out removes the file, and a
// file that is not this user's private file is refused.
#include "transport/engine/machine_census.hpp"

#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

using hashi::fi::job_key;
using hashi::fi::machine_census;

namespace {

// A fresh directory under the test's temporary directory, removed after.
struct scratch {
    std::string dir;
    scratch()
    {
        char t[] = "/tmp/hashi-census-test-XXXXXX";
        BOOST_REQUIRE(::mkdtemp(t) != nullptr);
        dir = t;
    }
    ~scratch() { std::filesystem::remove_all(dir); }
    std::size_t files() const
    {
        std::size_t n = 0;
        for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir))
            ++n;
        return n;
    }
};

unsigned affinity_cpus()
{
    cpu_set_t s;
    CPU_ZERO(&s);
    BOOST_REQUIRE(::sched_getaffinity(0, sizeof s, &s) == 0);
    return static_cast<unsigned>(CPU_COUNT(&s));
}

} // namespace

BOOST_AUTO_TEST_SUITE(machine_census_file)

BOOST_AUTO_TEST_CASE(ranks_of_one_job_count_each_other_and_not_another_job)
{
    const scratch s;
    const job_key a = job_key::random(), b = job_key::random();
    auto first = std::make_unique<machine_census>(a, s.dir);
    BOOST_TEST(first->registered());
    BOOST_TEST(first->why_unknown() == "");
    BOOST_TEST(first->ranks() == 1u);
    BOOST_TEST(first->cpus() == affinity_cpus());
    {
        const machine_census second(a, s.dir);
        const machine_census other(b, s.dir);
        BOOST_TEST(first->ranks() == 2u);
        BOOST_TEST(second.ranks() == 2u);
        BOOST_TEST(other.ranks() == 1u);
        BOOST_TEST(s.files() == 2u);
        // The file's name says nothing of the key.
        BOOST_TEST(first->path().find("hashi-census-") != std::string::npos);
        BOOST_TEST(first->path() != other.path());
    }
    BOOST_TEST(first->ranks() == 1u);
    BOOST_TEST(s.files() == 1u); // the other job's last rank removed its file
    first.reset();
    BOOST_TEST(s.files() == 0u);
}

BOOST_AUTO_TEST_CASE(the_file_is_private_to_the_user)
{
    const scratch s;
    const machine_census c(job_key::random(), s.dir);
    struct stat st {};
    BOOST_REQUIRE(::stat(c.path().c_str(), &st) == 0);
    BOOST_TEST((st.st_mode & 0777) == 0600u);
    BOOST_TEST(st.st_uid == ::geteuid());
}

BOOST_AUTO_TEST_CASE(a_rank_in_another_process_counts_and_a_killed_one_is_cleared)
{
    const scratch s;
    const job_key k = job_key::random();
    int ready[2], stop[2];
    BOOST_REQUIRE(::pipe(ready) == 0);
    BOOST_REQUIRE(::pipe(stop) == 0);
    const pid_t child = ::fork();
    BOOST_REQUIRE(child >= 0);
    if (child == 0) {
        const machine_census c(k, s.dir);
        char x = c.registered() ? 'y' : 'n';
        (void)!::write(ready[1], &x, 1);
        (void)!::read(stop[0], &x, 1); // until killed
        std::_Exit(0);
    }
    char x = 0;
    BOOST_REQUIRE(::read(ready[0], &x, 1) == 1);
    BOOST_TEST(x == 'y');
    {
        const machine_census here(k, s.dir);
        BOOST_TEST(here.ranks() == 2u);
    }
    // Killed: it never unregisters. The next rank that registers clears it.
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    {
        const machine_census later(k, s.dir);
        BOOST_TEST(later.ranks() == 1u);
    }
    BOOST_TEST(s.files() == 0u);
    ::close(ready[0]);
    ::close(ready[1]);
    ::close(stop[0]);
    ::close(stop[1]);
}

BOOST_AUTO_TEST_CASE(a_job_killed_whole_leaves_a_file_that_the_next_census_removes)
{
    const scratch s;
    const job_key killed = job_key::random(), running = job_key::random();
    int ready[2];
    BOOST_REQUIRE(::pipe(ready) == 0);
    // Two processes: the sole rank of a job that gets killed, and a rank
    // of a job that goes on running.
    pid_t child[2];
    for (int i = 0; i < 2; ++i) {
        child[i] = ::fork();
        BOOST_REQUIRE(child[i] >= 0);
        if (child[i] == 0) {
            const machine_census c(i == 0 ? killed : running, s.dir);
            char x = c.registered() ? 'y' : 'n';
            (void)!::write(ready[1], &x, 1);
            ::pause(); // until killed
            std::_Exit(0);
        }
        char x = 0;
        BOOST_REQUIRE(::read(ready[0], &x, 1) == 1);
        BOOST_TEST(x == 'y');
    }
    ::kill(child[0], SIGKILL);
    ::waitpid(child[0], nullptr, 0);
    BOOST_TEST(s.files() == 2u);
    // A file of another user's is never touched, even with nobody in it
    // (made as root, as the tests run in CI).
    const std::string foreign = s.dir + "/hashi-census-00000000000000ff";
    const std::size_t foreign_files = ::geteuid() == 0 ? 1 : 0;
    if (foreign_files != 0) {
        const int fd = ::open(foreign.c_str(), O_CREAT | O_WRONLY, 0600);
        BOOST_REQUIRE(fd >= 0);
        BOOST_REQUIRE(::fchown(fd, 65534, 65534) == 0);
        ::close(fd);
    }
    {
        const machine_census third(job_key::random(), s.dir);
        BOOST_TEST(third.ranks() == 1u);
        BOOST_TEST(s.files() == 2u + foreign_files); // the running job's and this one's
    }
    BOOST_TEST(s.files() == 1u + foreign_files);
    BOOST_TEST(machine_census::sweep(s.dir) == 0u); // the running job's stays
    ::kill(child[1], SIGKILL);
    ::waitpid(child[1], nullptr, 0);
    BOOST_TEST(machine_census::sweep(s.dir) == 1u);
    BOOST_TEST(s.files() == foreign_files);
    BOOST_TEST(std::filesystem::exists(foreign) == (foreign_files != 0));
    ::close(ready[0]);
    ::close(ready[1]);
}

BOOST_AUTO_TEST_CASE(a_file_others_may_read_or_a_link_is_refused)
{
    const scratch s;
    const job_key k = job_key::random();
    std::string path;
    {
        const machine_census c(k, s.dir);
        path = c.path();
        // Keep a second name so that the file outlives the census.
        BOOST_REQUIRE(::link(path.c_str(), (s.dir + "/kept").c_str()) == 0);
    }
    BOOST_REQUIRE(::rename((s.dir + "/kept").c_str(), path.c_str()) == 0);
    BOOST_REQUIRE(::chmod(path.c_str(), 0644) == 0);
    {
        const machine_census c(k, s.dir);
        BOOST_TEST(!c.registered());
        BOOST_TEST(c.ranks() == 0u);
        BOOST_TEST(c.cpus() == 0u);
        BOOST_TEST(c.why_unknown().find("only this user") != std::string::npos);
    }
    BOOST_REQUIRE(::unlink(path.c_str()) == 0);
    BOOST_REQUIRE(::symlink("/etc/passwd", path.c_str()) == 0);
    {
        const machine_census c(k, s.dir);
        BOOST_TEST(!c.registered());
        BOOST_TEST(c.why_unknown().find("cannot open") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(no_directory_is_an_unknown_census_not_an_error)
{
    const machine_census c(job_key::random(), "/nonexistent-hashi-dir");
    BOOST_TEST(!c.registered());
    BOOST_TEST(c.ranks() == 0u);
    BOOST_TEST(c.why_unknown().find("cannot open /nonexistent-hashi-dir/hashi-census-") == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
