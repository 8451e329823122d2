/* The autotuner (docs/autotuning.md, "The tuner"): picks the fastest
 * variant of an autotuned kernel for a key, by timing them on first use, and
 * remembers the choice in a cache file per device, so that the next process
 * with the same key reads it instead of timing.
 *
 * The key: tessTuneMakeKey. Without key=(...) on the kernel every tensor
 * argument's dtype and extents, each extent rounded up to a power of two
 * (tessTuneBucket); with key=("n", ...) the named dimensions' exact values
 * and the tensors' dtypes. The compiler's version is part of it; the device
 * is the cache file.
 *
 * The cache: DIR/DEVICE.json, DIR being TESSERA_CACHE_DIR, else
 * $XDG_CACHE_HOME/tessera, else ~/.cache/tessera; DEVICE the device's name
 * with everything but letters and digits turned into '-'. JSON, versioned
 * ("format": "tessera-tuning-cache", "version": 1), written whole to a
 * temporary file in the same directory and renamed over the old one (a
 * reader sees the old cache or the new one, never half of one). Tuning
 * holds an flock on DIR/DEVICE.json.lock, and reads the cache again once it
 * has the lock, so concurrent processes tune a key once. A cache that cannot
 * be read, does not parse or has another version is ignored with a warning
 * on stderr and rewritten on the next tuning. Deleting it is always safe.
 *
 * In a job of several ranks (mpirun: OMPI_COMM_WORLD_SIZE or PMI_SIZE > 1)
 * rank 0 tunes and broadcasts its choice over the MPI world, so every rank
 * launches the same variant; tessTune is then collective (every rank calls
 * it for the same kernel and key, in the same order).
 *
 * TESSERA_AUTOTUNE=0 turns tuning off: tessTune returns the default variant
 * (the compiler's heuristic choice) without timing or reading the cache,
 * unless the request forces tuning (tesserac tune, tesserac run --tune). */
#ifndef TESSERA_TUNER_H
#define TESSERA_TUNER_H

#include "tessera/tessera_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The extent's bucket: the smallest power of two >= extent (1 for extent <= 1). */
int64_t tessTuneBucket(int64_t extent);

/* A tensor argument, for the key. */
typedef struct tessTuneTensor {
  const char* name;
  tessDtype dtype;
  int32_t rank;
  const int64_t* shape;
} tessTuneTensor;

/* A dimension named by key=(...), with its value. */
typedef struct tessTuneDimension {
  const char* name;
  int64_t value;
} tessTuneDimension;

/* The key's text, NUL-terminated in `key` (TESS_ERROR_INVALID_VALUE when
 * `capacity` is too small). `dimensions` null: every tensor extent,
 * bucketed; else those dimensions, exact. For example
 * "x:f32[1024] y:f32[1024] | tesserac 0.1.0" or
 * "n=1000 x:f32 y:f32 | tesserac 0.1.0". */
tessStatus tessTuneMakeKey(const tessTuneTensor* tensors, size_t tensor_count, const tessTuneDimension* dimensions,
                           size_t dimension_count, const char* compiler_version, char* key, size_t capacity);

/* Where the choice came from. */
typedef enum tessTuneSource {
  TESS_TUNE_DEFAULT = 0, /* TESSERA_AUTOTUNE=0: the default variant, nothing timed or read */
  TESS_TUNE_CACHE = 1,   /* the cache had it: nothing timed */
  TESS_TUNE_TIMED = 2,   /* every variant timed now, the choice written to the cache */
  TESS_TUNE_RANK0 = 3    /* a job of several ranks: rank 0's choice, broadcast (recorded in this rank's cache) */
} tessTuneSource;

/* Runs variant `variant` once and waits for it to finish. */
typedef tessStatus (*tessTuneRunFunction)(void* user, size_t variant);

typedef struct tessTuneRequest {
  const char* kernel;          /* the autotuned kernel's name */
  const char* key;             /* tessTuneMakeKey's text */
  const char* device;          /* the device's name (tessDeviceGetName): which cache file */
  const char* const* variants; /* each variant's point, "BM=64, BN=128" */
  size_t variant_count;
  size_t default_variant;
  tessTuneRunFunction run;
  void* user;
  int warmup;             /* untimed runs of each variant first (0: 1) */
  int repetitions;        /* timed runs of each variant; the median counts (0: 5) */
  int force;              /* time again even when the cache has the key, and even with TESSERA_AUTOTUNE=0 */
  const char* cache_file; /* null: the device's cache file (tessTuneCachePath); else this file (tesserac tune -o) */
  /* Where the variants run. Non-null: each timed run is measured with two
   * events recorded on `timing_stream` (null: the device's default stream)
   * around it, and when the device has an L2 cache (TESS_ATTR_L2_CACHE_SIZE
   * > 0: a CUDA device) a scratch buffer of twice its size is written
   * before each run, so every run starts from a cold L2. Null: wall clock
   * around `run`, no flush. */
  tessDevice timing_device;
  tessStream timing_stream;
} tessTuneRequest;

typedef struct tessTuneResult {
  size_t chosen; /* index into variants */
  tessTuneSource source;
  double tuning_ms;        /* the time tessTune took (timing, locking, the cache) */
  double chosen_median_ms; /* the chosen variant's median (TESS_TUNE_TIMED; else 0) */
} tessTuneResult;

/* Picks the variant to launch. A failed run of a variant while timing
 * fails the call with that status. */
tessStatus tessTune(const tessTuneRequest* request, tessTuneResult* result);

/* The points the cache file `path` chose for `kernel` (any key), each
 * followed by '\n', in `choices` (NUL-terminated). TESS_ERROR_NOT_FOUND
 * when there is no such file, TESS_ERROR_INVALID_VALUE when it is not a
 * tuning cache or `capacity` is too small. (tesserac -c --tune-cache.) */
tessStatus tessTuneCacheChoices(const char* path, const char* kernel, char* choices, size_t capacity);

/* The cache directory, and the cache file of a device. */
tessStatus tessTuneCacheDirectory(char* path, size_t capacity);
tessStatus tessTuneCachePath(const char* device, char* path, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif
