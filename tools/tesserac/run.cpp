// `tesserac run`: compile one kernel of a .tsr file and run it, on the GPU
// when one works (PTX loaded by the CUDA driver) or on the CPU target (the
// same Tile IR compiled for the host and loaded in-process), with tensors
// from NumPy .npy files (docs/cpu-target.md, "tesserac run").
//
// Everything the command line says is checked against the kernel's
// signature before anything runs: every parameter has a value, dtypes and
// ranks match, static dimensions match, and a symbolic dimension (`n` in
// `x: f32[n], y: mut f32[n]`) has one value across all the tensors that use it.
#include "tools/tesserac/run.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cerrno>
#include <climits>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "codegen/kernel_signature.h"
#include "driver/compilation.h"
#include "driver/loader.h"
#include "support/diagnostics/diagnostics.h"
#include "tessera/numerics.hpp"
#include "tessera/tessera_collectives.h"
#include "tessera/tessera_runtime.h"
#include "tessera/tessera_tuner.h"
#include "support/npy.h"
#include "tools/tesserac/crash_report.h"
#include "tools/tesserac/diagnostic_flags.h"
#include "tools/tesserac/grid_expression.h"
#include "tools/tesserac/output_file.h"

namespace tessera {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitUserError = 1;
constexpr int kExitUsage = 2;

struct RunOptions {
  std::string input;
  std::string func;
  std::string kernel;
  std::string grid;
  std::string group;
  std::vector<std::string> defines;
  std::string stdlib_dir;
  std::vector<std::string> args;
  std::vector<std::string> outs;
  std::vector<std::string> prints;
  std::string device;
  int opt_level = 3;
  std::string mma = "auto";  // as tesserac's --mma
  std::string cpu_lanes = "loops";  // the CPU target's lanes: loops (with fibers as the fallback) or fibers
  std::string cuda_path;
  bool quiet = false;
  bool no_bounds_check = false;
  bool no_cpu_forms = false;  // --no-cpu-forms
  bool no_overlap_collectives = false;  // --no-overlap-collectives
  int repeat = 0;
  bool retune = false;       // --tune: time the variants even when the cache has the key
  bool tune_only = false;    // `tesserac tune`: tune, write the cache, run nothing more
  std::string tune_output;   // `tesserac tune -o FILE`: the cache file to write or merge into
  DiagnosticFlags diagnostics;  // -w, -Werror, -ferror-limit, --color: the compiler's
};

// Thrown for a user error: printed as "tesserac run: error: ..." with exit 1.
struct RunError {
  std::string message;
};
[[noreturn]] void fail(std::string message) { throw RunError{std::move(message)}; }

using Parameter = codegen::AotParameter;

// A bound argument: a tensor on the device or a scalar's bytes.
struct Argument {
  npy::Array array;          // tensors: the host copy, as in the .npy file
  // Tensors of bf16, fp8, fp6, fp4 (NumPy has no such dtypes): the .npy holds
  // float32 values (encoded here) or the codes (uint8; uint16 for bf16), and
  // `storage` the bytes the kernel sees (packed for fp6 and fp4, docs/abi.md).
  const numerics::Format* format = nullptr;
  std::vector<char> storage;
  tessDevicePtr device = 0;  // tensors: the device copy
  tessTensor view{};
  alignas(8) unsigned char scalar[8] = {};
};

std::vector<uint32_t> parse_shape(const std::string& text, const char* what) {
  std::vector<uint32_t> shape;
  std::string part;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ',' || text[i] == 'x') {
      uint32_t v = 0;
      auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
      if (ec != std::errc() || end != part.data() + part.size() || v == 0)
        fail(std::string("--") + what + " '" + text + "': expected 1 to 3 positive integers separated by ',' or 'x'");
      shape.push_back(v);
      part.clear();
    } else {
      part += text[i];
    }
  }
  if (shape.empty() || shape.size() > 3)
    fail(std::string("--") + what + " '" + text + "': expected 1 to 3 positive integers separated by ',' or 'x'");
  while (shape.size() < 3) shape.push_back(1);
  return shape;
}

std::pair<std::string, std::string> split_binding(const std::string& text, const char* option) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    fail(std::string("--") + option + " '" + text + "': expected NAME=VALUE");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

// A Python integer literal (decimal, 0x, 0o, 0b, `_` between digits),
// signed, as -D takes: its sign and magnitude (`too_big` past 64 bits), or
// nullopt when the text is no integer.
struct IntegerText {
  bool negative = false;
  uint64_t magnitude = 0;
  bool too_big = false;
};
std::optional<IntegerText> integer_text(std::string_view s) {
  IntegerText r;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    r.negative = s[0] == '-';
    s.remove_prefix(1);
  }
  unsigned base = 10;
  if (s.size() > 2 && s[0] == '0' && std::isalpha(static_cast<unsigned char>(s[1]))) {
    char b = static_cast<char>(std::tolower(static_cast<unsigned char>(s[1])));
    base = b == 'x' ? 16 : b == 'o' ? 8 : b == 'b' ? 2 : 0;
    if (base == 0) return std::nullopt;
    s.remove_prefix(2);
  }
  if (s.empty() || s.front() == '_' || s.back() == '_' || s.find("__") != std::string_view::npos) return std::nullopt;
  for (char c : s) {
    if (c == '_') continue;
    unsigned digit = std::isdigit(static_cast<unsigned char>(c)) ? static_cast<unsigned>(c - '0')
                     : std::isxdigit(static_cast<unsigned char>(c))
                         ? static_cast<unsigned>(std::tolower(static_cast<unsigned char>(c)) - 'a' + 10)
                         : 99;
    if (digit >= base) return std::nullopt;
    if (r.magnitude > (UINT64_MAX - digit) / base) r.too_big = true;
    else r.magnitude = r.magnitude * base + digit;
  }
  return r;
}

// Scalar text -> the bytes of `dtype`.
void parse_scalar(const Parameter& p, const std::string& text, unsigned char* out) {
  auto bad = [&](const char* why) {
    fail("--arg " + p.name + "=" + text + ": " + why + " for the " + p.dtype + " parameter '" + p.name + "'");
  };
  if (p.dtype == "bool") {
    if (text == "true" || text == "True" || text == "1") out[0] = 1;
    else if (text == "false" || text == "False" || text == "0") out[0] = 0;
    else bad("expected true or false");
    return;
  }
  if (p.dtype == "f32" || p.dtype == "f64") {
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(text.c_str(), &end);
    bool overflowed = errno == ERANGE;
    if (text.empty() || *end != '\0') bad("expected a number");
    // A finite number past the type's range (`1e50` for an f32, `1e400`)
    // would arrive as an infinity: out of range, as for integers ("inf"
    // says what it means).
    if ((std::isinf(v) && overflowed) || (p.dtype == "f32" && std::isfinite(v) && !std::isfinite(static_cast<float>(v))))
      bad("out of range");
    if (p.dtype == "f32") {
      float f = static_cast<float>(v);
      std::memcpy(out, &f, sizeof f);
    } else {
      std::memcpy(out, &v, sizeof v);
    }
    return;
  }
  // The narrow float formats: the number rounded to nearest, ties to even
  // (docs/numerics.md), stored as its bit pattern.
  if (const numerics::Format* format = numerics::find_format(p.dtype)) {
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') bad("expected a number");
    uint32_t code = numerics::encode(*format, numerics::f32_rounded_to_odd(v), numerics::Rounding::NearestEven,
                                     numerics::Overflow::Propagate);
    // A finite number past the format's range (`70000` for an f16) would
    // arrive as an infinity or NaN: out of range, as for f32 and integers.
    if (std::isfinite(v) && !std::isfinite(numerics::decode(*format, code))) bad("out of range");
    std::memcpy(out, &code, format->bits() > 8 ? 2 : 1);  // little-endian
    return;
  }
  bool is_unsigned = p.dtype[0] == 'u';
  int bits = std::atoi(p.dtype.c_str() + 1);
  if ((p.dtype[0] != 'i' && !is_unsigned) || (bits != 8 && bits != 16 && bits != 32 && bits != 64))
    bad("scalars of this type cannot be given on the command line");
  std::optional<IntegerText> integer = integer_text(text);
  if (!integer) bad(is_unsigned ? "expected an unsigned integer" : "expected an integer");
  uint64_t magnitude = integer->magnitude;
  if (integer->too_big) bad("out of range");
  if (is_unsigned) {
    if ((integer->negative && magnitude != 0) || (bits < 64 && magnitude >> bits)) bad("out of range");
    std::memcpy(out, &magnitude, static_cast<size_t>(bits / 8));  // little-endian
  } else {
    uint64_t limit = uint64_t{1} << (bits - 1);  // -limit .. limit - 1
    if (integer->negative ? magnitude > limit : magnitude >= limit) bad("out of range");
    int64_t v = integer->negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
    std::memcpy(out, &v, static_cast<size_t>(bits / 8));
  }
}

