/* bench/dist: the same all_reduce as allreduce_bench.cpp in a plain MPI C
 * program (MPI_Init, blocking MPI_Allreduce, MPI_Wtime), built by run.sh with
 * mpicc. Rank 0 prints one line per size:
 *   mpi <bytes> <microseconds per all_reduce> <bus bandwidth GB/s> */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const size_t largest = (size_t)64 << 20;
  float* send = malloc(largest);
  float* recv = malloc(largest);
  for (size_t i = 0; i < largest / 4; ++i) send[i] = (float)(i % 7);
  for (size_t bytes = 4096; bytes <= largest; bytes *= 4) {
    const int count = (int)(bytes / 4);
    size_t n = ((size_t)256 << 20) / bytes;
    const int iterations = (int)(n < 5 ? 5 : n > 1000 ? 1000 : n);
    for (int i = 0; i < 3; ++i) MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < iterations; ++i) MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double seconds = (MPI_Wtime() - start) / iterations, slowest = 0;
    MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const double bus_bandwidth = (double)bytes / slowest * 2.0 * (size - 1) / size / 1e9;
    if (rank == 0) printf("mpi %zu %.2f %.3f\n", bytes, slowest * 1e6, bus_bandwidth);
  }
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
