/* bench/dist: the same all_reduce as allreduce_bench.cpp in a plain MPI C
 * program (MPI_Init, blocking MPI_Allreduce, MPI_Wtime), built by run.sh with
 * mpicc and timed the same way: every iteration on every rank, the slowest
 * rank's time per iteration, the median over the iterations. Rank 0 prints
 * one line per size:
 *   mpi <bytes> <median microseconds> <bus bandwidth GB/s at the median>
 * Arguments: [smallest bytes] [largest bytes] (default 4096 and 64 MiB). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const size_t smallest = argc > 1 ? strtoull(argv[1], NULL, 10) : 4096;
  const size_t largest = argc > 2 ? strtoull(argv[2], NULL, 10) : (size_t)64 << 20;
  const int most_iterations = 20000;
  float* send = malloc(largest);
  float* recv = malloc(largest);
  double* t = malloc(most_iterations * sizeof(double));
  for (size_t i = 0; i < largest / 4; ++i) send[i] = (float)(i % 7);
  for (size_t bytes = smallest; bytes <= largest; bytes *= 4) {
    const int count = (int)(bytes / 4);
    const size_t n = ((size_t)1 << 30) / bytes; /* about 1 GiB per size, 10 to 20000 iterations */
    const int iterations = (int)(n < 10 ? 10 : n > (size_t)most_iterations ? (size_t)most_iterations : n);
    for (int i = 0; i < 3; ++i) MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iterations; ++i) {
      const double start = MPI_Wtime();
      MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      t[i] = MPI_Wtime() - start;
    }
    MPI_Allreduce(MPI_IN_PLACE, t, iterations, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    qsort(t, (size_t)iterations, sizeof(double), compare);
    const double median = t[iterations / 2];
    const double bus_bandwidth = (double)bytes / median * 2.0 * (size - 1) / size / 1e9;
    if (rank == 0) printf("mpi %zu %.2f %.3f\n", bytes, median * 1e6, bus_bandwidth);
  }
  free(send);
  free(recv);
  free(t);
  MPI_Finalize();
  return 0;
}
