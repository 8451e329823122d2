// Meshes and collectives for compiled host code (tessera_host.h,
// docs/distributed.md "The language"): the mesh and operation descriptions
// the code generator writes (codegen/emitter/host_ops.cpp) read back, and
// each operation done with the communicator layer (tessera_collectives.h).
// Gathering or scattering along a dimension other than the first moves the
// blocks through a staging buffer in the layout the collective needs; started
// (tessHostCollectiveStart), the staging buffer lives until the wait, which
// places a gather's blocks.
#include <fmt/format.h>

#include <cstring>
#include <string>
#include <vector>

#include "host_context.h"

using tessera::rt::fail;
using tessera::rt::ok;

namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    out.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

struct MeshDescription {
  std::vector<int> shape;
  std::vector<std::string> axes, devices;
};

bool parse_mesh(const std::string& text, MeshDescription& mesh) {
  std::vector<std::string> parts = split(text, ';');
  if (parts.size() != 3) return false;
  for (const std::string& s : split(parts[0], ',')) mesh.shape.push_back(std::atoi(s.c_str()));
  mesh.axes = split(parts[1], ',');
  mesh.devices = split(parts[2], ',');
  return mesh.shape.size() == mesh.axes.size();
}

struct Operation {
  std::string kind, axis, op = "sum";
  int dim = 0, root = -1, src = 0, dst = 0, shift = 0;
  bool transpose = false;
  std::vector<std::string> spec, partial;
};

Operation parse_operation(const std::string& text) {
  Operation o;
  for (const std::string& field : split(text, ';')) {
    size_t eq = field.find('=');
    std::string key = field.substr(0, eq), value = eq == std::string::npos ? "" : field.substr(eq + 1);
    if (key == "kind") o.kind = value;
    else if (key == "axis") o.axis = value;
    else if (key == "op") o.op = value;
    else if (key == "dim") o.dim = std::atoi(value.c_str());
    else if (key == "root") o.root = std::atoi(value.c_str());
    else if (key == "src") o.src = std::atoi(value.c_str());
    else if (key == "dst") o.dst = std::atoi(value.c_str());
    else if (key == "shift") o.shift = std::atoi(value.c_str());
    else if (key == "transpose") o.transpose = value == "1";
    else if (key == "spec") o.spec = split(value, ',');
    else if (key == "partial") o.partial = split(value, ',');
  }
  return o;
}

tessReduceOp reduce_op(const std::string& name) {
  if (name == "max") return TESS_REDUCE_MAX;
  if (name == "min") return TESS_REDUCE_MIN;
  if (name == "mean" || name == "avg") return TESS_REDUCE_AVG;
  if (name == "prod") return TESS_REDUCE_PROD;
  return TESS_REDUCE_SUM;
}

tessStatus mesh_of(tessHostContext context, const char* description, tessMesh* mesh, MeshDescription* parsed) {
  // Every collective of the code names its mesh: a mesh met before is found
  // without parsing its description again (unless the caller wants it).
  if (!parsed && description)
    if (auto it = context->meshes.find(description); it != context->meshes.end()) {
      *mesh = it->second;
      return ok();
    }
  MeshDescription m;
  if (!description || !parse_mesh(description, m))
    return fail(TESS_ERROR_INVALID_VALUE, fmt::format("tessHostMesh: a malformed mesh description '{}'",
                                                      description ? description : "(null)"));
  if (parsed) *parsed = m;
  if (auto it = context->meshes.find(description); it != context->meshes.end()) {
    *mesh = it->second;
    return ok();
  }
  std::vector<const char*> devices, axes;
  for (const std::string& d : m.devices) devices.push_back(d.c_str());
  for (const std::string& a : m.axes) axes.push_back(a.c_str());
  tessDeviceKind kind = TESS_DEVICE_CPU;
  tessDeviceGetKind(context->device, &kind);
  unsigned flags = kind == TESS_DEVICE_CPU ? TESS_MESH_FORCE_CPU : 0u;
  tessMesh created = nullptr;
  tessStatus status = tessMeshCreate(devices.data(), static_cast<int>(devices.size()), axes.data(), m.shape.data(),
                                     static_cast<int>(axes.size()), flags, &created);
  if (status != TESS_SUCCESS) return status;
  context->meshes.emplace(description, created);
  *mesh = created;
  return ok();
}

int64_t elements(const tessTensor& t) {
  int64_t n = 1;
  for (int32_t a = 0; a < t.rank; ++a) n *= t.shape[a];
  return n;
}

