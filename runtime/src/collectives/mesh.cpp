// Creating a mesh: checking the arguments, mapping devices to backends, and
// making one communicator per axis (docs/distributed.md#meshes).
//
// Policy, in one place:
//   - a job of one rank (no launcher) uses the loopback communicator and
//     never loads MPI or NCCL; its mesh must have one device;
//   - in a job of several ranks, rank r is device r; CPU devices use MPI,
//     CUDA devices NCCL bootstrapped over MPI; TESS_MESH_FORCE_CPU maps every
//     device to a CPU rank;
//   - the ranks agree before anything is built: same arguments (a
//     fingerprint compared with an all_reduce), and every member's device and
//     library ready (else all fail together instead of some hanging).
#include "mesh.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string_view>

#include "../runtime_internal.h"
#include "job.h"
#include "nccl_communicator.h"

namespace tessera::rt {
namespace {

struct ParsedDevice {
  tessDeviceKind kind = TESS_DEVICE_CPU;
  int index = 0;
};

// "cpu", "cpu:N", "cuda", "cuda:N".
bool parse_device(std::string_view name, ParsedDevice* device) {
  std::string_view number;
  if (name.substr(0, 4) == "cuda") {
    device->kind = TESS_DEVICE_CUDA;
    name.remove_prefix(4);
  } else if (name.substr(0, 3) == "cpu") {
    device->kind = TESS_DEVICE_CPU;
    name.remove_prefix(3);
  } else {
    return false;
  }
  device->index = 0;
  if (name.empty()) return true;
  if (name[0] != ':' || name.size() < 2 || name.size() > 10) return false;
  number = name.substr(1);
  auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), device->index);
  return error == std::errc() && end == number.data() + number.size() && device->index >= 0;
}

tessStatus invalid(std::string message) { return fail(TESS_ERROR_INVALID_VALUE, "tessMeshCreate: " + message); }

tessStatus check_spec(const MeshSpec& spec, std::vector<ParsedDevice>& parsed) {
  if (spec.device_count < 1) return invalid(fmt::format("device_count is {}; a mesh has at least one device", spec.device_count));
  if (spec.axis_count < 1 || spec.axis_count > TESS_MESH_MAX_AXES)
    return invalid(fmt::format("axis_count is {}; a mesh has 1 to {} axes", spec.axis_count, TESS_MESH_MAX_AXES));
  if (spec.flags & ~TESS_MESH_FORCE_CPU)
    return invalid(fmt::format("unknown flags 0x{:x} (the flags are TESS_MESH_FORCE_CPU)", spec.flags));
  int64_t product = 1;
  std::vector<std::string_view> names;
  for (int k = 0; k < spec.axis_count; ++k) {
    const char* name = spec.axis_names[k];
    if (!name || !*name) return invalid(fmt::format("axis {} has no name", k));
    if (std::find(names.begin(), names.end(), name) != names.end())
      return invalid(fmt::format("two axes are named '{}'", name));
    names.emplace_back(name);
    if (spec.shape[k] < 1) return invalid(fmt::format("axis '{}' has size {}; sizes are at least 1", name, spec.shape[k]));
    product = std::min<int64_t>(product, INT32_MAX) * spec.shape[k];  // no overflow: both factors < 2^31
  }
  if (product != spec.device_count) {
    std::string shape;
    for (int k = 0; k < spec.axis_count; ++k) shape += fmt::format("{}{}", k ? " x " : "", spec.shape[k]);
    return invalid(fmt::format("the shape {} has {} positions but {} devices are given", shape, product,
                               spec.device_count));
  }
  parsed.resize(static_cast<size_t>(spec.device_count));
  for (int i = 0; i < spec.device_count; ++i) {
    const char* name = spec.devices[i];
    if (!name) return invalid(fmt::format("device {} is null", i));
    if (!parse_device(name, &parsed[static_cast<size_t>(i)]))
      return invalid(fmt::format("device {} '{}' is not a device name (expected cpu:N or cuda:N)", i, name));
  }
  if (!(spec.flags & TESS_MESH_FORCE_CPU))
    for (int i = 1; i < spec.device_count; ++i)
      if (parsed[static_cast<size_t>(i)].kind != parsed[0].kind)
        return invalid(fmt::format("device 0 '{}' and device {} '{}' are of different kinds; a mesh is all CPU or all "
                                   "CUDA devices (TESS_MESH_FORCE_CPU maps every device to a CPU rank)",
                                   spec.devices[0], i, spec.devices[i]));
  return ok();
}

