// One process per CPU device: a 1-D mesh over the whole job, an all_reduce
// and an all_gather checked on every rank. Alone it runs on the loopback
// communicator; under mpirun on MPI, through the plugin installed beside the
// runtime.
#include <link.h>
#include <tessera/runtime.hpp>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

// The file of the MPI plugin the runtime loaded, if any.
static std::string loaded_plugin() {
  std::string path;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name && std::strstr(info->dlpi_name, "libtessera_rt_mpi.so"))
          *static_cast<std::string*>(data) = info->dlpi_name;
        return 0;
      },
      &path);
  return path;
}

int main() {
  using namespace tessera::rt;
  try {
    const int rank = job_rank(), size = job_size();
    std::vector<std::string> devices;
    for (int i = 0; i < size; ++i) devices.push_back("cpu:" + std::to_string(i));
    Mesh mesh(devices, {"dp"}, {size});
    Buffer x(mesh.device(), 4 * sizeof(int)), all(mesh.device(), static_cast<size_t>(size) * sizeof(int));
    int values[4] = {rank, 1, 2 * rank, -rank};
    x.copy_from(values, sizeof values);
    mesh.all_reduce("dp", x.address(), x.address(), 4, TESS_I32, TESS_REDUCE_SUM);
    x.copy_to(values, sizeof values);
    const int ranks_sum = size * (size - 1) / 2;
    bool ok = values[0] == ranks_sum && values[1] == size && values[2] == 2 * ranks_sum && values[3] == -ranks_sum;
    int mine = 10 * rank;
    Buffer one(mesh.device(), sizeof(int));
    one.copy_from(&mine, sizeof mine);
    mesh.all_gather("dp", one.address(), all.address(), 1, TESS_I32);
    std::vector<int> gathered(static_cast<size_t>(size));
    all.copy_to(gathered.data(), gathered.size() * sizeof(int));
    for (int i = 0; i < size; ++i) ok = ok && gathered[static_cast<size_t>(i)] == 10 * i;
    const char* backend = mesh.backend() == TESS_COLLECTIVES_MPI ? "MPI" : "loopback";
    std::printf("mesh-app: rank %d of %d (%s): %s\n", rank, size, backend, ok ? "collectives match" : "MISMATCH");
    const std::string plugin = loaded_plugin();
    std::printf("mesh-app: rank %d: MPI plugin %s\n", rank, plugin.empty() ? "not loaded" : plugin.c_str());
    return ok ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "mesh-app: %s\n", e.what());
    return 1;
  }
}
