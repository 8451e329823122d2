// A C++ program that calls @jit functions on a mesh through the generated
// header (tests/aot/mesh_functions.tsr, docs/aot.md "@jit functions on a
// mesh"), one process per rank under mpirun -np 2. Each rank writes its
// results as raw little-endian f32 to DIR/<name>.<rank>.bin, which
// Inputs/check_mesh_functions.py compares with NumPy, and prints the
// messages of two wrong calls (a null mesh, a mesh of other axes).
#include <tessera/runtime.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "mesh_functions.h"

namespace {

using tessera::rt::Buffer;
using tessera::rt::Device;

// The global inputs, as check_mesh_functions.py builds them.
float x_global(int i, int j) { return static_cast<float>((i * 6 + j) % 7) - 3.0f; }   // 4 x 6
float w_global(int i, int j) { return static_cast<float>((i * 5 + j) % 5) * 0.5f - 1.0f; }  // 6 x 5
float g_global(int i, int j) { return static_cast<float>(i * 3 + j); }                  // 4 x 3

void write(tessDevice device, const std::string& dir, const std::string& name, int rank, const tessTensor& t) {
  int64_t n = 1;
  for (int32_t a = 0; a < t.rank; ++a) n *= t.shape[a];
  std::vector<float> host(static_cast<size_t>(n));
  tessera::rt::check(tessMemcpyDtoH(device, host.data(), t.data, host.size() * sizeof(float)));
  std::string path = dir + "/" + name + "." + std::to_string(rank) + ".bin";
  FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(host.data(), sizeof(float), host.size(), f);
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tessera::rt;
  if (argc != 2) {
    std::fprintf(stderr, "usage: aot_mesh_function DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  try {
    const int rank = job_rank();
    Mesh mesh({"cpu:0", "cpu:1"}, {"tp"}, {2});
    Device device = mesh.device();
    // row_parallel: this rank's 3 columns of x and 3 rows of w.
    std::vector<float> x(4 * 3), w(3 * 5), g(2 * 3);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 3; ++j) x[static_cast<size_t>(i * 3 + j)] = x_global(i, rank * 3 + j);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j) w[static_cast<size_t>(i * 5 + j)] = w_global(rank * 3 + i, j);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) g[static_cast<size_t>(i * 3 + j)] = g_global(rank * 2 + i, j);
    Buffer xb(device, x.size() * sizeof(float)), wb(device, w.size() * sizeof(float)), gb(device, g.size() * sizeof(float));
    xb.copy_from(x.data(), x.size() * sizeof(float));
    wb.copy_from(w.data(), w.size() * sizeof(float));
    gb.copy_from(g.data(), g.size() * sizeof(float));
    tessera::TensorView<const float, 2> xv(xb.address(), {4, 3}), wv(wb.address(), {3, 5}), gv(gb.address(), {2, 3});

    tessTensor product, gathered, plus_one;
    check(mesh_functions::row_parallel(device.handle(), mesh.get(), xv, wv, &product));
    write(device.handle(), dir, "row_parallel", rank, product);
    check(mesh_functions::gather_rows(device.handle(), mesh.get(), gv, &gathered));
    write(device.handle(), dir, "gather_rows", rank, gathered);
    // total: 7 elements (a size the function learns at run time), rank-dependent.
    std::vector<float> v(7);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(rank * 10) + static_cast<float>(i) * 0.25f;
    Buffer vb(device, v.size() * sizeof(float));
    vb.copy_from(v.data(), v.size() * sizeof(float));
    tessera::TensorView<const float, 1> vv(vb.address(), {7});
    tessTensor summed;
    check(mesh_functions::total(device.handle(), mesh.get(), vv, &summed));
    write(device.handle(), dir, "total", rank, summed);
    check(tessFree(device.handle(), summed.data));
    check(mesh_functions::local(device.handle(), gv, &plus_one));  // no mesh: a function without collectives
    write(device.handle(), dir, "local", rank, plus_one);
    for (tessTensor* t : {&product, &gathered, &plus_one}) check(tessFree(device.handle(), t->data));

    // Wrong meshes: errors before anything runs (no collective starts).
    tessTensor unused;
    tessStatus status = mesh_functions::row_parallel(device.handle(), nullptr, xv, wv, &unused);
    std::printf("rank %d: null mesh: %d: %s\n", rank, static_cast<int>(status), tessGetLastErrorMessage());
    Mesh other({"cpu:0", "cpu:1"}, {"dp"}, {2});
    status = mesh_functions::gather_rows(device.handle(), other.get(), gv, &unused);
    std::printf("rank %d: other mesh: %d: %s\n", rank, static_cast<int>(status), tessGetLastErrorMessage());
    std::printf("rank %d: done\n", rank);
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "aot_mesh_function: %s\n", e.what());
    return 1;
  }
}