// FNV-1a over everything that defines the mesh, to compare across ranks.
uint64_t fingerprint(const tessMesh_st& mesh) {
  uint64_t h = 14695981039346656037ull;
  auto add = [&](std::string_view bytes) {
    for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;  // a separator: ("ab","c") differs from ("a","bc")
  };
  for (const auto& d : mesh.devices) add(d);
  for (const auto& a : mesh.axis_names) add(a);
  for (int s : mesh.shape) add(std::to_string(s));
  add(std::to_string(mesh.flags));
  return h;
}

// This rank's device: the CPU device, or local GPU `index`.
tessStatus local_device(const ParsedDevice& device, tessDevice* result) {
  if (device.kind == TESS_DEVICE_CPU) return tessGetDevice(0, result);
  const std::string name = fmt::format("cuda:{}", device.index);
  if (auto s = tessGetDeviceByName(name.c_str(), result); s)
    return fail(s, fmt::format("tessMeshCreate: this rank's device {} is not available: {}", name, last_error_message()));
  return ok();
}

}  // namespace

std::vector<int> mesh_coords(const std::vector<int>& shape, int rank) {
  std::vector<int> coords(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    coords[k] = rank % shape[k];
    rank /= shape[k];
  }
  return coords;
}

int mesh_rank_at(const std::vector<int>& shape, const int* coords) {
  int rank = 0;
  for (size_t k = 0; k < shape.size(); ++k) rank = rank * shape[k] + coords[k];
  return rank;
}

