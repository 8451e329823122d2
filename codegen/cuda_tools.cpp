#include "codegen/cuda_tools.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace tessera::codegen {

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

namespace {

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

// Starts `program`: standard input from `input` (-1: tesserac's own),
// standard output and error to the file `log`. The process id, or -1.
pid_t spawn(const std::string& program, const std::vector<std::string>& arguments, int input, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (input >= 0) posix_spawn_file_actions_adddup2(&actions, input, STDIN_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv{const_cast<char*>(program.c_str())};
  for (const std::string& a : arguments) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return spawned == 0 ? pid : -1;
}

// The exit code of a child (128 + the signal when one ended it).
int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

std::string tool_path_problem(const std::string& path) {
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) return "does not exist";
  if (fs::is_directory(status)) return "is a directory";
  if (::access(path.c_str(), X_OK) != 0) return "is not executable";
  return "";
}

std::string find_tool(const std::string& name, const std::string& explicit_path, const std::string& cuda_root) {
  std::error_code ec;
  if (!explicit_path.empty()) return tool_path_problem(explicit_path).empty() ? explicit_path : std::string();
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
  pid_t pid = spawn(program, arguments, -1, log);
  if (pid < 0) return run;
  run.started = true;
  run.exit_code = wait_for(pid);
  run.output = read_file(log).value_or("");
  return run;
}

// ptxas reads its input file a second time, to embed the PTX text in the
// cubin (.nv_debug_ptx_txt), exactly when it keeps debug or line
// information; a pipe can be read only once.
bool ptxas_reads_input_once(const std::vector<std::string>& options) {
  for (const std::string& option : options)
    if (option == "-g" || option == "--device-debug" || option == "-lineinfo" || option == "--generate-line-info")
      return false;
  return true;
}

PtxasRun::PtxasRun(std::string ptxas, const GpuArch& arch, int opt_level, std::vector<std::string> options)
    : ptxas_(std::move(ptxas)) {
  arguments_ = {"-arch=" + arch.name(), "-O" + std::to_string(opt_level)};
  arguments_.insert(arguments_.end(), options.begin(), options.end());
  // On a thread of its own: the temporary directory and the spawn (the
  // caller waits in vfork until ptxas has been exec'd, 0.4 ms and at times
  // several) then overlap with the caller's work too.
  starter_ = std::thread([this, options = std::move(options)] { start(options); });
}

void PtxasRun::join_starter() {
  if (starter_.joinable()) starter_.join();
}

void PtxasRun::start(const std::vector<std::string>& options) {
  scratch_ = std::make_unique<ScratchDirectory>();
  if (!scratch_->ok()) return;
  // /dev/stdin needs /proc (it is /proc/self/fd/0); without it, a file.
  std::error_code ec;
  if (!ptxas_reads_input_once(options) || !fs::exists("/proc/self/fd/0", ec)) return;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  pid_ = spawn(ptxas_, with_files("/dev/stdin"), fds[0], scratch_->file("output.txt"));
  ::close(fds[0]);
  if (pid_ < 0) {
    ::close(fds[1]);
    return;
  }
  input_ = fds[1];
}

PtxasRun::~PtxasRun() {
  join_starter();
  if (input_ >= 0) ::close(input_);
  if (pid_ > 0) {  // never waited for: an error elsewhere ended the compilation
    ::kill(pid_, SIGKILL);
    wait_for(pid_);
  }
}

std::vector<std::string> PtxasRun::with_files(const std::string& input) const {
  std::vector<std::string> arguments = arguments_;
  arguments.insert(arguments.end(), {input, "-o", scratch_->file("kernels.cubin")});
  return arguments;
}

void PtxasRun::feed(const std::string& ptx) {
  join_starter();
  if (fed_) return;
  fed_ = true;
  if (!scratch_->ok()) return;
  if (input_ < 0) {  // no pipe: ptxas starts now, on a file
    std::string in = scratch_->file("kernels.ptx");
    if (!write_file(in, ptx)) {
      failure_ = "cannot write " + in;
      return;
    }
    pid_ = spawn(ptxas_, with_files(in), -1, scratch_->file("output.txt"));
    return;
  }
  // A ptxas that exits without reading everything (a failure) must not kill
  // tesserac with SIGPIPE: the write fails with EPIPE instead, and ptxas's
  // exit status and message say what happened.
  sigset_t pipe_signal, saved;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &saved);
  bool broken = false;
  for (size_t done = 0; done < ptx.size();) {
    ssize_t n = ::write(input_, ptx.data() + done, ptx.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      broken = errno == EPIPE;
      break;
    }
    done += static_cast<size_t>(n);
  }
  ::close(input_);
  input_ = -1;
  if (broken) {  // take the pending SIGPIPE before unblocking it
    timespec none{0, 0};
    sigtimedwait(&pipe_signal, nullptr, &none);
  }
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
}

std::optional<std::string> PtxasRun::finish(std::string& cubin, std::string& messages) {
  join_starter();
  if (!scratch_->ok()) return std::string("cannot create a temporary directory");
  if (!fed_) feed(std::string());
  if (failure_) return failure_;
  if (pid_ < 0) return "cannot run '" + ptxas_ + "'";
  int exit_code = wait_for(pid_);
  pid_ = -1;
  std::string output = read_file(scratch_->file("output.txt")).value_or("");
  if (exit_code != 0) return trimmed(output.empty() ? "exit code " + std::to_string(exit_code) : output);
  auto contents = read_file(scratch_->file("kernels.cubin"));
  if (!contents) return std::string("ptxas wrote no output");
  cubin = std::move(*contents);
  messages = trimmed(output);
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

std::map<std::string, int64_t> parse_spill_stores(std::string_view report) {
  std::map<std::string, int64_t> spills;
  std::string current;
  constexpr std::string_view properties = "Function properties for ";
  constexpr std::string_view stores = " bytes spill stores";
  size_t start = 0;
  while (start < report.size()) {
    size_t end = report.find('\n', start);
    if (end == std::string_view::npos) end = report.size();
    std::string_view line = report.substr(start, end - start);
    start = end + 1;
    if (size_t at = line.find(properties); at != std::string_view::npos) {
      std::string_view name = line.substr(at + properties.size());
      while (!name.empty() && (name.back() == '\r' || name.back() == ' ')) name.remove_suffix(1);
      current = std::string(name);
      continue;
    }
    size_t at = line.find(stores);
    if (at == std::string_view::npos || current.empty()) continue;
    // "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads"
    size_t digits_end = at, digits_start = at;
    while (digits_start > 0 && line[digits_start - 1] >= '0' && line[digits_start - 1] <= '9') --digits_start;
    if (digits_start == digits_end) continue;
    spills[current] = std::stoll(std::string(line.substr(digits_start, digits_end - digits_start)));
  }
  return spills;
}

}  // namespace tessera::codegen