// bf16, fp8, fp6 and fp4 tensors (f16 is NumPy's float16). In a .npy file
// they are float32 values, rounded to nearest even (overflow as the format
// says: docs/numerics.md), or the codes: uint8 (fp8: the byte; fp6, fp4: one
// element per byte, in the low bits) or uint16 (bf16). --out writes the kind
// the --arg file held: decoded float32 values, or the codes.
const numerics::Format* narrow_tensor_format(const std::string& dtype) {
  return dtype == "f16" ? nullptr : numerics::find_format(dtype);
}
bool narrow_accepts(const numerics::Format& format, const std::string& file_dtype) {
  return file_dtype == "f32" || file_dtype == (format.bits() > 8 ? "u16" : "u8");
}

// The .npy array -> the bytes the kernel reads.
std::vector<char> encode_storage(const numerics::Format& format, const npy::Array& array, const std::string& where) {
  const auto n = static_cast<uint64_t>(array.element_count());
  const unsigned bits = format.bits();
  std::vector<char> storage(bits < 8 ? numerics::packed_bytes(n, bits) : n * (bits > 8 ? 2 : 1), 0);
  auto* bytes = reinterpret_cast<uint8_t*>(storage.data());
  const bool values = npy::tessera_dtype_of(array.descr) == "f32";
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t code = 0;
    if (values) {
      float v;
      std::memcpy(&v, array.data.data() + i * 4, 4);
      code = numerics::encode(format, v, numerics::Rounding::NearestEven, numerics::Overflow::Propagate);
    } else {
      std::memcpy(&code, array.data.data() + i * array.element_bytes(), array.element_bytes());  // little-endian
      if (code >> bits)
        fail(where + ": element " + std::to_string(i) + " is " + std::to_string(code) + ", not a " + format.name +
             " code (" + std::to_string(bits) + " bits)");
    }
    if (bits < 8)
      numerics::packed_set(bytes, i, bits, code);
    else
      std::memcpy(bytes + i * (bits / 8), &code, bits / 8);
  }
  return storage;
}

// The kernel's bytes -> the .npy array (its descr and shape kept).
void decode_storage(const numerics::Format& format, const std::vector<char>& storage, npy::Array& array) {
  const auto n = static_cast<uint64_t>(array.element_count());
  const unsigned bits = format.bits();
  const auto* bytes = reinterpret_cast<const uint8_t*>(storage.data());
  const bool values = npy::tessera_dtype_of(array.descr) == "f32";
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t code = 0;
    if (bits < 8)
      code = numerics::packed_get(bytes, i, bits);
    else
      std::memcpy(&code, bytes + i * (bits / 8), bits / 8);
    if (values) {
      float v = numerics::decode(format, code);
      std::memcpy(array.data.data() + i * 4, &v, 4);
    } else {
      std::memcpy(array.data.data() + i * array.element_bytes(), &code, array.element_bytes());
    }
  }
}

// One line of the tensor's values, row-major, in brackets; a 0-d tensor (a
// @jit function's scalar result) as its one value without brackets, as NumPy
// prints a 0-d array. Narrow floats (f16, bf16, fp8, fp6, fp4) print the
// values their codes stand for (%.9g of the f32 value; nan and inf as
// such), whatever the .npy file held.
void print_tensor(const std::string& name, const std::string& parameter_dtype, const npy::Array& a,
                  const std::vector<char>& storage) {
  std::string dtype = npy::tessera_dtype_of(a.descr);
  const numerics::Format* format = numerics::find_format(parameter_dtype);
  // A @jit function's f16 result (no parameter dtype): NumPy's float16 codes.
  if (!format && dtype == "f16") format = &numerics::f16;
  const bool zero_d = a.shape.empty();
  std::string text = name + (zero_d ? " = " : " = [");
  const int64_t n = a.element_count();
  const char* data = a.data.data();
  for (int64_t i = 0; i < n; ++i) {
    if (i) text += ", ";
    char buffer[64];
    if (format) {
      const auto element = static_cast<uint64_t>(i);
      uint32_t code = 0;
      if (format == &numerics::f16)
        std::memcpy(&code, data + i * 2, 2);  // NumPy's float16: the codes themselves
      else if (format->bits() < 8)
        code = numerics::packed_get(reinterpret_cast<const uint8_t*>(storage.data()), element, format->bits());
      else
        std::memcpy(&code, storage.data() + element * (format->bits() / 8), format->bits() / 8);
      std::snprintf(buffer, sizeof buffer, "%.9g", static_cast<double>(numerics::decode(*format, code)));
    } else if (dtype == "f32") {
      float v;
      std::memcpy(&v, data + i * 4, 4);
      std::snprintf(buffer, sizeof buffer, "%.9g", static_cast<double>(v));
    } else if (dtype == "f64") {
      double v;
      std::memcpy(&v, data + i * 8, 8);
      std::snprintf(buffer, sizeof buffer, "%.17g", v);
    } else if (dtype == "bool") {
      std::snprintf(buffer, sizeof buffer, "%s", data[i] ? "true" : "false");
    } else if (dtype[0] == 'u') {
      uint64_t v = 0;
      std::memcpy(&v, data + i * static_cast<int64_t>(a.element_bytes()), a.element_bytes());
      std::snprintf(buffer, sizeof buffer, "%" PRIu64, v);
    } else {
      // The signed integers: tensors of every other dtype were refused when
      // the arguments were bound.
      size_t bytes = a.element_bytes();
      uint64_t raw = 0;
      std::memcpy(&raw, data + i * static_cast<int64_t>(bytes), bytes);
      int64_t v = bytes == 8 ? static_cast<int64_t>(raw)
                             : static_cast<int64_t>(raw << (64 - 8 * bytes)) >> (64 - 8 * bytes);
      std::snprintf(buffer, sizeof buffer, "%" PRId64, v);
    }
    text += buffer;
  }
  std::printf("%s%s\n", text.c_str(), zero_d ? "" : "]");
}

