#!/usr/bin/env python3
"""aot.host-app-installed: installs the build tree (tesserac, the runtime,
the CMake package) into a fresh prefix, then configures examples/host-app in
an empty build directory against that prefix only, builds it and runs it.
This is what a user does (docs/aot.md); the build tree itself is never on
the app's search path. Exit 0 when the app reports that all results match."""
import argparse
import os
import shutil
import subprocess
import sys


def run(command, **kwargs):
    print("+ " + " ".join(command), flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)
    print(result.stdout, end="", flush=True)
    if result.returncode != 0:
        sys.exit(f"check_host_app: '{command[0]}' failed with exit code {result.returncode}")
    return result.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--generator", default="Ninja")
    parser.add_argument("--cxx", default="c++")
    parser.add_argument("--sanitize", default="0")
    args = parser.parse_args()

    shutil.rmtree(args.work, ignore_errors=True)
    prefix = os.path.join(args.work, "prefix")
    build = os.path.join(args.work, "build")
    run(["cmake", "--install", args.build_dir, "--prefix", prefix])
    configure = ["cmake", "-S", args.source, "-B", build, "-G", args.generator, f"-DCMAKE_PREFIX_PATH={prefix}",
                 f"-DCMAKE_CXX_COMPILER={args.cxx}", "-DCMAKE_BUILD_TYPE=Release"]
    if args.sanitize in ("1", "ON", "TRUE", "true"):
        # The installed runtime was built with the sanitizers: link their runtimes.
        flags = "-fsanitize=address,undefined"
        configure += [f"-DCMAKE_CXX_FLAGS={flags}", f"-DCMAKE_EXE_LINKER_FLAGS={flags}"]
    run(configure)
    run(["cmake", "--build", build])
    output = run([os.path.join(build, "host_app")])
    if "host-app: all results match" not in output:
        sys.exit("check_host_app: the app did not report matching results")
    # Editing the .tsr rebuilds it: touch it and check that tesserac runs again.
    os.utime(os.path.join(args.source, "kernels.tsr"))
    rebuilt = run(["cmake", "--build", build])
    if "tesserac -c kernels.tsr" not in rebuilt:
        sys.exit("check_host_app: touching kernels.tsr did not recompile it")
    print("check_host_app: ok")


if __name__ == "__main__":
    main()