// Scratch memory of the context's device (collectives take only runtime allocations).
struct Scratch {
  tessDevice device;
  tessDevicePtr ptr = 0;
  Scratch(tessDevice d, size_t bytes) : device(d) { tessMalloc(d, bytes ? bytes : 1, &ptr); }
  ~Scratch() {
    if (ptr) tessFree(device, ptr);
  }
};

unsigned char* host(tessDevicePtr p) { return reinterpret_cast<unsigned char*>(static_cast<uintptr_t>(p)); }

// Elements of `t` before dimension `dim`: the slabs a gather or scatter along
// `dim` interleaves.
int64_t outer_elements(const tessTensor& t, int dim) {
  int64_t n = 1;
  for (int d = 0; d < dim; ++d) n *= t.shape[d];
  return n;
}

// A gather along a dimension other than the first: MPI concatenates whole
// blocks (index k's `block` bytes at k * block), the result interleaves their
// slabs (for each of the `outer` positions before the dimension, index k's
// slab right after index k - 1's).
void place_gathered(const unsigned char* gathered, unsigned char* target, int64_t outer, int n, size_t block) {
  const size_t slab = block / static_cast<size_t>(outer);
  for (int64_t i = 0; i < outer; ++i)
    for (int k = 0; k < n; ++k)
      std::memcpy(target + (static_cast<size_t>(i) * n + k) * slab,
                  gathered + static_cast<size_t>(k) * block + static_cast<size_t>(i) * slab, slab);
}

// The reverse for a scatter: index k's slabs gathered into its contiguous
// block of `block` bytes, as reduce_scatter cuts its send buffer.
void stage_for_scatter(const unsigned char* source, unsigned char* staged, int64_t outer, int n, size_t block) {
  const size_t slab = block / static_cast<size_t>(outer);
  for (int64_t i = 0; i < outer; ++i)
    for (int k = 0; k < n; ++k)
      std::memcpy(staged + static_cast<size_t>(k) * block + static_cast<size_t>(i) * slab,
                  source + (static_cast<size_t>(i) * n + k) * slab, slab);
}

// Copies the block of `local` dims at `offsets` between a whole tensor of
// `global` dims and a contiguous block, in row-major order.
void copy_block(unsigned char* whole, unsigned char* block, const std::vector<int64_t>& global,
                const std::vector<int64_t>& local, const std::vector<int64_t>& offsets, size_t element, bool into_block) {
  size_t rank = global.size();
  if (rank == 0) {
    std::memcpy(into_block ? block : whole, into_block ? whole : block, element);
    return;
  }
  size_t row = static_cast<size_t>(local[rank - 1]) * element;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) rows *= local[d];
  std::vector<int64_t> at(rank, 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t linear = 0;
    for (size_t d = 0; d < rank; ++d) linear = linear * global[d] + offsets[d] + (d + 1 < rank ? at[d] : 0);
    unsigned char* w = whole + static_cast<size_t>(linear) * element;
    unsigned char* b = block + static_cast<size_t>(r) * row;
    std::memcpy(into_block ? b : w, into_block ? w : b, row);
    for (size_t d = rank - 1; d-- > 0;) {
      if (++at[d] < local[d]) break;
      at[d] = 0;
    }
  }
}

// The bytes of 1 in `dtype` (the dtypes a reduction takes), for the
// product's identity.
std::vector<unsigned char> one_bytes(tessDtype dtype, size_t element) {
  std::vector<unsigned char> one(element, 0);
  auto put = [&](auto value) { std::memcpy(one.data(), &value, sizeof value); };
  switch (dtype) {
    case TESS_F16: put(uint16_t{0x3C00}); break;
    case TESS_BF16: put(uint16_t{0x3F80}); break;
    case TESS_F32: put(1.0f); break;
    case TESS_F64: put(1.0); break;
    default: one[0] = 1;  // bool and the integers (little-endian)
  }
  return one;
}

}  // namespace

