// The C functions of tessera_collectives.h: they check every argument (the
// mesh handle, the axis, dtype and op, buffers inside this rank's device
// memory, overlaps, root and peer) and call the axis's communicator.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "../runtime_internal.h"
#include "job.h"
#include "mesh.h"

struct tessCollectiveRequest_st {
  std::unique_ptr<tessera::rt::PendingCollective> pending;
};

// The C ABI passes these enums as 32-bit ints (and their values are fixed).
static_assert(sizeof(tessReduceOp) == 4 && sizeof(tessCollectiveBackend) == 4);
static_assert(TESS_REDUCE_SUM == 0 && TESS_REDUCE_PROD == 1 && TESS_REDUCE_MAX == 2 && TESS_REDUCE_MIN == 3 &&
              TESS_REDUCE_AVG == 4);
static_assert(TESS_COLLECTIVES_LOOPBACK == 0 && TESS_COLLECTIVES_MPI == 1 && TESS_COLLECTIVES_NCCL == 2);
static_assert(TESS_MESH_FORCE_CPU == 1u && TESS_MESH_MAX_AXES == 8);

namespace tessera::rt {
namespace {

std::mutex meshes_mutex;
std::unordered_set<const void*>& live_meshes() {
  static auto* meshes = new std::unordered_set<const void*>();  // outlives static destruction, as the devices
  return *meshes;
}

tessStatus null_argument(const char* function, const char* argument) {
  return fail(TESS_ERROR_INVALID_VALUE, fmt::format("{}: `{}` is null", function, argument));
}

tessStatus check_mesh(const char* function, tessMesh mesh) {
  if (!mesh) return null_argument(function, "mesh");
  std::lock_guard lock(meshes_mutex);
  if (live_meshes().count(mesh)) return ok();
  return fail(TESS_ERROR_INVALID_VALUE, fmt::format("{}: `mesh` ({}) is not a live mesh (already destroyed, or never "
                                                    "created)",
                                                    function, static_cast<const void*>(mesh)));
}

// The axis's index, -1 for the whole mesh (a null name).
tessStatus find_axis(const char* function, tessMesh mesh, const char* axis, int* index) {
  *index = -1;
  if (!axis) return ok();
  for (int k = 0; k < mesh->axis_count(); ++k)
    if (mesh->axis_names[static_cast<size_t>(k)] == axis) {
      *index = k;
      return ok();
    }
  std::string names;
  for (const auto& n : mesh->axis_names) names += fmt::format("{}'{}'", names.empty() ? "" : ", ", n);
  return fail(TESS_ERROR_INVALID_VALUE,
              fmt::format("{}: the mesh has no axis '{}' (its axes are {})", function, axis, names));
}

// The communicator a collective runs on, and its description.
struct Target {
  Communicator* comm = nullptr;
  CollectiveCall call;
  tessMesh mesh = nullptr;
};

tessStatus resolve(const char* function, const char* collective, tessMesh mesh, const char* axis, Target* target) {
  if (auto s = check_mesh(function, mesh); s) return s;
  if (mesh->rank < 0)
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("{}: this process (job rank {}) is not a member of the mesh of {} devices", function,
                            job_environment().rank, mesh->size()));
  int k = -1;
  if (auto s = find_axis(function, mesh, axis, &k); s) return s;
  target->mesh = mesh;
  target->comm = k < 0 ? mesh->all.get() : mesh->axes[static_cast<size_t>(k)].get();
  target->call.function = function;
  target->call.collective = collective;
  target->call.group = k < 0 ? mesh->all_group.c_str() : mesh->axis_groups[static_cast<size_t>(k)].c_str();
  target->call.timeout_seconds = mesh->timeout_seconds;
  return ok();
}

// An enum argument's value as an int, read without loading it as the enum:
// a caller of the C ABI may pass any int, and loading one outside the enum's
// range is undefined behaviour in C++ (UBSan checks it).
template <class Enum>
int raw_value(const Enum& value) {
  static_assert(sizeof(Enum) == sizeof(int));
  int v;
  std::memcpy(&v, &value, sizeof v);
  return v;
}

bool valid_dtype(const tessDtype& dtype) { return raw_value(dtype) >= 0 && raw_value(dtype) < TESS_DTYPE_COUNT; }

// `count` elements of `dtype` in bytes; they must be whole bytes.
tessStatus byte_size(const Target& t, size_t count, const tessDtype& dtype, size_t* bytes) {
  if (!valid_dtype(dtype))
    return fail(TESS_ERROR_INVALID_VALUE, fmt::format("{}: invalid dtype {}", t.call.function, raw_value(dtype)));
  const auto bits = static_cast<size_t>(tessDtypeBits(dtype));
  if (count > (SIZE_MAX / 8) / std::max<size_t>(bits, 1) / static_cast<size_t>(t.comm->size()))
    return fail(TESS_ERROR_INVALID_VALUE, fmt::format("{}: {} elements are too many", t.call.function, count));
  if (count * bits % 8 != 0)
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("{}: {} elements of {} are not a whole number of bytes ({} bits)", t.call.function, count,
                            tessDtypeName(dtype), count * bits));
  *bytes = count * bits / 8;
  return ok();
}