tessStatus create_mesh(const MeshSpec& spec, std::unique_ptr<tessMesh_st>* result) {
  std::vector<ParsedDevice> parsed;
  if (auto s = check_spec(spec, parsed); s) return s;
  auto mesh = std::make_unique<tessMesh_st>();
  mesh->devices.assign(spec.devices, spec.devices + spec.device_count);
  mesh->axis_names.assign(spec.axis_names, spec.axis_names + spec.axis_count);
  mesh->shape.assign(spec.shape, spec.shape + spec.axis_count);
  mesh->flags = spec.flags;
  mesh->all_group = fmt::format("the mesh ({} ranks)", spec.device_count);
  for (const auto& name : mesh->axis_names) mesh->axis_groups.push_back(fmt::format("mesh axis '{}'", name));
  if (auto s = collective_timeout_seconds("tessMeshCreate", &mesh->timeout_seconds); s) return s;
  const bool force_cpu = spec.flags & TESS_MESH_FORCE_CPU;
  const bool cuda = parsed[0].kind == TESS_DEVICE_CUDA && !force_cpu;

  const JobEnvironment& job = job_environment();
  if (job.size == 1) {
    if (spec.device_count > 1)
      return invalid(fmt::format("the mesh has {} devices but the job has 1 rank (this process was not started by "
                                 "mpirun): one process per device, start it with mpirun -np {}",
                                 spec.device_count, spec.device_count));
    mesh->rank = 0;
    mesh->coords.assign(mesh->shape.size(), 0);
    ParsedDevice device = parsed[0];
    if (force_cpu) device.kind = TESS_DEVICE_CPU;
    if (auto s = local_device(device, &mesh->device); s) return s;
    mesh->backend = TESS_COLLECTIVES_LOOPBACK;
    mesh->all = make_loopback_communicator(mesh->device);
    for (int k = 0; k < spec.axis_count; ++k) mesh->axes.push_back(make_loopback_communicator(mesh->device));
    *result = std::move(mesh);
    return ok();
  }

  CollectiveCall call;
  call.function = "tessMeshCreate";
  call.collective = "mesh creation";
  const std::string job_group = fmt::format("the job ({} ranks)", job.size);
  call.group = job_group.c_str();
  call.timeout_seconds = mesh->timeout_seconds;
  Communicator* world = nullptr;
  if (auto s = mpi_world(call, &world); s) return s;
  if (spec.device_count > world->size())
    return invalid(fmt::format("the mesh has {} devices but the job has {} ranks: one process per device, start it "
                               "with mpirun -np {}",
                               spec.device_count, world->size(), spec.device_count));
  const uint64_t mine = fingerprint(*mesh);
  uint64_t seen[2] = {mine, ~mine};  // MAX of both: every rank equal iff max(h) == h and max(~h) == ~h
  if (auto s = world->all_reduce(call, seen, seen, 2, TESS_U64, TESS_REDUCE_MAX, nullptr); s) return s;
  if (seen[0] != mine || seen[1] != ~mine)
    return invalid("the ranks of the job called it with different devices, axes, shape or flags; every rank must "
                   "create the same mesh");

  const bool member = world->rank() < spec.device_count;
  std::unique_ptr<Communicator> ranks;  // over the mesh's ranks
  if (auto s = world->split(call, member ? 0 : -1, world->rank(), &ranks); s) return s;
  if (!member) {
    if (auto s = tessGetDevice(0, &mesh->device); s) return s;
    mesh->backend = cuda ? TESS_COLLECTIVES_NCCL : TESS_COLLECTIVES_MPI;
    *result = std::move(mesh);
    return ok();
  }
  mesh->rank = world->rank();
  mesh->coords = mesh_coords(mesh->shape, mesh->rank);
  call.group = mesh->all_group.c_str();

  // Every member's device (and NCCL) ready, or all fail together.
  ParsedDevice device = parsed[static_cast<size_t>(mesh->rank)];
  if (force_cpu) device.kind = TESS_DEVICE_CPU;
  tessStatus local = local_device(device, &mesh->device);
  std::string local_error = local ? last_error_message() : "";
  const NcclFunctions* nccl = nullptr;
  if (!local && cuda) {
    std::string why;
    nccl = load_nccl(why);
    if (!nccl) {
      local = TESS_ERROR_LIBRARY_NOT_FOUND;
      local_error = fmt::format("tessMeshCreate: the mesh's devices are CUDA devices, which need NCCL: {}", why);
    }
  }
  int32_t failed = local != TESS_SUCCESS;
  if (auto s = ranks->all_reduce(call, &failed, &failed, 1, TESS_I32, TESS_REDUCE_MAX, nullptr); s) return s;
  if (local) return fail(local, local_error);
  if (failed)
    return fail(TESS_ERROR_COLLECTIVE, "tessMeshCreate: another rank of the mesh could not set up its device or "
                                       "library (its own error message says why)");

  // Axis k: the ranks whose other coordinates equal ours, ordered along k.
  std::vector<std::unique_ptr<Communicator>> axes;
  for (int k = 0; k < spec.axis_count; ++k) {
    int color = 0;
    for (int j = 0; j < spec.axis_count; ++j)
      if (j != k) color = color * mesh->shape[j] + mesh->coords[j];
    std::unique_ptr<Communicator> axis;
    if (auto s = ranks->split(call, color, mesh->coords[k], &axis); s) return s;
    axes.push_back(std::move(axis));
  }
  if (!cuda) {
    mesh->backend = TESS_COLLECTIVES_MPI;
    mesh->all = std::move(ranks);
    mesh->axes = std::move(axes);
  } else {
    mesh->backend = TESS_COLLECTIVES_NCCL;
    if (auto s = make_nccl_communicator(call, *nccl, std::move(ranks), mesh->device, &mesh->all); s) return s;
    for (int k = 0; k < spec.axis_count; ++k) {
      call.group = mesh->axis_groups[static_cast<size_t>(k)].c_str();
      std::unique_ptr<Communicator> c;
      if (auto s = make_nccl_communicator(call, *nccl, std::move(axes[static_cast<size_t>(k)]), mesh->device, &c); s)
        return s;
      mesh->axes.push_back(std::move(c));
    }
  }
  *result = std::move(mesh);
  return ok();
}

}  // namespace tessera::rt