void check(tessStatus status, const std::string& what) {
  if (status != TESS_SUCCESS) fail(what + ": " + tessGetLastErrorMessage());
}

// Under mpirun every rank compiles the same file, so the same diagnostics:
// rank 0 prints them, the others only count them (an error still ends each
// with status 1).
class FirstRankPrinter : public DiagnosticConsumer {
 public:
  explicit FirstRankPrinter(DiagnosticConsumer& printer) : printer_(printer) { tessJobRank(&rank_); }
  void handle(const Diagnostic& diagnostic) override {
    if (rank_ == 0) printer_.handle(diagnostic);
  }
  bool silent() const { return rank_ != 0; }

 private:
  DiagnosticConsumer& printer_;
  int rank_ = 0;
};

class Runner {
 public:
  explicit Runner(const RunOptions& options) : options_(options) {}

  int run() {
    SourceManager sources;
    TextDiagnosticPrinter printer(sources, stderr, options_.diagnostics.printer());
    FirstRankPrinter first_rank(printer);
    DiagnosticEngine diags(sources, first_rank, options_.diagnostics.options());
    driver::Compilation compilation(sources, diags, [](const char* phase) { g_current_phase = phase; });
    if (!options_.stdlib_dir.empty()) compilation.set_stdlib_directory(options_.stdlib_dir);
    std::string error;
    std::vector<driver::Override> overrides;
    for (const std::string& d : options_.defines) {
      std::optional<driver::Override> o = driver::parse_override(d);
      if (!o) fail("-D " + d + ": expected NAME=VALUE");
      overrides.push_back(*o);
    }
    if (!compilation.load(options_.input, overrides, error)) {
      if (error.starts_with("-D ")) fail(error);
      fail("cannot open '" + options_.input + "': " + error.substr(error.find(':') + 1));
    }
    compilation.lex();
    compilation.parse();
    const sema::TypedModule* typed = compilation.check();
    // What runs: --func's @jit function, --kernel (or --grid) a kernel, else
    // the module's program, else its one kernel.
    bool kernel_mode = !options_.kernel.empty() || !options_.grid.empty();
    if (!options_.func.empty() && kernel_mode) fail("--func runs a @jit function; --kernel and --grid are for kernels");
    // Which kernel runs, from the checked file: only it (and its helpers)
    // is lowered, so that another kernel of the file that cannot be lowered
    // does not keep it from running.
    if (kernel_mode && typed && !diags.has_errors()) {
      std::vector<std::string> kernels;
      for (const sema::FunctionInfo& f : typed->functions)
        if (f.kind == sema::FunctionKind::Kernel) kernels.emplace_back(compilation.values().identifiers.name(f.name));
      std::string names;
      for (const std::string& k : kernels) names += (names.empty() ? "'" : ", '") + k + "'";
      if (kernels.empty()) fail("'" + options_.input + "' has no @kernel function");
      if (options_.kernel.empty() && kernels.size() > 1)
        fail("'" + options_.input + "' has several kernels (" + names + "): pick one with --kernel");
      if (!options_.kernel.empty() && std::find(kernels.begin(), kernels.end(), options_.kernel) == kernels.end())
        fail("no kernel named '" + options_.kernel + "' in '" + options_.input + "' (it has " + names + ")");
    }
    // The passes the compiler runs before code generation, so a kernel runs
    // with the layouts (on a GPU the tensor-core instructions) tesserac gives it.
    // Graph code that runs on the CPU device takes the stdlib's CPU forms.
    if (!kernel_mode) compilation.set_cpu_only(!options_.no_cpu_forms && runs_on_cpu());
    compilation.set_overlap_collectives(!options_.no_overlap_collectives);
    if (!options_.func.empty()) compilation.set_entry_function(options_.func);
    ir::Operation* module = compilation.lower(options_.opt_level, true, ir::PipelineStage::Tile, options_.kernel);
    // On a GPU, variants whose registers spill are pruned (docs/autotuning.md, "Spills").
    if (module && !runs_on_cpu())
      module = compilation.prune_spilling_points(options_.opt_level, ir::PipelineStage::Tile, codegen_options(),
                                                 options_.kernel);
    diags.flush();
    if (diags.has_errors() || !module) {
      // mpirun ends the job at the first rank that fails: the silent ranks
      // let rank 0 print its diagnostics first.
      if (first_rank.silent()) std::this_thread::sleep_for(std::chrono::seconds(2));
      return kExitUserError;
    }

    if (!options_.func.empty()) return run_host(module, find_function(module), compilation);
    if (!kernel_mode && ir::lookup_function(module, "__tessera_program")) {
      if (!options_.args.empty() || !options_.outs.empty() || !options_.prints.empty())
        fail("--arg, --out and --print go with --func or --kernel; the program reads and writes its own files");
      return run_host(module, ir::lookup_function(module, "__tessera_program"), compilation);
    }
    if (options_.grid.empty()) {
      // (The kernels @jit functions generate are not the file's @kernels.)
      std::string kernels, functions;
      if (typed)
        for (const sema::FunctionInfo& f : typed->functions) {
          if (f.kind == sema::FunctionKind::Helper) continue;
          std::string& list = f.kind == sema::FunctionKind::Kernel ? kernels : functions;
          list += std::string(list.empty() ? "'" : ", '") + std::string(compilation.values().identifiers.name(f.name)) + "'";
        }
      if (kernels.empty())
        fail("'" + options_.input + "' has nothing to run: no program (top-level statements), no @jit function named "
             "with --func, no @kernel" +
             (functions.empty() ? std::string() : " (run a @jit function with --func NAME: " + functions + ")"));
      fail("running a kernel needs --grid (groups per axis)");
    }
    all_signatures_ = codegen::kernel_signatures(module);
    signature_ = find_kernel(all_signatures_);
    if (options_.tune_only && signature_.autotune_of.empty())
      fail("'" + kernel_name_ + "' has no autotune space: nothing to tune (write @kernel.autotune(space=dict(...)))");
    parameters_ = signature_.parameters;
    std::vector<uint32_t> group = declared_group();
    // A plain --grid is checked before the arguments (its errors first).
    if (options_.grid.find_first_not_of("0123456789x, ") == std::string::npos) parse_shape(options_.grid, "grid");
    bind_arguments();
    std::vector<uint32_t> grid = grid_for(signature_);

    tessDevice device = open_device();
    char device_name[128];
    check(tessDeviceGetName(device, device_name, sizeof device_name), "device");
    g_current_phase = "codegen";
    driver::LoadedModule loaded = driver::load_module(module, device, codegen_options(), diags, error);
    g_current_phase = "driver";
    if (!error.empty()) fail(error);
    if (!loaded) return kExitUserError;
    std::vector<void*> pointers = upload(device);
    // On the CPU the kernel runs in this process: a crash from here on is
    // the kernel's, not the compiler's (crash_report.h).
    const bool in_process = std::string_view(device_name).substr(0, 3) == "cpu";
    if (in_process) kernel_crash_begin(kernel_name_, device_name, !options_.no_bounds_check);
    // An autotuned kernel: the tuner picks the variant (docs/autotuning.md).
    std::string variant = kernel_name_;
    if (!signature_.autotune_of.empty()) {
      const codegen::AotKernel& chosen = tune(device, device_name, loaded.handle(), group, pointers);
      variant = chosen.name;
      grid = grid_for(chosen);
    }
    if (options_.tune_only) {
      if (in_process) kernel_crash_end();
      for (Argument& a : arguments_)
        if (a.device) tessFree(device, a.device);
      return kExitOk;
    }
    tessKernel handle = nullptr;
    check(tessModuleGetKernel(loaded.handle(), launched_kernel(device, variant).c_str(), &handle), "kernel lookup");
    check(tessLaunchKernel(handle, grid.data(), group.data(), 0, nullptr, pointers.data()),
          "running '" + kernel_name_ + "' on " + device_name);
    check(tessDeviceSynchronize(device), "running '" + kernel_name_ + "' on " + device_name);
    download(device);
    if (options_.repeat > 0) time_launches(device, handle, grid, group, pointers);
    if (in_process) kernel_crash_end();
    if (!options_.quiet)
      std::fprintf(stderr, "tesserac run: ran '%s' on %s: grid %ux%ux%u, group %ux%ux%u\n", kernel_name_.c_str(),
                   device_name, grid[0], grid[1], grid[2], group[0], group[1], group[2]);
    write_outputs();
    for (Argument& a : arguments_)
      if (a.device) tessFree(device, a.device);
    return kExitOk;
  }