tessStatus check_reduction(const Target& t, tessDtype dtype, const tessReduceOp& op) {
  if (raw_value(op) < TESS_REDUCE_SUM || raw_value(op) > TESS_REDUCE_AVG)
    return fail(TESS_ERROR_INVALID_VALUE, fmt::format("{}: unknown reduction {} (TESS_REDUCE_SUM, PROD, MAX, MIN or AVG)",
                                                      t.call.function, raw_value(op)));
  auto unsupported = [&](const std::string& why) {
    return fail(TESS_ERROR_UNSUPPORTED, fmt::format("{}: {} on {} ({}) cannot reduce {} with {}: {}", t.call.function,
                                                    t.call.collective, t.call.group, backend_name(t.comm->backend()),
                                                    tessDtypeName(dtype), reduce_op_name(op), why));
  };
  switch (dtype) {
    case TESS_BOOL:
      if (op != TESS_REDUCE_MAX && op != TESS_REDUCE_MIN) return unsupported("bool reduces with max (or) and min (and) only");
      return ok();
    case TESS_I16:
    case TESS_U16:
      if (t.comm->backend() == TESS_COLLECTIVES_NCCL) return unsupported("NCCL has no 16-bit integer type");
      return ok();
    case TESS_I8:
    case TESS_I32:
    case TESS_I64:
    case TESS_U8:
    case TESS_U32:
    case TESS_U64:
    case TESS_F16:
    case TESS_BF16:
    case TESS_F32:
    case TESS_F64: return ok();
    case TESS_FP8_E4M3:
    case TESS_FP8_E5M2:
    case TESS_FP6_E2M3:
    case TESS_FP6_E3M2:
    case TESS_FP4_E2M1:
      return unsupported("reductions take bool, the integer types, f16, bf16, f32 and f64 (convert first; "
                         "all_gather, broadcast, send and recv move any dtype)");
  }
  return fail(TESS_ERROR_INVALID_VALUE, fmt::format("{}: invalid dtype {}", t.call.function, raw_value(dtype)));
}

tessStatus check_buffer(const Target& t, const char* role, tessDevicePtr p, size_t bytes) {
  if (p == 0) return null_argument(t.call.function, role);
  return t.mesh->device->check_buffer(t.call.function, role, p, bytes);
}

bool overlap(tessDevicePtr a, size_t a_bytes, tessDevicePtr b, size_t b_bytes) {
  return a < b + b_bytes && b < a + a_bytes;
}

tessStatus overlapping(const Target& t, const char* in_place) {
  return fail(TESS_ERROR_INVALID_VALUE, fmt::format("{}: the send and recv buffers overlap; in place is {}, otherwise "
                                                    "they must be disjoint",
                                                    t.call.function, in_place));
}

// An index in the group (root, peer).
tessStatus check_index(const Target& t, const char* role, int index) {
  if (index < 0 || index >= t.comm->size())
    return fail(TESS_ERROR_INVALID_VALUE, fmt::format("{}: {} {} is not an index of {}, which has {} ranks",
                                                      t.call.function, role, index, t.call.group, t.comm->size()));
  if (std::string_view(role) == "peer" && index == t.comm->rank() && t.comm->size() > 1)
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("{}: peer {} is this rank's own index in {}", t.call.function, index, t.call.group));
  return ok();
}

void* host(tessDevicePtr p) { return reinterpret_cast<void*>(p); }

// A started collective's handle: `pending` null when it completed at the start.
tessStatus complete(tessCollectiveRequest* request, std::unique_ptr<PendingCollective> pending = nullptr) {
  if (request) *request = new tessCollectiveRequest_st{std::move(pending)};
  return ok();
}

tessStatus all_reduce_call(const char* function, tessMesh mesh, const char* axis, tessDevicePtr send,
                           tessDevicePtr recv, size_t count, tessDtype dtype, tessReduceOp op, tessStream stream,
                           tessCollectiveRequest* request) {
  Target t;
  size_t bytes = 0;
  if (auto s = resolve(function, "all_reduce", mesh, axis, &t); s) return s;
  if (auto s = byte_size(t, count, dtype, &bytes); s) return s;
  if (auto s = check_reduction(t, dtype, op); s) return s;
  if (auto s = check_stream_for(t.call.function, stream, mesh->device); s) return s;
  if (count == 0) return complete(request);
  if (auto s = check_buffer(t, "send buffer", send, bytes); s) return s;
  if (auto s = check_buffer(t, "recv buffer", recv, bytes); s) return s;
  if (send != recv && overlap(send, bytes, recv, bytes)) return overlapping(t, "recv == send");
  if (!request) return t.comm->all_reduce(t.call, host(send), host(recv), count, dtype, op, stream);
  std::unique_ptr<PendingCollective> pending;
  if (auto s = t.comm->start_all_reduce(t.call, host(send), host(recv), count, dtype, op, stream, &pending); s)
    return s;
  return complete(request, std::move(pending));
}

tessStatus all_gather_call(const char* function, tessMesh mesh, const char* axis, tessDevicePtr send,
                           tessDevicePtr recv, size_t count, tessDtype dtype, tessStream stream,
                           tessCollectiveRequest* request) {
  Target t;
  size_t bytes = 0;
  if (auto s = resolve(function, "all_gather", mesh, axis, &t); s) return s;
  if (auto s = byte_size(t, count, dtype, &bytes); s) return s;
  if (auto s = check_stream_for(t.call.function, stream, mesh->device); s) return s;
  if (count == 0) return complete(request);
  const size_t total = bytes * static_cast<size_t>(t.comm->size());
  if (auto s = check_buffer(t, "send buffer", send, bytes); s) return s;
  if (auto s = check_buffer(t, "recv buffer", recv, total); s) return s;
  const bool in_place = send == recv + static_cast<size_t>(t.comm->rank()) * bytes;
  if (!in_place && overlap(send, bytes, recv, total))
    return overlapping(t, "send == recv + (this rank's index) * count elements");
  if (!request) return t.comm->all_gather(t.call, host(send), host(recv), bytes, stream);
  std::unique_ptr<PendingCollective> pending;
  if (auto s = t.comm->start_all_gather(t.call, host(send), host(recv), bytes, stream, &pending); s) return s;
  return complete(request, std::move(pending));
}

tessStatus reduce_scatter_call(const char* function, tessMesh mesh, const char* axis, tessDevicePtr send,
                               tessDevicePtr recv, size_t count, tessDtype dtype, tessReduceOp op, tessStream stream,
                               tessCollectiveRequest* request) {
  Target t;
  size_t bytes = 0;
  if (auto s = resolve(function, "reduce_scatter", mesh, axis, &t); s) return s;
  if (auto s = byte_size(t, count, dtype, &bytes); s) return s;
  if (auto s = check_reduction(t, dtype, op); s) return s;
  if (auto s = check_stream_for(t.call.function, stream, mesh->device); s) return s;
  if (count == 0) return complete(request);
  const size_t total = bytes * static_cast<size_t>(t.comm->size());
  if (auto s = check_buffer(t, "send buffer", send, total); s) return s;
  if (auto s = check_buffer(t, "recv buffer", recv, bytes); s) return s;
  const bool in_place = recv == send + static_cast<size_t>(t.comm->rank()) * bytes;
  if (!in_place && overlap(send, total, recv, bytes))
    return overlapping(t, "recv == send + (this rank's index) * count elements");
  if (!request) return t.comm->reduce_scatter(t.call, host(send), host(recv), count, dtype, op, stream);
  std::unique_ptr<PendingCollective> pending;
  if (auto s = t.comm->start_reduce_scatter(t.call, host(send), host(recv), count, dtype, op, stream, &pending); s)
    return s;
  return complete(request, std::move(pending));
}

