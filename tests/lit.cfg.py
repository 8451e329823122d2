# lit configuration for tesserac's file tests.
#
# Test files are .tsr programs whose comments hold the RUN lines and the
# FileCheck / -verify expectations. Substitutions:
#   %tesserac   the compiler under test
#   %tesserac-opt   IR text in, passes, IR text out
#   FileCheck, not   from LLVM's tools (llvm-22-tools)
import os
import platform
import shutil
import subprocess
import sys

import lit.formats

config.name = "tesserac"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tsr", ".ir"]
config.excludes = ["Inputs", "README.md", "lit.local.cfg"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tesserac_build_dir, "tests")

# %tesserac-opt first: lit substitutes in order and %tesserac is its prefix.
config.substitutions.append(("%tesserac-opt", config.tesserac_opt_path))
# %exec: runs a kernel's `# PY:` cases through `tesserac run` (tests/conformance/exec/).
config.substitutions.append(("%exec", "%s %s --tesserac %s" % (
    sys.executable, os.path.join(os.path.dirname(__file__), "conformance", "exec", "Inputs", "exec_check.py"),
    config.tesserac_path)))
# The host's architecture, for tests of the CPU target's code for a named CPU
# (--host-cpu=x86-64-v3).
if platform.machine() in ("x86_64", "AMD64"):
    config.available_features.add("x86_64")
for name in ("TESSERA_EXEC_DEVICE", "TESSERA_EXEC_MMA", "TESSERA_EXEC_CPU_LANES"):
    if name in os.environ:
        config.environment[name] = os.environ[name]
# A Python with NumPy for the stdlib tests (tests/stdlib/): lit's own, else
# the system's (/usr/bin/python3 with Debian's python3-numpy; CMake may have
# found another Python). Tests that need it say `REQUIRES: numpy` and are
# UNSUPPORTED without one.
def python_with_numpy():
    for candidate in (sys.executable, "/usr/bin/python3", shutil.which("python3")):
        if candidate and os.path.exists(candidate) and subprocess.call(
                [candidate, "-c", "import numpy"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
            return candidate
    return None


numpy_python = python_with_numpy()
if numpy_python:
    config.available_features.add("numpy")
    config.substitutions.append(("%numpy-python", numpy_python))
    # %jit: runs a graph-level test's `# NP:` cases (tests/conformance/jit/).
    config.substitutions.append(("%jit", "%s %s --tesserac %s" % (
        numpy_python, os.path.join(os.path.dirname(__file__), "conformance", "jit", "Inputs", "jit_check.py"),
        config.tesserac_path)))
# Root may make device nodes (mknod): tests of outputs written to a character
# device say `REQUIRES: mknod` and are UNSUPPORTED (skipped) otherwise.
def can_make_device_nodes():
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return False
    import stat
    import tempfile
    with tempfile.TemporaryDirectory() as scratch:
        try:
            os.mknod(os.path.join(scratch, "null"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            return True
        except OSError:
            return False


# Multi-rank programs (docs/distributed.md): `REQUIRES: mpirun` tests run
# `%mpirun -np N %tesserac run ...` and are UNSUPPORTED where Open MPI's
# launcher is absent. More ranks than cores need --oversubscribe; root needs
# --allow-run-as-root.
mpirun = shutil.which("mpirun")
if mpirun:
    config.available_features.add("mpirun")
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    config.substitutions.append(("%mpirun", mpirun + " --oversubscribe" + (" --allow-run-as-root" if root else "")))


# Debian 12's GCC 12 LeakSanitizer guesses the extent of a dlopen'ed
# library's thread-local block from a header glibc stopped writing (2.19);
# when the block lands 16 bytes into a page it scans a garbage range and its
# tracer dies with "Tracer caught signal 11" at exit (seen in 4-rank runs,
# whose Open MPI components are dlopen'ed with TLS, depending on where the
# heap falls). Not intercepting __tls_get_addr keeps leak checking and drops
# only that guess; LLVM 17's sanitizers no longer make it.
config.environment["ASAN_OPTIONS"] = ":".join(
    option for option in (os.environ.get("ASAN_OPTIONS", ""), "intercept_tls_get_addr=0") if option)


if can_make_device_nodes():
    config.available_features.add("mknod")
# %aot-bin: the C++ programs tests/aot/CMakeLists.txt builds from AOT objects.
config.substitutions.append(("%aot-bin", os.path.join(config.tesserac_build_dir, "tests", "aot")))
config.substitutions.append(("%tesserac", config.tesserac_path))
config.substitutions.append(("%FileCheck", config.filecheck_path))
config.environment["PATH"] = os.pathsep.join([config.llvm_tools_dir, config.environment.get("PATH", "")])
# Never colour diagnostics in tests, whatever the terminal.
config.environment["NO_COLOR"] = "1"
config.environment["TERM"] = "dumb"
# Every IR text a tool prints is parsed back and must print identically.
config.environment["TESSERA_CHECK_ROUND_TRIP"] = "1"
# No tuning (docs/autotuning.md): an autotuned kernel runs its default point,
# and nothing writes a tuning cache in $HOME. The tests of the tuner
# (conformance/autotune/) turn it on with TESSERA_AUTOTUNE=1 and a
# TESSERA_CACHE_DIR under %t.
config.environment["TESSERA_AUTOTUNE"] = "0"
# The diagnostic-coverage check sets this to collect every emitted kind.
if "TESSERA_DIAGNOSTIC_LOG" in os.environ:
    config.environment["TESSERA_DIAGNOSTIC_LOG"] = os.environ["TESSERA_DIAGNOSTIC_LOG"]
# ptxas from the CUDA Toolkit, when present: tests that assemble PTX say
# `REQUIRES: ptxas` and are reported UNSUPPORTED (skipped) without it.
ptxas = os.environ.get("TESSERA_PTXAS") or shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
fatbinary = shutil.which("fatbinary") or os.path.join(os.path.dirname(ptxas), "fatbinary")
if os.path.exists(fatbinary):
    config.available_features.add("fatbinary")
# libdevice (math functions for NVPTX) from the same toolkit.
cuda_root = os.environ.get("TESSERA_CUDA_ROOT", "/usr/local/cuda")
# libnvJitLink (in-process PTX assembly, --assembler=nvjitlink), where tesserac
# looks for it first.
if any(os.path.exists(os.path.join(cuda_root, "lib64", name)) for name in ("libnvJitLink.so.13", "libnvJitLink.so")):
    config.available_features.add("nvjitlink")
if os.path.exists(os.path.join(cuda_root, "nvvm", "libdevice", "libdevice.10.bc")):
    config.available_features.add("libdevice")