 private:
  // The @jit function --func names (an annotated one: a generic function
  // has no signature of its own).
  ir::Operation* find_function(ir::Operation* module) {
    // An entry (every parameter annotated), or else the instance the
    // module's own calls made of a generic function (its first, named like
    // the function: `tesserac run FILE --func F` runs F as the program calls it).
    std::string names;
    for (ir::Operation* f : ir::module_functions(module)) {
      if (!f->has_attr("jit")) continue;
      if (f->symbol_name() == options_.func) return f;
      if (f->has_attr("entry")) names += (names.empty() ? "'" : ", '") + std::string(f->symbol_name()) + "'";
    }
    fail("no @jit function named '" + options_.func + "' with annotated parameters or called by the program in '" +
         options_.input + "'" + (names.empty() ? std::string() : " (it has " + names + ")"));
  }

  // Runs the program or a @jit function: its arguments from --arg, its
  // results to --out / --print ("result", or "result.0", "result.1", ...).
  int run_host(ir::Operation* module, ir::Operation* function, driver::Compilation& compilation) {
    bool program = function->has_attr("program");
    std::string name(function->symbol_name());
    kernel_name_ = name;
    signature_ = codegen::kernel_signature(function);
    parameters_ = signature_.parameters;
    constant_arguments_.clear();
    if (ir::Attribute constants = function->attr("arg_constants")) {
      for (size_t i = 0; i < constants.size(); ++i) {
        std::string_view text = constants[i].string_value();
        size_t equals = text.find('=');
        constant_arguments_[std::string(text.substr(0, equals))] = std::string(text.substr(equals + 1));
      }
    }
    ir::Type fn = function->attr("function_type").type();
    std::vector<std::string> result_names;
    for (size_t i = 0; i < fn.num_results(); ++i)
      result_names.push_back(fn.num_results() == 1 ? "result" : "result." + std::to_string(i));
    if (!program) bind_arguments(result_names);

    tessDevice device = open_device();
    char device_name[128];
    check(tessDeviceGetName(device, device_name, sizeof device_name), "device");
    std::string error;
    g_current_phase = "codegen";
    driver::LoadedModule loaded = driver::load_module(module, device, codegen_options(), compilation.diags(), error);
    g_current_phase = "driver";
    if (!error.empty()) fail(error);
    if (!loaded) return kExitUserError;
    tessHostFunction entry = loaded.host_function(name);
    if (!entry) fail("internal: no compiled host function '" + name + "'");
    tessHostContext context = nullptr;
    check(tessHostContextCreate(device, nullptr, loaded.handle(), &context), "host context");
    std::vector<void*> pointers = upload(device);
    std::vector<tessTensor> results(fn.num_results());
    std::vector<int64_t> scalars(fn.num_results());
    std::vector<void*> result_slots;
    for (size_t i = 0; i < fn.num_results(); ++i)
      result_slots.push_back(fn.result(i).is(ir::TypeKind::MemRef) ? static_cast<void*>(&results[i])
                                                                   : static_cast<void*>(&scalars[i]));
    tessStatus status = tessHostCall(context, entry, pointers.data(), result_slots.data());
    if (status != TESS_SUCCESS) {
      std::string message = tessGetLastErrorMessage();
      tessHostContextDestroy(context);
      std::string text =
          (program ? "the program" : "'" + name + "'") + std::string(" failed on ") + device_name + ": " + message;
      // One rank of several: its peers would wait for it in their next
      // collective until the timeout; the whole job ends now
      // (docs/distributed.md, "Failure behaviour").
      int ranks = 1;
      if (tessJobSize(&ranks) == TESS_SUCCESS && ranks > 1) tessJobAbort(1, ("tesserac run: error: " + text).c_str());
      fail(text);
    }
    if (!options_.quiet && !program) std::fprintf(stderr, "tesserac run: ran '%s' on %s\n", name.c_str(), device_name);
    if (options_.repeat > 0 && !program) {
      // Whole calls, wall-clock: the host code, its launches and its
      // allocations (the results are freed after each).
      std::vector<double> times;
      for (int r = 0; r < options_.repeat; ++r) {
        std::vector<tessTensor> again(fn.num_results());
        std::vector<uint64_t> scalars_again(fn.num_results());
        std::vector<void*> slots;
        for (size_t i = 0; i < fn.num_results(); ++i)
          slots.push_back(fn.result(i).is(ir::TypeKind::MemRef) ? static_cast<void*>(&again[i])
                                                                : static_cast<void*>(&scalars_again[i]));
        auto start = std::chrono::steady_clock::now();
        check(tessHostCall(context, entry, pointers.data(), slots.data()), "timing '" + name + "'");
        check(tessDeviceSynchronize(device), "timing '" + name + "'");
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        for (size_t i = 0; i < fn.num_results(); ++i)
          if (fn.result(i).is(ir::TypeKind::MemRef)) tessHostFreeTensor(context, &again[i]);
      }
      std::sort(times.begin(), times.end());
      std::printf("time: %s: min %.6f ms, median %.6f ms over %d calls\n", name.c_str(), times.front(),
                  times[times.size() / 2], options_.repeat);
    }
    // Under mpirun every rank runs the function; as with a program's ts.save
    // and print, the job's output is rank 0's (docs/distributed.md).
    int job_rank = 0;
    tessJobRank(&job_rank);
    for (size_t i = 0; i < fn.num_results(); ++i) {
      bool tensor = fn.result(i).is(ir::TypeKind::MemRef);
      // A number (`return 2.5`, `return x[0, 0]`) is written as a 0-d array.
      npy::Array array = tensor ? download_result(device, results[i]) : scalar_result(fn.result(i), scalars[i]);
      for (const auto& [out, path] : outs_)
        if (out == result_names[i] && job_rank == 0) {
          if (!write_output(path, npy::serialize(array), error)) fail("--out " + out + "=" + path + ": " + error);
        }
      for (const std::string& printed : options_.prints)
        if (printed == result_names[i] && job_rank == 0) print_tensor(printed, "", array, {});
      if (tensor) tessHostFreeTensor(context, &results[i]);
    }
    tessHostContextDestroy(context);
    for (Argument& a : arguments_)
      if (a.device) tessFree(device, a.device);
    return kExitOk;
  }

