// Meshes: the job's ranks as a grid of devices with named axes, and one
// communicator per axis (docs/distributed.md#meshes). The C functions are in
// collectives_api.cpp; creation, the part with policy in it, is in mesh.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "communicator.h"

struct tessMesh_st {
  std::vector<std::string> devices;  // as given
  std::vector<std::string> axis_names;
  std::vector<int> shape;
  unsigned flags = 0;
  double timeout_seconds = 0;  // TESSERA_COLLECTIVE_TIMEOUT when it was created

  int rank = -1;                    // this process's mesh rank; -1: not a member
  std::vector<int> coords;          // this rank's coordinates (members only)
  tessDevice device = nullptr;      // this rank's device (the CPU device for non-members)
  tessCollectiveBackend backend = TESS_COLLECTIVES_LOOPBACK;
  std::unique_ptr<tessera::rt::Communicator> all;                // every rank of the mesh (members only)
  std::vector<std::unique_ptr<tessera::rt::Communicator>> axes;  // one per axis (members only)
  // Names of the groups in messages: "the mesh (4 ranks)", "mesh axis 'dp'".
  std::string all_group;
  std::vector<std::string> axis_groups;

  int size() const { return static_cast<int>(devices.size()); }
  int axis_count() const { return static_cast<int>(shape.size()); }
};

namespace tessera::rt {

struct MeshSpec {
  const char* const* devices;
  int device_count;
  const char* const* axis_names;
  const int* shape;
  int axis_count;
  unsigned flags;
};

// tessMeshCreate after its null checks.
tessStatus create_mesh(const MeshSpec& spec, std::unique_ptr<tessMesh_st>* result);

// The coordinates of mesh rank `rank` (row-major, last axis fastest).
std::vector<int> mesh_coords(const std::vector<int>& shape, int rank);
// The mesh rank at `coords`.
int mesh_rank_at(const std::vector<int>& shape, const int* coords);

}  // namespace tessera::rt