tessStatus broadcast_call(const char* function, tessMesh mesh, const char* axis, tessDevicePtr buffer, size_t count,
                          tessDtype dtype, int root, tessStream stream, tessCollectiveRequest* request) {
  Target t;
  size_t bytes = 0;
  if (auto s = resolve(function, "broadcast", mesh, axis, &t); s) return s;
  if (auto s = byte_size(t, count, dtype, &bytes); s) return s;
  if (auto s = check_index(t, "root", root); s) return s;
  if (auto s = check_stream_for(t.call.function, stream, mesh->device); s) return s;
  if (count == 0) return complete(request);
  if (auto s = check_buffer(t, "buffer", buffer, bytes); s) return s;
  if (!request) return t.comm->broadcast(t.call, host(buffer), bytes, root, stream);
  std::unique_ptr<PendingCollective> pending;
  if (auto s = t.comm->start_broadcast(t.call, host(buffer), bytes, root, stream, &pending); s) return s;
  return complete(request, std::move(pending));
}

tessStatus send_call(const char* function, tessMesh mesh, const char* axis, tessDevicePtr buffer, size_t count,
                     tessDtype dtype, int peer, tessStream stream, tessCollectiveRequest* request) {
  Target t;
  size_t bytes = 0;
  if (auto s = resolve(function, "send", mesh, axis, &t); s) return s;
  if (auto s = byte_size(t, count, dtype, &bytes); s) return s;
  if (auto s = check_index(t, "peer", peer); s) return s;
  if (auto s = check_stream_for(t.call.function, stream, mesh->device); s) return s;
  if (count == 0) return complete(request);
  if (auto s = check_buffer(t, "buffer", buffer, bytes); s) return s;
  if (!request) return t.comm->send(t.call, host(buffer), bytes, peer, stream);
  std::unique_ptr<PendingCollective> pending;
  if (auto s = t.comm->start_send(t.call, host(buffer), bytes, peer, stream, &pending); s) return s;
  return complete(request, std::move(pending));
}

tessStatus recv_call(const char* function, tessMesh mesh, const char* axis, tessDevicePtr buffer, size_t count,
                     tessDtype dtype, int peer, tessStream stream, tessCollectiveRequest* request) {
  Target t;
  size_t bytes = 0;
  if (auto s = resolve(function, "recv", mesh, axis, &t); s) return s;
  if (auto s = byte_size(t, count, dtype, &bytes); s) return s;
  if (auto s = check_index(t, "peer", peer); s) return s;
  if (auto s = check_stream_for(t.call.function, stream, mesh->device); s) return s;
  if (count == 0) return complete(request);
  if (auto s = check_buffer(t, "buffer", buffer, bytes); s) return s;
  if (!request) return t.comm->recv(t.call, host(buffer), bytes, peer, stream);
  std::unique_ptr<PendingCollective> pending;
  if (auto s = t.comm->start_recv(t.call, host(buffer), bytes, peer, stream, &pending); s) return s;
  return complete(request, std::move(pending));
}

tessStatus send_recv_call(const char* function, tessMesh mesh, const char* axis, tessDevicePtr send, int send_peer,
                          tessDevicePtr recv, int recv_peer, size_t count, tessDtype dtype, tessStream stream,
                          tessCollectiveRequest* request) {
  Target t;
  size_t bytes = 0;
  if (auto s = resolve(function, "send_recv", mesh, axis, &t); s) return s;
  if (auto s = byte_size(t, count, dtype, &bytes); s) return s;
  if (auto s = check_index(t, "send peer", send_peer); s) return s;
  if (auto s = check_index(t, "recv peer", recv_peer); s) return s;
  if (auto s = check_stream_for(t.call.function, stream, mesh->device); s) return s;
  if (count == 0) return complete(request);
  if (auto s = check_buffer(t, "send buffer", send, bytes); s) return s;
  if (auto s = check_buffer(t, "recv buffer", recv, bytes); s) return s;
  if (overlap(send, bytes, recv, bytes)) return overlapping(t, "not supported (the recv would overwrite what is sent)");
  if (!request) return t.comm->send_recv(t.call, host(send), send_peer, host(recv), recv_peer, bytes, stream);
  std::unique_ptr<PendingCollective> pending;
  if (auto s = t.comm->start_send_recv(t.call, host(send), send_peer, host(recv), recv_peer, bytes, stream, &pending);
      s)
    return s;
  return complete(request, std::move(pending));
}

}  // namespace
}  // namespace tessera::rt

