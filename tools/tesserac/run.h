// `tesserac run FILE.tsr --kernel NAME --grid G [--group L] --arg NAME=FILE.npy|VALUE
// ... [--out NAME=FILE.npy] [--print NAME] [--device cpu|cuda:N]` (run.cpp).
#pragma once

namespace tessera {

// argv[0] is "run". Returns the process exit code: 0, 1 (bad input or a
// failed run, explained on stderr) or 2 (a bad command line).
int run_command(int argc, char** argv);
// `tesserac tune FILE --kernel K --grid G --arg ... [-o CACHE.json]`: the
// same arguments; times every variant of the autotuned kernel and writes the
// tuning cache (docs/autotuning.md). argv[0] is "tune".
int tune_command(int argc, char** argv);

}  // namespace tessera
