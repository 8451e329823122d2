// The job: the processes a launcher (mpirun) started, one per device, and
// this process's place among them; the MPI world, started on first use; and
// ending the whole job when one rank cannot go on.
#pragma once

#include <string>

#include "communicator.h"
#include "mpi_plugin_abi.h"

namespace tessera::rt {

struct JobEnvironment {
  int rank = 0;
  int size = 1;
  // The variable the rank came from ("OMPI_COMM_WORLD_RANK"), or null for a
  // process started alone.
  const char* source = nullptr;
};

// From the launcher's environment (Open MPI's OMPI_COMM_WORLD_RANK/SIZE,
// MPICH's and Intel MPI's PMI_RANK/PMI_SIZE), read once. Loads nothing.
const JobEnvironment& job_environment();

// The MPI world (a duplicate of MPI_COMM_WORLD): the first call loads the
// plugin and starts MPI; a failure is kept and returned to every later call.
tessStatus mpi_world(const CollectiveCall& call, Communicator** world);
// The plugin once MPI was started by mpi_world, else null.
const tessMpiPlugin* started_mpi_plugin();

// Writes "tessera: rank R: <message>" to stderr and ends every process of the
// job with `exit_code`: MPI_Abort when MPI runs, else this process exits.
[[noreturn]] void abort_job(int exit_code, const std::string& message);

}  // namespace tessera::rt