using namespace tessera::rt;

extern "C" {

// --- the job -----------------------------------------------------------------------------

tessStatus tessJobRank(int* rank) {
  if (!rank) return null_argument("tessJobRank", "rank");
  *rank = job_environment().rank;
  return ok();
}

tessStatus tessJobSize(int* size) {
  if (!size) return null_argument("tessJobSize", "size");
  *size = job_environment().size;
  return ok();
}

void tessJobAbort(int exit_code, const char* message) { abort_job(exit_code, message ? message : ""); }

// --- meshes ---------------------------------------------------------------------------------

tessStatus tessMeshCreate(const char* const* devices, int device_count, const char* const* axis_names,
                          const int* shape, int axis_count, unsigned flags, tessMesh* mesh) {
  if (!devices) return null_argument("tessMeshCreate", "devices");
  if (!axis_names) return null_argument("tessMeshCreate", "axis_names");
  if (!shape) return null_argument("tessMeshCreate", "shape");
  if (!mesh) return null_argument("tessMeshCreate", "mesh");
  std::unique_ptr<tessMesh_st> created;
  if (auto s = create_mesh(MeshSpec{devices, device_count, axis_names, shape, axis_count, flags}, &created); s)
    return s;
  *mesh = created.release();
  std::lock_guard lock(meshes_mutex);
  live_meshes().insert(*mesh);
  return ok();
}

tessStatus tessMeshDestroy(tessMesh mesh) {
  if (auto s = check_mesh("tessMeshDestroy", mesh); s) return s;
  {
    std::lock_guard lock(meshes_mutex);
    if (!live_meshes().erase(mesh))
      return fail(TESS_ERROR_INVALID_VALUE, "tessMeshDestroy: the mesh was destroyed by another thread");
  }
  delete mesh;
  return ok();
}

tessStatus tessMeshGetRank(tessMesh mesh, int* rank) {
  if (auto s = check_mesh("tessMeshGetRank", mesh); s) return s;
  if (!rank) return null_argument("tessMeshGetRank", "rank");
  *rank = mesh->rank;
  return ok();
}

tessStatus tessMeshGetSize(tessMesh mesh, int* size) {
  if (auto s = check_mesh("tessMeshGetSize", mesh); s) return s;
  if (!size) return null_argument("tessMeshGetSize", "size");
  *size = mesh->size();
  return ok();
}

tessStatus tessMeshGetAxisCount(tessMesh mesh, int* count) {
  if (auto s = check_mesh("tessMeshGetAxisCount", mesh); s) return s;
  if (!count) return null_argument("tessMeshGetAxisCount", "count");
  *count = mesh->axis_count();
  return ok();
}

tessStatus tessMeshGetAxisName(tessMesh mesh, int axis, const char** name) {
  if (auto s = check_mesh("tessMeshGetAxisName", mesh); s) return s;
  if (!name) return null_argument("tessMeshGetAxisName", "name");
  if (axis < 0 || axis >= mesh->axis_count())
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("tessMeshGetAxisName: axis {} does not exist; the mesh has {}", axis, mesh->axis_count()));
  *name = mesh->axis_names[static_cast<size_t>(axis)].c_str();
  return ok();
}

tessStatus tessMeshGetAxisSize(tessMesh mesh, const char* axis, int* size) {
  if (auto s = check_mesh("tessMeshGetAxisSize", mesh); s) return s;
  if (!size) return null_argument("tessMeshGetAxisSize", "size");
  int k = -1;
  if (auto s = find_axis("tessMeshGetAxisSize", mesh, axis, &k); s) return s;
  *size = k < 0 ? mesh->size() : mesh->shape[static_cast<size_t>(k)];
  return ok();
}

tessStatus tessMeshGetAxisRank(tessMesh mesh, const char* axis, int* rank) {
  if (auto s = check_mesh("tessMeshGetAxisRank", mesh); s) return s;
  if (!rank) return null_argument("tessMeshGetAxisRank", "rank");
  int k = -1;
  if (auto s = find_axis("tessMeshGetAxisRank", mesh, axis, &k); s) return s;
  if (mesh->rank < 0)
    *rank = -1;
  else
    *rank = k < 0 ? mesh->rank : mesh->coords[static_cast<size_t>(k)];
  return ok();
}