  // A returned number as a 0-d .npy array: its bytes are the low bytes of
  // the 8-byte result slot (little-endian); bf16, fp8, fp6, fp4 as float32.
  npy::Array scalar_result(ir::Type type, int64_t slot) {
    npy::Array array;
    std::string dtype(scalar_info(type.scalar()).name);
    const numerics::Format* format = narrow_tensor_format(dtype);
    array.descr = format ? "<f4" : npy::descr_of(dtype);
    if (array.descr.empty()) fail("internal: no .npy type for a result of type " + dtype);
    std::vector<char> storage(sizeof slot);
    std::memcpy(storage.data(), &slot, sizeof slot);
    array.data.resize(static_cast<size_t>(array.element_bytes()));
    if (format) decode_storage(*format, storage, array);
    else std::memcpy(array.data.data(), storage.data(), array.data.size());
    return array;
  }

  // A returned tensor as a .npy array (bf16, fp8, fp6, fp4 as float32 values).
  npy::Array download_result(tessDevice device, const tessTensor& t) {
    npy::Array array;
    std::string dtype = tessDtypeName(t.dtype);
    const numerics::Format* format = narrow_tensor_format(dtype);
    array.descr = format ? "<f4" : npy::descr_of(dtype);
    array.shape.assign(t.shape, t.shape + t.rank);
    uint64_t bytes = 0;
    check(tessTensorStorageBytes(&t, &bytes), "result");
    std::vector<char> storage(bytes);
    if (bytes) check(tessMemcpyDtoH(device, storage.data(), t.data, bytes), "copying a result back");
    if (format) {
      array.data.resize(static_cast<size_t>(array.element_count()) * 4);
      decode_storage(*format, storage, array);
    } else {
      array.data = std::move(storage);
    }
    return array;
  }

  // Whether the device the run will open is the CPU (a failure to open
  // one is reported when it is opened, after the arguments are checked).
  bool runs_on_cpu() const {
    if (!options_.device.empty()) return options_.device.starts_with("cpu");
    tessDevice device = nullptr;
    char name[128];
    return tessGetDefaultDevice(&device) == TESS_SUCCESS &&
           tessDeviceGetName(device, name, sizeof name) == TESS_SUCCESS && std::string_view(name).starts_with("cpu");
  }

  tessDevice open_device() {
    tessDevice device = nullptr;
    if (options_.device.empty()) check(tessGetDefaultDevice(&device), "no device");
    else check(tessGetDeviceByName(options_.device.c_str(), &device), "--device " + options_.device);
    return device;
  }

  driver::CodegenOptions codegen_options() {
    driver::CodegenOptions codegen;
    codegen.opt_level = options_.opt_level;
    codegen.bounds_check = !options_.no_bounds_check;
    codegen.mma = options_.mma == "sync"    ? driver::Mma::Sync
                  : options_.mma == "wgmma" ? driver::Mma::Wgmma
                                            : driver::Mma::Auto;
    codegen.cpu_fibers = options_.cpu_lanes == "fibers";
    codegen.toolkit.cuda_path = options_.cuda_path;
    return codegen;
  }

  codegen::AotKernel find_kernel(std::vector<codegen::AotKernel> kernels) {
    // An autotuned kernel is named by its default variant (the others are
    // the tuner's: variants_).
    std::erase_if(kernels, [](const codegen::AotKernel& k) { return !k.autotune_of.empty() && !k.autotune_default; });
    std::string names;
    for (const codegen::AotKernel& k : kernels) names += (names.empty() ? "'" : ", '") + k.name + "'";
    if (kernels.empty()) fail("'" + options_.input + "' has no @kernel function");
    if (options_.kernel.empty()) {
      if (kernels.size() > 1) fail("'" + options_.input + "' has several kernels (" + names + "): pick one with --kernel");
      kernel_name_ = kernels[0].name;
      return std::move(kernels[0]);
    }
    for (codegen::AotKernel& k : kernels)
      if (k.name == options_.kernel) {
        kernel_name_ = options_.kernel;
        return std::move(k);
      }
    fail("no kernel named '" + options_.kernel + "' in '" + options_.input + "' (it has " + names + ")");
  }

  std::string describe(const Parameter& p) const { return codegen::describe_parameter(signature_, p); }

  std::vector<uint32_t> declared_group() {
    std::vector<uint32_t> group(signature_.group.begin(), signature_.group.end());
    if (!options_.group.empty() && parse_shape(options_.group, "group") != group) {
      std::string declared;
      for (uint32_t axis = 0; axis < signature_.group_rank; ++axis)
        declared += (declared.empty() ? "" : ",") + std::to_string(signature_.group[axis]);
      fail("--group " + options_.group + ": '" + kernel_name_ + "' is compiled for groups of (" + declared +
           ") lanes (its tile[...] declaration); leave --group out or pass that shape");
    }
    return group;
  }

  const Parameter& parameter(const std::string& name, const char* option) {
    for (const Parameter& p : parameters_)
      if (p.name == name) return p;
    std::string list;
    for (const Parameter& p : parameters_) list += (list.empty() ? "" : ", ") + describe(p);
    fail(std::string("--") + option + " " + name + ": '" + kernel_name_ + "' has no parameter '" + name +
         "' (its parameters: " + list + ")");
  }

