#include "codegen/toolkit.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace tessera::codegen {
namespace {

namespace fs = std::filesystem;

// A fresh directory for one tool run, removed with everything in it.
class ScratchDirectory {
 public:
  ScratchDirectory() {
    std::string pattern = (fs::temp_directory_path() / "tesserac-XXXXXX").string();
    if (::mkdtemp(pattern.data())) path_ = pattern;
  }
  ~ScratchDirectory() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  bool ok() const { return !path_.empty(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

bool write_file(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
  return static_cast<bool>(out);
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::string find_tool(const std::string& name, const std::string& explicit_path, const std::string& cuda_root) {
  std::error_code ec;
  if (!explicit_path.empty()) return fs::exists(explicit_path, ec) ? explicit_path : std::string();
  fs::path in_root = fs::path(cuda_root) / "bin" / name;
  if (fs::exists(in_root, ec)) return in_root.string();
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return "";
}

ToolRun run_tool(const std::string& program, const std::vector<std::string>& arguments) {
  ToolRun run;
  ScratchDirectory scratch;
  if (!scratch.ok()) return run;
  std::string log = scratch.file("output.txt");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv{const_cast<char*>(program.c_str())};
  for (const std::string& a : arguments) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return run;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  run.started = true;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.output = read_file(log).value_or("");
  return run;
}

std::optional<std::string> assemble_cubin(const std::string& ptxas, const std::string& ptx, const GpuArch& arch,
                                          int opt_level, const std::vector<std::string>& extra_options,
                                          std::string& cubin, std::string& messages) {
  ScratchDirectory scratch;
  if (!scratch.ok()) return std::string("cannot create a temporary directory");
  std::string in = scratch.file("kernels.ptx"), out = scratch.file("kernels.cubin");
  if (!write_file(in, ptx)) return "cannot write " + in;
  std::vector<std::string> args{"-arch=" + arch.name(), "-O" + std::to_string(opt_level)};
  args.insert(args.end(), extra_options.begin(), extra_options.end());
  args.insert(args.end(), {in, "-o", out});
  ToolRun run = run_tool(ptxas, args);
  if (!run.started) return "cannot run '" + ptxas + "'";
  if (run.exit_code != 0) return trimmed(run.output.empty() ? "exit code " + std::to_string(run.exit_code) : run.output);
  auto contents = read_file(out);
  if (!contents) return "ptxas wrote no output";
  cubin = std::move(*contents);
  messages = trimmed(run.output);
  return std::nullopt;
}

std::optional<std::string> make_fatbin(const std::string& fatbinary, const std::vector<FatbinImage>& images,
                                       std::string& fatbin) {
  ScratchDirectory scratch;
  if (!scratch.ok()) return std::string("cannot create a temporary directory");
  std::string out = scratch.file("kernels.fatbin");
  std::vector<std::string> args{"-64", "--create=" + out};
  for (size_t i = 0; i < images.size(); ++i) {
    const FatbinImage& image = images[i];
    std::string file = scratch.file("image" + std::to_string(i) + (image.is_ptx ? ".ptx" : ".cubin"));
    if (!write_file(file, image.contents)) return "cannot write " + file;
    std::string sm = std::to_string(image.arch.sm) + (image.arch.arch_specific ? "a" : "");
    args.push_back("--image3=kind=" + std::string(image.is_ptx ? "ptx" : "elf") + ",sm=" + sm + ",file=" + file);
  }
  ToolRun run = run_tool(fatbinary, args);
  if (!run.started) return "cannot run '" + fatbinary + "'";
  if (run.exit_code != 0) return trimmed(run.output.empty() ? "exit code " + std::to_string(run.exit_code) : run.output);
  auto contents = read_file(out);
  if (!contents) return "fatbinary wrote no output";
  fatbin = std::move(*contents);
  return std::nullopt;
}

}  // namespace tessera::codegen