tessStatus tessMeshGetCoords(tessMesh mesh, int rank, int* coords, int capacity) {
  if (auto s = check_mesh("tessMeshGetCoords", mesh); s) return s;
  if (!coords) return null_argument("tessMeshGetCoords", "coords");
  if (rank < 0 || rank >= mesh->size())
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("tessMeshGetCoords: rank {} is not in the mesh of {} devices", rank, mesh->size()));
  if (capacity < mesh->axis_count())
    return fail(TESS_ERROR_INVALID_VALUE, fmt::format("tessMeshGetCoords: capacity {} is less than the {} axes",
                                                      capacity, mesh->axis_count()));
  const std::vector<int> c = mesh_coords(mesh->shape, rank);
  std::copy(c.begin(), c.end(), coords);
  return ok();
}

tessStatus tessMeshGetRankAt(tessMesh mesh, const int* coords, int* rank) {
  if (auto s = check_mesh("tessMeshGetRankAt", mesh); s) return s;
  if (!coords) return null_argument("tessMeshGetRankAt", "coords");
  if (!rank) return null_argument("tessMeshGetRankAt", "rank");
  for (int k = 0; k < mesh->axis_count(); ++k)
    if (coords[k] < 0 || coords[k] >= mesh->shape[static_cast<size_t>(k)])
      return fail(TESS_ERROR_INVALID_VALUE,
                  fmt::format("tessMeshGetRankAt: coordinate {} along axis '{}' is outside 0..{}", coords[k],
                              mesh->axis_names[static_cast<size_t>(k)], mesh->shape[static_cast<size_t>(k)] - 1));
  *rank = mesh_rank_at(mesh->shape, coords);
  return ok();
}

tessStatus tessMeshGetDevice(tessMesh mesh, tessDevice* device) {
  if (auto s = check_mesh("tessMeshGetDevice", mesh); s) return s;
  if (!device) return null_argument("tessMeshGetDevice", "device");
  *device = mesh->device;
  return ok();
}

tessStatus tessMeshGetBackend(tessMesh mesh, tessCollectiveBackend* backend) {
  if (auto s = check_mesh("tessMeshGetBackend", mesh); s) return s;
  if (!backend) return null_argument("tessMeshGetBackend", "backend");
  *backend = mesh->backend;
  return ok();
}

// --- collectives -------------------------------------------------------------------------------

tessStatus tessCollectiveWait(tessCollectiveRequest request) {
  if (!request) return null_argument("tessCollectiveWait", "request");
  std::unique_ptr<tessCollectiveRequest_st> owned(request);
  return owned->pending ? owned->pending->wait() : ok();
}

tessStatus tessMeshAllReduce(tessMesh mesh, const char* axis, tessDevicePtr send, tessDevicePtr recv, size_t count,
                             tessDtype dtype, tessReduceOp op, tessStream stream) {
  return all_reduce_call("tessMeshAllReduce", mesh, axis, send, recv, count, dtype, op, stream, nullptr);
}

tessStatus tessMeshAllReduceStart(tessMesh mesh, const char* axis, tessDevicePtr send, tessDevicePtr recv, size_t count,
                                  tessDtype dtype, tessReduceOp op, tessStream stream, tessCollectiveRequest* request) {
  if (!request) return null_argument("tessMeshAllReduceStart", "request");
  *request = nullptr;
  return all_reduce_call("tessMeshAllReduceStart", mesh, axis, send, recv, count, dtype, op, stream, request);
}

tessStatus tessMeshAllGather(tessMesh mesh, const char* axis, tessDevicePtr send, tessDevicePtr recv, size_t count,
                             tessDtype dtype, tessStream stream) {
  return all_gather_call("tessMeshAllGather", mesh, axis, send, recv, count, dtype, stream, nullptr);
}

tessStatus tessMeshAllGatherStart(tessMesh mesh, const char* axis, tessDevicePtr send, tessDevicePtr recv, size_t count,
                                  tessDtype dtype, tessStream stream, tessCollectiveRequest* request) {
  if (!request) return null_argument("tessMeshAllGatherStart", "request");
  *request = nullptr;
  return all_gather_call("tessMeshAllGatherStart", mesh, axis, send, recv, count, dtype, stream, request);
}