  // `results`: the names --out and --print may give for a @jit function's
  // results; empty for a kernel (whose mut tensors are its outputs).
  void bind_arguments(const std::vector<std::string>& results = {}) {
    std::map<std::string, std::string> given;
    for (const std::string& text : options_.args) {
      auto [name, value] = split_binding(text, "arg");
      parameter(name, "arg");
      if (!given.emplace(name, value).second) fail("--arg " + name + " is given twice");
    }
    arguments_.resize(parameters_.size());
    std::map<std::string, std::pair<int64_t, std::string>> symbols;  // symbol -> (value, where it was bound)
    for (size_t i = 0; i < parameters_.size(); ++i) {
      const Parameter& p = parameters_[i];
      auto it = given.find(p.name);
      // A generic function's instance made for a constant argument (the
      // program's `s(x, 0)`) computes with that value: it is the default,
      // and another is refused rather than ignored.
      auto constant = constant_arguments_.find(p.name);
      if (!p.tensor && constant != constant_arguments_.end()) {
        parse_scalar(p, constant->second, arguments_[i].scalar);
        if (it == given.end()) continue;
        alignas(8) unsigned char asked[8] = {};
        parse_scalar(p, it->second, asked);
        if (std::memcmp(asked, arguments_[i].scalar, sizeof asked) != 0)
          fail("--arg " + p.name + "=" + it->second + ": '" + kernel_name_ + "' runs as its first call made it, with the "
               "constant argument " + p.name + "=" + constant->second + " compiled in (docs/language/graph.md, "
               "\"Constant arguments\"); annotate its parameters to run it with other values");
        continue;
      }
      if (it == given.end())
        fail("missing --arg " + p.name + "=" + (p.tensor ? "FILE.npy" : "VALUE") + " for the parameter '" + describe(p) + "'");
      if (!p.tensor) {
        parse_scalar(p, it->second, arguments_[i].scalar);
        continue;
      }
      std::string error;
      std::optional<npy::Array> array = npy::read(it->second, error);
      if (!array) {
        // `--arg x=3.0` for a tensor: a scalar given where a file belongs.
        const char* text = it->second.c_str();
        char* end = nullptr;
        std::strtod(text, &end);
        bool number = *text != '\0' && end != nullptr && *end == '\0' && error.starts_with("cannot open");
        if (number)
          fail("--arg " + p.name + "=" + it->second + ": the parameter '" + describe(p) +
               "' is a tensor, read from a .npy file (a number is for a scalar parameter)");
        fail("--arg " + p.name + ": " + error);
      }
      std::string dtype = npy::tessera_dtype_of(array->descr);
      const numerics::Format* format = narrow_tensor_format(p.dtype);
      if (format && !narrow_accepts(*format, dtype))
        fail("--arg " + p.name + "=" + it->second + ": the file holds " + dtype + " ('" + array->descr + "'), the parameter '" +
             describe(p) + "' wants float32 values or " + (format->bits() > 8 ? "uint16" : "uint8") + " " + p.dtype +
             " codes");
      if (!format && dtype != p.dtype)
        fail("--arg " + p.name + "=" + it->second + ": the file holds " + dtype + " ('" + array->descr + "'), the parameter '" +
             describe(p) + "' wants " + p.dtype);
      if (array->shape.size() != p.dims.size())
        fail("--arg " + p.name + "=" + it->second + ": the file holds a rank-" + std::to_string(array->shape.size()) +
             " array, the parameter '" + describe(p) + "' has rank " + std::to_string(p.dims.size()));
      for (size_t d = 0; d < p.dims.size(); ++d) {
        int64_t spec = p.dims[d];
        int64_t extent = array->shape[d];
        std::string where = p.name + " dimension " + std::to_string(d);
        if (extent > INT32_MAX)
          fail("--arg " + p.name + "=" + it->second + ": " + where + " is " + std::to_string(extent) +
               ", more than 2147483647: kernels index with 32-bit sizes (docs/abi.md, \"Sizes\")");
        if (spec >= 0 && extent != spec)
          fail("--arg " + p.name + "=" + it->second + ": " + where + " is " + std::to_string(extent) + ", the parameter '" +
               describe(p) + "' wants " + std::to_string(spec));
        if (spec < 0 && spec != INT64_MIN) {
          const std::string& symbol = signature_.symbols[static_cast<size_t>(-1 - spec)];
          auto [bound, inserted] = symbols.emplace(symbol, std::make_pair(extent, where));
          if (!inserted && bound->second.first != extent)
            fail("dimension mismatch: '" + symbol + "' is " + std::to_string(bound->second.first) + " from " +
                 bound->second.second + " but " + std::to_string(extent) + " from " + where);
        }
      }
      if (format) {
        arguments_[i].format = format;
        arguments_[i].storage = encode_storage(*format, *array, "--arg " + p.name + "=" + it->second);
      }
      arguments_[i].array = std::move(*array);
    }
    for (const std::string& text : options_.outs) {
      auto [name, path] = split_binding(text, "out");
      if (!results.empty()) {
        if (std::find(results.begin(), results.end(), name) == results.end())
          fail("--out " + name + ": '" + kernel_name_ + "' returns " +
               (results.size() == 1 ? std::string("one result, 'result'")
                                    : std::to_string(results.size()) + " results, 'result.0' to 'result." +
                                          std::to_string(results.size() - 1) + "'"));
        std::string error;
        if (!output_path_usable(path, error)) fail("--out " + name + "=" + path + ": cannot write there: " + error);
        outs_.emplace_back(name, path);
        continue;
      }
      const Parameter& p = parameter(name, "out");
      if (!p.tensor || !p.mut) fail("--out " + name + ": only a mut tensor parameter is written by the kernel ('" + describe(p) + "')");
      // Before anything runs: a long kernel must not run for nothing.
      std::string error;
      if (!output_path_usable(path, error)) fail("--out " + name + "=" + path + ": cannot write there: " + error);
      outs_.emplace_back(name, path);
    }
    for (const std::string& name : options_.prints) {
      if (!results.empty()) {
        if (std::find(results.begin(), results.end(), name) == results.end())
          fail("--print " + name + ": '" + kernel_name_ + "' has no result '" + name + "'");
        continue;
      }
      const Parameter& p = parameter(name, "print");
      if (!p.tensor) fail("--print " + name + ": not a tensor parameter ('" + describe(p) + "')");
    }
  }

  // Times N launches with events (the outputs hold the checked run's results:
  // the timed runs see its outputs as inputs).
  void time_launches(tessDevice device, tessKernel handle, std::vector<uint32_t>& grid, std::vector<uint32_t>& group,
                     std::vector<void*>& pointers) {
    tessEvent start = nullptr, end = nullptr;
    check(tessEventCreate(device, &start), "event");
    check(tessEventCreate(device, &end), "event");
    std::vector<float> times;
    for (int i = 0; i < options_.repeat; ++i) {
      check(tessEventRecord(start, nullptr), "event");
      check(tessLaunchKernel(handle, grid.data(), group.data(), 0, nullptr, pointers.data()), "timed launch");
      check(tessEventRecord(end, nullptr), "event");
      check(tessEventSynchronize(end), "event");
      float ms = 0;
      check(tessEventElapsedTime(&ms, start, end), "event");
      times.push_back(ms);
    }
    tessEventDestroy(start);
    tessEventDestroy(end);
    std::sort(times.begin(), times.end());
    std::printf("time: %s: min %.6f ms, median %.6f ms over %d launches\n", kernel_name_.c_str(),
                static_cast<double>(times.front()), static_cast<double>(times[times.size() / 2]), options_.repeat);
  }

  std::vector<void*> upload(tessDevice device) {
    std::vector<void*> pointers;
    for (size_t i = 0; i < parameters_.size(); ++i) {
      Argument& a = arguments_[i];
      if (!parameters_[i].tensor) {
        pointers.push_back(a.scalar);
        continue;
      }
      std::vector<char>& bytes = a.format ? a.storage : a.array.data;
      check(tessMalloc(device, bytes.size(), &a.device), "allocating " + parameters_[i].name);
      if (!bytes.empty())
        check(tessMemcpyHtoD(device, a.device, bytes.data(), bytes.size()), "copying " + parameters_[i].name);
      auto dtype = static_cast<tessDtype>(parameters_[i].dtype_code);  // from the signature
      check(tessTensorMakeContiguous(a.device, dtype, static_cast<int32_t>(a.array.shape.size()), a.array.shape.data(),
                                     &a.view),
            "tensor " + parameters_[i].name);
      void* slots[1 + 2 * TESS_MAX_RANK];
      size_t count = 0;
      check(tessTensorKernelArgs(&a.view, slots, std::size(slots), &count), "tensor " + parameters_[i].name);
      pointers.insert(pointers.end(), slots, slots + count);
    }
    return pointers;
  }

  // On a GPU, the kernel's contiguous variant when the tensors allow it
  // (docs/abi.md, "Contiguous variants"; the CPU target's kernels pick for
  // themselves). After upload: the views are the device's.
  std::string launched_kernel(tessDevice device, const std::string& name) {
    tessDeviceKind kind = TESS_DEVICE_CPU;
    check(tessDeviceGetKind(device, &kind), "device");
    if (kind == TESS_DEVICE_CPU) return name;
    std::vector<const tessTensor*> tensors;
    std::vector<uint8_t> writes;
    for (size_t i = 0; i < parameters_.size(); ++i)
      if (parameters_[i].tensor) {
        tensors.push_back(&arguments_[i].view);
        writes.push_back(parameters_[i].mut ? 1 : 0);
      }
    int applies = 0;
    check(tessContiguousVariantApplies(tensors.data(), writes.data(), tensors.size(), &applies), "tensors");
    return applies && !tensors.empty() ? name + TESS_CONTIGUOUS_VARIANT_SUFFIX : name;
  }