namespace tessera::rt {

void destroy_host_meshes(tessHostContext context) {
  for (auto& [key, mesh] : context->meshes)
    if (!context->lent_meshes.count(mesh)) tessMeshDestroy(mesh);
  context->meshes.clear();
  context->lent_meshes.clear();
}

tessStatus lend_host_mesh(tessHostContext context, const char* description, tessMesh mesh, const std::string& what) {
  MeshDescription wanted;
  if (!description || !parse_mesh(description, wanted))
    return fail(TESS_ERROR_INVALID_VALUE, fmt::format("{}: a malformed mesh description '{}'", what,
                                                      description ? description : "(null)"));
  auto describe = [](const std::vector<std::string>& axes, const std::vector<int>& shape) {
    std::string out;
    for (size_t a = 0; a < axes.size() && a < shape.size(); ++a)
      out += fmt::format("{}{}={}", a ? ", " : "", axes[a], shape[a]);
    return "(" + out + ")";
  };
  std::string compiled = describe(wanted.axes, wanted.shape);
  if (!mesh)
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("{}: the mesh is null; the function runs its collectives on a mesh {}: create one with "
                            "tessMeshCreate and pass it",
                            what, compiled));
  int count = 0;
  if (tessStatus s = tessMeshGetAxisCount(mesh, &count); s != TESS_SUCCESS) return s;
  std::vector<std::string> axes;
  std::vector<int> shape;
  for (int a = 0; a < count; ++a) {
    const char* name = nullptr;
    int size = 0;
    tessMeshGetAxisName(mesh, a, &name);
    tessMeshGetAxisSize(mesh, name, &size);
    axes.emplace_back(name ? name : "");
    shape.push_back(size);
  }
  if (axes != wanted.axes || shape != wanted.shape)
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("{}: the function was compiled for a mesh {} but is called on a mesh {}: the axes and "
                            "their sizes must be the same",
                            what, compiled, describe(axes, shape)));
  context->meshes[description] = mesh;
  context->lent_meshes.insert(mesh);
  return ok();
}

void wait_host_requests(tessHostContext context) {
  for (auto& [id, request] : context->requests) {
    tessCollectiveWait(request.started);
    if (request.staging) host_release(context, request.staging);
  }
  context->requests.clear();
}

bool is_first_rank() {
  int rank = 0;
  tessJobRank(&rank);
  return rank == 0;
}

}  // namespace tessera::rt

