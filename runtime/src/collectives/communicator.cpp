// What every backend shares: names, the failure message, the timeout.
#include <fmt/format.h>

#include <cstdlib>

#include "../runtime_internal.h"
#include "communicator.h"

namespace tessera::rt {

const char* backend_name(tessCollectiveBackend backend) {
  switch (backend) {
    case TESS_COLLECTIVES_LOOPBACK: return "loopback";
    case TESS_COLLECTIVES_MPI: return "MPI";
    case TESS_COLLECTIVES_NCCL: return "NCCL";
  }
  return "unknown backend";
}

const char* reduce_op_name(tessReduceOp op) {
  switch (op) {
    case TESS_REDUCE_SUM: return "sum";
    case TESS_REDUCE_PROD: return "prod";
    case TESS_REDUCE_MAX: return "max";
    case TESS_REDUCE_MIN: return "min";
    case TESS_REDUCE_AVG: return "avg";
  }
  return nullptr;
}

tessStatus collective_failure(const CollectiveCall& call, tessCollectiveBackend backend, tessStatus status,
                              const std::string& detail) {
  return fail(status, fmt::format("{}: {} ({}) failed: {}", call.function, call.description(), backend_name(backend),
                                  detail));
}

tessStatus collective_timeout_seconds(const char* function, double* seconds) {
  const char* value = std::getenv("TESSERA_COLLECTIVE_TIMEOUT");
  if (!value || !*value) {
    *seconds = kDefaultCollectiveTimeoutSeconds;
    return ok();
  }
  char* end = nullptr;
  const double v = std::strtod(value, &end);
  if (*end != '\0' || !(v >= 0) || v > 1e9)
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("{}: TESSERA_COLLECTIVE_TIMEOUT='{}' is not a number of seconds (0 waits for ever; the "
                            "default is {})",
                            function, value, kDefaultCollectiveTimeoutSeconds));
  *seconds = v;
  return ok();
}

}  // namespace tessera::rt
