// SPDX-License-Identifier: BSD-3-Clause
// The remote half of the ssh launcher. ssh alone cannot tie a remote
// process's life to mpiexec (without a tty, killing the ssh client leaves
// the remote command running), so each remote rank runs as
//   mpiexec --hashi-ssh-shim [binding request] -- program args
// which first reads its environment and PMI-port token from stdin
// (shim_handoff.hpp), opens two authenticated connections to mpiexec's PMI
// port (pmi_auth.hpp): a "lifeline" it keeps and the program's PMI
// connection, which the program inherits as PMI_FD. It then starts the
// program (bound first as the request says, rank_binding.hpp), passes on the signals mpiexec sends over the lifeline, kills the
// program when the lifeline breaks, and reports how the program ended
// (exit status or signal) before exiting.
#pragma once

namespace hashi::mpiexec {

// The flag that selects shim mode as mpiexec's first argument.
inline constexpr const char* ssh_shim_flag = "--hashi-ssh-shim";

// Runs the shim; argv[0] is mpiexec, argv[1] the flag, then "--" and the
// program. Returns the exit status for main().
int run_ssh_shim(int argc, char** argv);

} // namespace hashi::mpiexec