tessStatus tessMeshReduceScatter(tessMesh mesh, const char* axis, tessDevicePtr send, tessDevicePtr recv, size_t count,
                                 tessDtype dtype, tessReduceOp op, tessStream stream) {
  return reduce_scatter_call("tessMeshReduceScatter", mesh, axis, send, recv, count, dtype, op, stream, nullptr);
}

tessStatus tessMeshReduceScatterStart(tessMesh mesh, const char* axis, tessDevicePtr send, tessDevicePtr recv,
                                      size_t count, tessDtype dtype, tessReduceOp op, tessStream stream,
                                      tessCollectiveRequest* request) {
  if (!request) return null_argument("tessMeshReduceScatterStart", "request");
  *request = nullptr;
  return reduce_scatter_call("tessMeshReduceScatterStart", mesh, axis, send, recv, count, dtype, op, stream, request);
}

tessStatus tessMeshBroadcast(tessMesh mesh, const char* axis, tessDevicePtr buffer, size_t count, tessDtype dtype,
                             int root, tessStream stream) {
  return broadcast_call("tessMeshBroadcast", mesh, axis, buffer, count, dtype, root, stream, nullptr);
}

tessStatus tessMeshBroadcastStart(tessMesh mesh, const char* axis, tessDevicePtr buffer, size_t count, tessDtype dtype,
                                  int root, tessStream stream, tessCollectiveRequest* request) {
  if (!request) return null_argument("tessMeshBroadcastStart", "request");
  *request = nullptr;
  return broadcast_call("tessMeshBroadcastStart", mesh, axis, buffer, count, dtype, root, stream, request);
}

tessStatus tessMeshSend(tessMesh mesh, const char* axis, tessDevicePtr buffer, size_t count, tessDtype dtype, int peer,
                        tessStream stream) {
  return send_call("tessMeshSend", mesh, axis, buffer, count, dtype, peer, stream, nullptr);
}

tessStatus tessMeshSendStart(tessMesh mesh, const char* axis, tessDevicePtr buffer, size_t count, tessDtype dtype,
                             int peer, tessStream stream, tessCollectiveRequest* request) {
  if (!request) return null_argument("tessMeshSendStart", "request");
  *request = nullptr;
  return send_call("tessMeshSendStart", mesh, axis, buffer, count, dtype, peer, stream, request);
}

tessStatus tessMeshRecv(tessMesh mesh, const char* axis, tessDevicePtr buffer, size_t count, tessDtype dtype, int peer,
                        tessStream stream) {
  return recv_call("tessMeshRecv", mesh, axis, buffer, count, dtype, peer, stream, nullptr);
}

tessStatus tessMeshRecvStart(tessMesh mesh, const char* axis, tessDevicePtr buffer, size_t count, tessDtype dtype,
                             int peer, tessStream stream, tessCollectiveRequest* request) {
  if (!request) return null_argument("tessMeshRecvStart", "request");
  *request = nullptr;
  return recv_call("tessMeshRecvStart", mesh, axis, buffer, count, dtype, peer, stream, request);
}

tessStatus tessMeshSendRecv(tessMesh mesh, const char* axis, tessDevicePtr send, int send_peer, tessDevicePtr recv,
                            int recv_peer, size_t count, tessDtype dtype, tessStream stream) {
  return send_recv_call("tessMeshSendRecv", mesh, axis, send, send_peer, recv, recv_peer, count, dtype, stream,
                        nullptr);
}

tessStatus tessMeshSendRecvStart(tessMesh mesh, const char* axis, tessDevicePtr send, int send_peer, tessDevicePtr recv,
                                 int recv_peer, size_t count, tessDtype dtype, tessStream stream,
                                 tessCollectiveRequest* request) {
  if (!request) return null_argument("tessMeshSendRecvStart", "request");
  *request = nullptr;
  return send_recv_call("tessMeshSendRecvStart", mesh, axis, send, send_peer, recv, recv_peer, count, dtype, stream,
                        request);
}

tessStatus tessMeshBarrier(tessMesh mesh, const char* axis) {
  Target t;
  if (auto s = resolve("tessMeshBarrier", "barrier", mesh, axis, &t); s) return s;
  return t.comm->barrier(t.call);
}

}  // extern "C"
