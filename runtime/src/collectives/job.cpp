// The job's environment and its abort (job.h).
#include "job.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tessera::rt {
namespace {

// A non-negative decimal integer, or -1.
int parse_count(const char* text) {
  if (!text || !*text) return -1;
  long value = 0;
  for (const char* p = text; *p; ++p) {
    if (*p < '0' || *p > '9' || value > 100000000) return -1;
    value = value * 10 + (*p - '0');
  }
  return static_cast<int>(value);
}

}  // namespace

const JobEnvironment& job_environment() {
  static const JobEnvironment environment = [] {
    // (rank variable, size variable) of the launchers we know.
    static const char* const kLaunchers[][2] = {
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},  // Open MPI's mpirun
        {"PMI_RANK", "PMI_SIZE"},                          // MPICH's and Intel MPI's Hydra
    };
    JobEnvironment e;
    for (const auto& launcher : kLaunchers) {
      const int rank = parse_count(std::getenv(launcher[0]));
      const int size = parse_count(std::getenv(launcher[1]));
      if (rank >= 0 && size > rank) {
        e.rank = rank;
        e.size = size;
        e.source = launcher[0];
        break;
      }
    }
    return e;
  }();
  return environment;
}

void abort_job(int exit_code, const std::string& message) {
  std::fflush(stdout);
  if (!message.empty()) std::fprintf(stderr, "tessera: rank %d: %s\n", job_environment().rank, message.c_str());
  std::fflush(stderr);
  if (const tessMpiPlugin* plugin = started_mpi_plugin()) plugin->abort_job(exit_code);
  std::_Exit(exit_code);
}

}  // namespace tessera::rt