  // The variant of the autotuned kernel to launch, from the tuner: the
  // cache's choice for this key, else every variant timed with these
  // arguments (the mut tensors are uploaded again afterwards, so the real
  // run sees the inputs), or the default point with TESSERA_AUTOTUNE=0.
  const codegen::AotKernel& tune(tessDevice device, const char* device_name, tessModule module,
                                 std::vector<uint32_t>& group, std::vector<void*>& pointers) {
    std::vector<codegen::AotKernel>& variants = variants_;
    for (const codegen::AotKernel& k : all_signatures_)
      if (k.autotune_of == kernel_name_) variants.push_back(k);
    std::sort(variants.begin(), variants.end(),
              [](const codegen::AotKernel& a, const codegen::AotKernel& b) { return a.point_index < b.point_index; });
    std::vector<std::string> points;
    size_t default_index = 0;
    for (size_t v = 0; v < variants.size(); ++v) {
      std::string point;
      for (size_t k = 0; k < variants[v].knobs.size() && k < variants[v].knob_values.size(); ++k)
        point += (k ? ", " : "") + variants[v].knobs[k] + "=" + std::to_string(variants[v].knob_values[k]);
      points.push_back(point);
      if (variants[v].autotune_default) default_index = v;
    }
    std::vector<const char*> point_texts;
    for (const std::string& p : points) point_texts.push_back(p.c_str());
    // The key: the tensors (bucketed extents, or key=(...)'s dimensions).
    std::vector<tessTuneTensor> tensors;
    std::vector<tessTuneDimension> dimensions;
    for (size_t i = 0; i < parameters_.size(); ++i)
      if (parameters_[i].tensor)
        tensors.push_back({parameters_[i].name.c_str(), static_cast<tessDtype>(parameters_[i].dtype_code),
                           static_cast<int32_t>(arguments_[i].array.shape.size()), arguments_[i].array.shape.data()});
    for (const std::string& name : signature_.autotune_key)
      dimensions.push_back({name.c_str(), symbol_value(name)});
    char key[4096];
    check(tessTuneMakeKey(tensors.data(), tensors.size(), signature_.autotune_key.empty() ? nullptr : dimensions.data(),
                          dimensions.size(), "tesserac " TESSERA_VERSION, key, sizeof key),
          "the tuning key");
    struct Launches {
      std::vector<tessKernel> handles;
      std::vector<std::vector<uint32_t>> grids;  // each variant's (--grid may depend on the knobs)
      std::vector<uint32_t>* group;
      std::vector<void*>* pointers;
      tessDevice device;
    } launches{{}, {}, &group, &pointers, device};
    for (const codegen::AotKernel& v : variants) {
      tessKernel handle = nullptr;
      check(tessModuleGetKernel(module, launched_kernel(device, v.name).c_str(), &handle), "kernel lookup");
      launches.handles.push_back(handle);
      launches.grids.push_back(grid_for(v));
    }
    tessTuneRequest request{};
    request.kernel = kernel_name_.c_str();
    request.key = key;
    request.device = device_name;
    request.variants = point_texts.data();
    request.variant_count = point_texts.size();
    request.default_variant = default_index;
    request.user = &launches;
    request.run = [](void* user, size_t v) -> tessStatus {
      auto* l = static_cast<Launches*>(user);
      tessStatus s = tessLaunchKernel(l->handles[v], l->grids[v].data(), l->group->data(), 0, nullptr, l->pointers->data());
      return s != TESS_SUCCESS ? s : tessDeviceSynchronize(l->device);
    };
    request.timing_device = device;  // events; L2 flushed between runs on a GPU
    request.force = options_.retune || options_.tune_only;
    request.cache_file = options_.tune_output.empty() ? nullptr : options_.tune_output.c_str();
    tessTuneResult result{};
    check(tessTune(&request, &result), "tuning '" + kernel_name_ + "' on " + device_name);
    // The timing runs wrote the mut tensors: the real run starts from the inputs.
    for (size_t i = 0; i < parameters_.size(); ++i) {
      Argument& a = arguments_[i];
      std::vector<char>& bytes = a.format ? a.storage : a.array.data;
      if (parameters_[i].tensor && parameters_[i].mut && !bytes.empty() && result.source == TESS_TUNE_TIMED)
        check(tessMemcpyHtoD(device, a.device, bytes.data(), bytes.size()), "copying " + parameters_[i].name);
    }
    char path[4096] = "";
    if (!options_.tune_output.empty())
      std::snprintf(path, sizeof path, "%s", options_.tune_output.c_str());
    else
      check(tessTuneCachePath(device_name, path, sizeof path), "the tuning cache");
    const std::string& chosen = points[result.chosen];
    if (!options_.quiet || options_.tune_only) {
      switch (result.source) {
        case TESS_TUNE_DEFAULT:
          std::fprintf(stderr, "tesserac: '%s' at %s, the default point (TESSERA_AUTOTUNE=0)\n", kernel_name_.c_str(),
                       chosen.c_str());
          break;
        case TESS_TUNE_CACHE:
          std::fprintf(stderr, "tesserac: '%s' at %s from the tuning cache %s (key %s)\n", kernel_name_.c_str(),
                       chosen.c_str(), path, key);
          break;
        case TESS_TUNE_TIMED:
          std::fprintf(stderr,
                       "tesserac: tuned '%s' for key %s: %s, median %.4f ms (%zu variants timed in %.1f ms), written to %s\n",
                       kernel_name_.c_str(), key, chosen.c_str(), result.chosen_median_ms, variants.size(),
                       result.tuning_ms, path);
          break;
        case TESS_TUNE_RANK0:
          std::fprintf(stderr, "tesserac: '%s' at %s, rank 0's choice (key %s)\n", kernel_name_.c_str(),
                       chosen.c_str(), key);
          break;
      }
    }
    return variants[result.chosen];
  }

  // --grid for the kernel (an autotuned kernel: for one variant). Plain
  // numbers, or expressions of the symbolic dimensions and the variant's
  // knobs (grid_expression.h).
  std::vector<uint32_t> grid_for(const codegen::AotKernel& kernel) {
    if (options_.grid.find_first_not_of("0123456789x, ") == std::string::npos) return parse_shape(options_.grid, "grid");
    std::map<std::string, int64_t> names;
    for (size_t i = 0; i < parameters_.size(); ++i)
      for (size_t d = 0; d < parameters_[i].dims.size() && parameters_[i].tensor; ++d) {
        int64_t spec = parameters_[i].dims[d];
        if (spec < 0 && spec != INT64_MIN) names[signature_.symbols[static_cast<size_t>(-1 - spec)]] = arguments_[i].array.shape[d];
      }
    for (size_t k = 0; k < kernel.knobs.size() && k < kernel.knob_values.size(); ++k)
      names[kernel.knobs[k]] = kernel.knob_values[k];
    std::string error;
    std::optional<std::vector<std::string>> axes = split_grid_axes(options_.grid, error);
    if (!axes) fail("--grid '" + options_.grid + "': " + error);
    std::vector<uint32_t> grid;
    for (const std::string& axis : *axes) {
      std::optional<int64_t> v = evaluate_grid_axis(axis, names, error);
      if (!v) fail("--grid '" + options_.grid + "': " + error);
      grid.push_back(static_cast<uint32_t>(*v));
    }
    while (grid.size() < 3) grid.push_back(1);
    return grid;
  }