extern "C" {

tessStatus tessHostMesh(tessHostContext context, const char* description) {
  if (!context) return fail(TESS_ERROR_INVALID_VALUE, "tessHostMesh: the host context is null");
  tessMesh mesh;
  return mesh_of(context, description, &mesh, nullptr);
}

tessStatus tessHostCollective(tessHostContext context, const char* mesh_text, const char* operation,
                              const tessTensor* source, const tessTensor* target) {
  if (!context || !source || !target || !operation)
    return fail(TESS_ERROR_INVALID_VALUE, "tessHostCollective: a null argument");
  tessMesh mesh;
  MeshDescription m;
  Operation o = parse_operation(operation);
  const bool places_blocks = o.kind == "shard" || o.kind == "unshard";
  if (tessStatus s = mesh_of(context, mesh_text, &mesh, places_blocks ? &m : nullptr); s != TESS_SUCCESS) return s;
  tessDtype dtype = source->dtype;
  int bits = tessDtypeBits(dtype);
  size_t element = static_cast<size_t>(bits / 8);
  const char* axis = o.axis.empty() ? nullptr : o.axis.c_str();
  tessDeviceKind kind = TESS_DEVICE_CPU;
  tessDeviceGetKind(context->device, &kind);
  bool rearranges = (o.kind == "all_gather" || o.kind == "reduce_scatter") && o.dim != 0;
  if ((rearranges || o.kind == "shard" || o.kind == "unshard") && (kind != TESS_DEVICE_CPU || bits % 8 != 0))
    return fail(TESS_ERROR_UNSUPPORTED,
                fmt::format("tessHostCollective: {} along dimension {} is implemented for whole-byte dtypes on the CPU "
                            "device only",
                            o.kind, o.dim));
  auto count = static_cast<size_t>(elements(*source));
  auto axis_size = [&](const std::string& name) {
    int n = 1;
    tessMeshGetAxisSize(mesh, name.c_str(), &n);
    return n;
  };
  auto index_along = [&](int* index) { return tessMeshGetAxisRank(mesh, axis, index); };
  const size_t bytes = count * static_cast<size_t>(bits) / 8;
  if (o.kind == "all_reduce") {
    if (tessStatus s = tessMeshAllReduce(mesh, axis, source->data, target->data, count, dtype, reduce_op(o.op), nullptr);
        s != TESS_SUCCESS || o.root < 0)
      return s;
    // root=: the reduction kept on the root only (autodiff's transpose of a
    // broadcast), zeros elsewhere.
    int index = 0;
    if (tessStatus s = index_along(&index); s != TESS_SUCCESS) return s;
    return index == o.root ? ok() : tessMemset(context->device, target->data, 0, bytes);
  }
  if (o.kind == "broadcast") {
    if (tessStatus s = tessMemcpyDtoD(context->device, target->data, source->data, count * element); s != TESS_SUCCESS)
      return s;
    return tessMeshBroadcast(mesh, axis, target->data, count, dtype, o.root < 0 ? 0 : o.root, nullptr);
  }
  // Point to point: the peers are indices along the axis; this rank's index
  // says whether it takes part (the other ranks' recv keeps its operand).
  if (o.kind == "send" || o.kind == "recv" || o.kind == "sendrecv") {
    int index = 0, n = 1;
    if (tessStatus s = index_along(&index); s != TESS_SUCCESS) return s;
    if (tessStatus s = tessMeshGetAxisSize(mesh, axis, &n); s != TESS_SUCCESS) return s;
    if (o.kind == "send") return index == o.src ? tessMeshSend(mesh, axis, source->data, count, dtype, o.dst, nullptr) : ok();
    // transpose=1 (autodiff's reverse of a recv): index dst sends its operand
    // back to src and holds zeros; the other ranks keep their operand.
    if (o.kind == "recv" && index == o.dst && o.transpose) {
      if (tessStatus s = tessMeshSend(mesh, axis, source->data, count, dtype, o.src, nullptr); s != TESS_SUCCESS) return s;
      return tessMemset(context->device, target->data, 0, bytes);
    }
    if (o.kind == "recv" && index == o.dst) return tessMeshRecv(mesh, axis, target->data, count, dtype, o.src, nullptr);
    if (o.kind == "recv") return tessMemcpyDtoD(context->device, target->data, source->data, bytes);
    const int to = ((index + o.shift) % n + n) % n, from = ((index - o.shift) % n + n) % n;
    return tessMeshSendRecv(mesh, axis, source->data, to, target->data, from, count, dtype, nullptr);
  }
  if (o.kind == "all_gather") {
    if (!rearranges) return tessMeshAllGather(mesh, axis, source->data, target->data, count, dtype, nullptr);
    int n = axis_size(o.axis);
    Scratch gathered(context->device, bytes * static_cast<size_t>(n));
    if (tessStatus s = tessMeshAllGather(mesh, axis, source->data, gathered.ptr, count, dtype, nullptr); s != TESS_SUCCESS)
      return s;
    place_gathered(host(gathered.ptr), host(target->data), outer_elements(*source, o.dim), n, bytes);
    return ok();
  }
  if (o.kind == "reduce_scatter") {
    size_t out = static_cast<size_t>(elements(*target));
    if (!rearranges)
      return tessMeshReduceScatter(mesh, axis, source->data, target->data, out, dtype, reduce_op(o.op), nullptr);
    Scratch blocks(context->device, bytes);
    stage_for_scatter(host(source->data), host(blocks.ptr), outer_elements(*source, o.dim), axis_size(o.axis),
                      out * element);
    return tessMeshReduceScatter(mesh, axis, blocks.ptr, target->data, out, dtype, reduce_op(o.op), nullptr);
  }
  if (o.kind == "shard" || o.kind == "unshard") {
    const tessTensor& whole = o.kind == "shard" ? *source : *target;
    const tessTensor& block = o.kind == "shard" ? *target : *source;
    std::vector<int64_t> global(whole.shape, whole.shape + whole.rank), local(block.shape, block.shape + block.rank);
    auto offsets_for = [&](const std::vector<int>& coords) {
      std::vector<int64_t> offsets(local.size(), 0);
      for (size_t d = 0; d < local.size() && d < o.spec.size(); ++d) {
        if (o.spec[d].empty()) continue;
        for (size_t a = 0; a < m.axes.size(); ++a)
          if (m.axes[a] == o.spec[d]) offsets[d] = coords[a] * local[d];
      }
      return offsets;
    };
    int rank = 0;
    tessMeshGetRank(mesh, &rank);
    std::vector<int> coords(m.axes.size(), 0);
    if (o.kind == "shard") {
      tessMeshGetCoords(mesh, rank, coords.data(), static_cast<int>(coords.size()));
      // A partial sum (product) of a whole tensor: index 0 of the partial
      // axes holds the block and the others the identity, so that the
      // reduction the layout promises gives the tensor back (a mean, max or
      // min of equal blocks is the block: every rank holds it).
      bool identity = false;
      if (o.op == "sum" || o.op == "prod")
        for (const std::string& p : o.partial)
          for (size_t a = 0; a < m.axes.size(); ++a)
            if (!p.empty() && m.axes[a] == p && coords[a] != 0) identity = true;
      if (!identity) {
        copy_block(host(source->data), host(target->data), global, local, offsets_for(coords), element, true);
        return ok();
      }
      size_t block_bytes = static_cast<size_t>(elements(block)) * element;
      if (o.op == "sum") return tessMemset(context->device, target->data, 0, block_bytes);
      std::vector<unsigned char> one = one_bytes(dtype, element);
      for (size_t at = 0; at < block_bytes; at += element) std::memcpy(host(target->data) + at, one.data(), element);
      return ok();
    }
    // Unshard: reduce the partial axes, gather every rank's block, place each.
    size_t block_count = static_cast<size_t>(elements(block));
    Scratch reduced(context->device, block_count * element);
    if (tessStatus s = tessMemcpyDtoD(context->device, reduced.ptr, source->data, block_count * element); s != TESS_SUCCESS)
      return s;
    for (const std::string& p : o.partial)
      if (!p.empty())
        if (tessStatus s = tessMeshAllReduce(mesh, p.c_str(), reduced.ptr, reduced.ptr, block_count, dtype, reduce_op(o.op),
                                             nullptr);
            s != TESS_SUCCESS)
          return s;
    int size = 1;
    tessMeshGetSize(mesh, &size);
    Scratch all(context->device, block_count * element * static_cast<size_t>(size));
    if (tessStatus s = tessMeshAllGather(mesh, nullptr, reduced.ptr, all.ptr, block_count, dtype, nullptr); s != TESS_SUCCESS)
      return s;
    for (int r = 0; r < size; ++r) {
      tessMeshGetCoords(mesh, r, coords.data(), static_cast<int>(coords.size()));
      copy_block(host(target->data), host(all.ptr) + static_cast<size_t>(r) * block_count * element, global, local,
                 offsets_for(coords), element, false);
    }
    return ok();
  }
  return fail(TESS_ERROR_INVALID_VALUE, fmt::format("tessHostCollective: unknown operation '{}'", operation));
}

tessStatus tessHostCollectiveStart(tessHostContext context, const char* mesh_text, const char* operation,
                                   const tessTensor* source, const tessTensor* target, int64_t* request) {
  if (!context || !source || !target || !operation || !request)
    return fail(TESS_ERROR_INVALID_VALUE, "tessHostCollectiveStart: a null argument");
  *request = 0;
  tessMesh mesh;
  if (tessStatus s = mesh_of(context, mesh_text, &mesh, nullptr); s != TESS_SUCCESS) return s;
  Operation o = parse_operation(operation);
  tessDtype dtype = source->dtype;
  const char* axis = o.axis.empty() ? nullptr : o.axis.c_str();
  auto count = static_cast<size_t>(elements(*source));
  const size_t bytes = count * static_cast<size_t>(tessDtypeBits(dtype)) / 8;
  int index = 0, n = 1;
  if (tessStatus s = tessMeshGetAxisRank(mesh, axis, &index); s != TESS_SUCCESS) return s;
  if (tessStatus s = tessMeshGetAxisSize(mesh, axis, &n); s != TESS_SUCCESS) return s;
  // Along a dimension other than the first: on the CPU device, whole-byte
  // dtypes (else tessHostCollective's error).
  tessDeviceKind device_kind = TESS_DEVICE_CPU;
  tessDeviceGetKind(context->device, &device_kind);
  const bool rearranges = (o.kind == "all_gather" || o.kind == "reduce_scatter") && o.dim != 0;
  const bool can_rearrange = device_kind == TESS_DEVICE_CPU && tessDtypeBits(dtype) % 8 == 0;
  tessHostContext_st::Request started;
  tessStatus status = TESS_SUCCESS;
  const tessDevicePtr target_data = target->data;
  if (o.kind == "all_reduce") {
    status = tessMeshAllReduceStart(mesh, axis, source->data, target_data, count, dtype, reduce_op(o.op), nullptr,
                                    &started.started);
    // root=: the reduction kept on the root only (autodiff's transpose of a
    // broadcast), zeros elsewhere once it is complete.
    if (o.root >= 0 && index != o.root)
      started.finish = [context, target_data, bytes] { return tessMemset(context->device, target_data, 0, bytes); };
  } else if (o.kind == "all_gather" && !rearranges) {
    status = tessMeshAllGatherStart(mesh, axis, source->data, target_data, count, dtype, nullptr, &started.started);
  } else if (o.kind == "all_gather" && can_rearrange) {
    // Gathered into staging in the collective's block order, placed at the wait.
    status = tessera::rt::host_allocate(context, bytes * static_cast<size_t>(n), &started.staging);
    if (status == TESS_SUCCESS)
      status = tessMeshAllGatherStart(mesh, axis, source->data, started.staging, count, dtype, nullptr,
                                      &started.started);
    const tessDevicePtr staging = started.staging;
    const int64_t outer = outer_elements(*source, o.dim);
    started.finish = [staging, target_data, outer, n, bytes] {
      place_gathered(host(staging), host(target_data), outer, n, bytes);
      return ok();
    };
  } else if (o.kind == "reduce_scatter" && !rearranges) {
    status = tessMeshReduceScatterStart(mesh, axis, source->data, target_data, static_cast<size_t>(elements(*target)),
                                        dtype, reduce_op(o.op), nullptr, &started.started);
  } else if (o.kind == "reduce_scatter" && can_rearrange) {
    // Each index's slabs staged into its contiguous block now.
    const auto out = static_cast<size_t>(elements(*target));
    status = tessera::rt::host_allocate(context, bytes, &started.staging);
    if (status == TESS_SUCCESS) {
      stage_for_scatter(host(source->data), host(started.staging), outer_elements(*source, o.dim), n,
                        out * static_cast<size_t>(tessDtypeBits(dtype) / 8));
      status = tessMeshReduceScatterStart(mesh, axis, started.staging, target_data, out, dtype, reduce_op(o.op),
                                          nullptr, &started.started);
    }
  } else if (o.kind == "broadcast") {
    status = tessMemcpyDtoD(context->device, target_data, source->data, bytes);
    if (status == TESS_SUCCESS)
      status = tessMeshBroadcastStart(mesh, axis, target_data, count, dtype, o.root < 0 ? 0 : o.root, nullptr,
                                      &started.started);
  } else if (o.kind == "send" && index == o.src) {
    status = tessMeshSendStart(mesh, axis, source->data, count, dtype, o.dst, nullptr, &started.started);
  } else if (o.kind == "recv" && index == o.dst && !o.transpose) {
    status = tessMeshRecvStart(mesh, axis, target_data, count, dtype, o.src, nullptr, &started.started);
  } else if (o.kind == "recv" && index == o.dst) {
    // transpose=1 (autodiff's reverse of a recv): the operand sent back to
    // src, zeros here.
    status = tessMemset(context->device, target_data, 0, bytes);
    if (status == TESS_SUCCESS)
      status = tessMeshSendStart(mesh, axis, source->data, count, dtype, o.src, nullptr, &started.started);
  } else if (o.kind == "sendrecv") {
    const int to = ((index + o.shift) % n + n) % n, from = ((index - o.shift) % n + n) % n;
    status = tessMeshSendRecvStart(mesh, axis, source->data, to, target_data, from, count, dtype, nullptr,
                                   &started.started);
  } else {
    // The ranks a send or recv does not involve (nothing to wait for), and
    // what tessHostCollective refuses: done now.
    return tessHostCollective(context, mesh_text, operation, source, target);
  }
  if (status != TESS_SUCCESS) {
    if (started.staging) tessera::rt::host_release(context, started.staging);
    return status;
  }
  *request = context->next_request++;
  context->requests.emplace(*request, std::move(started));
  return ok();
}

tessStatus tessHostCollectiveWait(tessHostContext context, int64_t request) {
  if (!context) return fail(TESS_ERROR_INVALID_VALUE, "tessHostCollectiveWait: the host context is null");
  if (request == 0) return ok();
  auto it = context->requests.find(request);
  if (it == context->requests.end())
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("tessHostCollectiveWait: no collective in flight has request {}", request));
  tessHostContext_st::Request started = std::move(it->second);
  context->requests.erase(it);
  tessStatus status = tessCollectiveWait(started.started);
  if (status == TESS_SUCCESS && started.finish) status = started.finish();
  if (started.staging) tessera::rt::host_release(context, started.staging);
  return status;
}

}  // extern "C"