  // The value of the symbolic dimension `name` in the bound arguments.
  int64_t symbol_value(const std::string& name) {
    for (size_t i = 0; i < parameters_.size(); ++i)
      for (size_t d = 0; d < parameters_[i].dims.size() && parameters_[i].tensor; ++d) {
        int64_t spec = parameters_[i].dims[d];
        if (spec < 0 && spec != INT64_MIN && signature_.symbols[static_cast<size_t>(-1 - spec)] == name)
          return arguments_[i].array.shape[d];
      }
    fail("key '" + name + "': no tensor argument has that dimension");
  }

  void download(tessDevice device) {
    for (size_t i = 0; i < parameters_.size(); ++i) {
      Argument& a = arguments_[i];
      std::vector<char>& bytes = a.format ? a.storage : a.array.data;
      if (parameters_[i].tensor && parameters_[i].mut && !bytes.empty())
        check(tessMemcpyDtoH(device, bytes.data(), a.device, bytes.size()), "copying " + parameters_[i].name + " back");
      if (a.format && parameters_[i].mut) decode_storage(*a.format, a.storage, a.array);
    }
  }

  void write_outputs() {
    for (const auto& [name, path] : outs_) {
      std::string error;
      if (!write_output(path, npy::serialize(argument(name).array), error))
        fail("--out " + name + "=" + path + ": " + error);
    }
    for (const std::string& name : options_.prints) {
      const Argument& a = argument(name);
      print_tensor(name, parameter(name, "print").dtype, a.array, a.storage);
    }
  }

  Argument& argument(const std::string& name) {
    for (size_t i = 0; i < parameters_.size(); ++i)
      if (parameters_[i].name == name) return arguments_[i];
    fail("no parameter '" + name + "'");
  }

  const RunOptions& options_;
  std::string kernel_name_;
  codegen::AotKernel signature_;
  std::vector<codegen::AotKernel> all_signatures_;
  std::vector<codegen::AotKernel> variants_;  // an autotuned kernel's, by point
  std::vector<Parameter> parameters_;
  std::map<std::string, std::string> constant_arguments_;  // --func of an instance: its constant arguments' text
  std::vector<Argument> arguments_;
  std::vector<std::pair<std::string, std::string>> outs_;
};

}  // namespace

namespace {

int run_or_tune(int argc, char** argv, bool tune) {
  CLI::App app{tune ? "tesserac tune: time every variant of an autotuned kernel with these arguments and write the "
                      "choice to a tuning cache file (docs/autotuning.md)"
                    : "tesserac run: compile a .tsr file and run its program (its top-level statements), one @jit "
                      "function (--func) or one kernel (--kernel, --grid), on the GPU or on the CPU target without one",
               tune ? "tesserac tune" : "tesserac run"};
  RunOptions options;
  options.tune_only = tune;
  if (tune)
    app.add_option("-o,--output", options.tune_output,
                   "The cache file to write (entries it has for other keys are kept; default: the device's cache, "
                   "TESSERA_CACHE_DIR/DEVICE.json)");
  app.add_option("input", options.input, "The .tsr file")->required();
  app.add_option("-D", options.defines, "NAME=VALUE: give a module-level constant (NAME = ... at the top level) this value")
      ->allow_extra_args(false);  // one NAME=VALUE per -D, as a C compiler's: `-D N=2 FILE` leaves FILE alone
  app.add_option("--stdlib-dir", options.stdlib_dir,
                 "Where the stdlib's compiled kernels are (default: TESSERA_STDLIB_DIR, the installed ones)");
  app.add_option("--func", options.func, "The @jit function to run (results: --out result=FILE.npy, or result.0, result.1, ... for a tuple)");
  app.add_option("--kernel", options.kernel, "The @kernel to run (may be left out when the file has one)");
  app.add_option("--grid", options.grid,
                 "Groups per axis: G, GxH or G,H,K (kernels); or expressions of the symbolic dimensions and an "
                 "autotuned kernel's knobs, 'cdiv(N, BN), cdiv(M, BM)' (docs/autotuning.md)");
  app.add_option("--group", options.group, "Lanes per group (must be the kernel's declared group shape)");
  app.add_option("--arg", options.args, "NAME=FILE.npy for a tensor parameter, NAME=VALUE for a scalar");
  app.add_option("--out", options.outs, "NAME=FILE.npy: write the mut tensor NAME after the run");
  app.add_option("--print", options.prints, "Print the tensor NAME after the run (one line, row-major)");
  app.add_option("--device", options.device, "cpu, cuda or cuda:N (default: the first GPU that works, else cpu)");
  app.add_option("-O,--opt-level", options.opt_level, "Optimisation level 0-3 (default 3)")->check(CLI::Range(0, 3));
  app.add_option("--cuda-path", options.cuda_path, "CUDA Toolkit root for libdevice");
  app.add_option("--mma", options.mma, "Tensor-core instruction for tile.mma: auto, sync, wgmma (sm_90a on a compute capability 9.0 GPU); on the CPU, sync emulates mma.sync")
      ->check(CLI::IsMember({"auto", "sync", "wgmma"}));
  app.add_option("--cpu-lanes", options.cpu_lanes,
                 "On the CPU: loops (lanes run as loops between synchronisations, fibers where that is not handled) "
                 "or fibers (every kernel's lanes as fibers, for comparing the two)")
      ->check(CLI::IsMember({"loops", "fibers"}));
  app.add_flag("-q,--quiet", options.quiet, "Do not report where the kernel ran");
  app.add_flag("--no-bounds-check", options.no_bounds_check,
               "Compile without index checks (on by default: an out-of-bounds index fails the run with its .tsr location)");
  app.add_flag("--no-cpu-forms", options.no_cpu_forms,
               "On the CPU: graph code launches the stdlib kernels a GPU runs (gemm and its tuned points), not the "
               "CPU forms (gemm_cpu), to test or time them there");
  app.add_flag("--no-overlap-collectives", options.no_overlap_collectives,
               "Issue each collective where it stands, blocking, instead of overlapping it with the independent "
               "kernels after it (docs/distributed.md, \"Overlapping collectives\")");
  app.add_flag("--tune", options.retune,
               "An autotuned kernel: time its variants even when the tuning cache has this key (docs/autotuning.md)");
  app.add_option("--time", options.repeat,
                 "After the checked run, launch N more times and print the fastest and median launch times (benchmarks)")
      ->check(CLI::Range(1, 100000));
  options.diagnostics.add_to(app);
  try {
    app.parse(normalize_arguments(argc, argv, 1, {}));
  } catch (const CLI::Success& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  try {
    return Runner(options).run();
  } catch (const RunError& e) {
    std::fprintf(stderr, "tesserac %s: error: %s\n", tune ? "tune" : "run", e.message.c_str());
    return kExitUserError;
  }
}

}  // namespace

int run_command(int argc, char** argv) { return run_or_tune(argc, argv, false); }
int tune_command(int argc, char** argv) { return run_or_tune(argc, argv, true); }

}  // namespace tessera
