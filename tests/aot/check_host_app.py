#!/usr/bin/env python3
"""aot.host-app-installed: installs the build tree (tesserac, the runtime,
the CMake package) into a fresh prefix, then configures examples/host-app in
an empty build directory against that prefix only, builds it and runs it.
This is what a user does (docs/aot.md); the build tree itself is never on
the app's search path. Exit 0 when the app reports that all results match.

With --mesh-app and --mpiexec it also builds a program that uses meshes
(tests/aot/Inputs/mesh-app) against the same prefix and runs it alone and
under `mpiexec -np 2`: the installed runtime must find its installed MPI
plugin (docs/distributed.md)."""
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
    parser.add_argument("--mesh-app", help="the mesh app's source directory")
    parser.add_argument("--mpiexec", help="mpiexec, to run the mesh app on 2 ranks")
    parser.add_argument("--libdir", default="lib", help="CMAKE_INSTALL_LIBDIR")
    args = parser.parse_args()

    shutil.rmtree(args.work, ignore_errors=True)
    prefix = os.path.join(args.work, "prefix")
    build = os.path.join(args.work, "build")
    run(["cmake", "--install", args.build_dir, "--prefix", prefix])
    configure = ["cmake", "-S", args.source, "-B", build, "-G", args.generator, f"-DCMAKE_PREFIX_PATH={prefix}",
                 f"-DCMAKE_CXX_COMPILER={args.cxx}", "-DCMAKE_BUILD_TYPE=Release"]
    sanitizer_flags = []
    if args.sanitize in ("1", "ON", "TRUE", "true"):
        # The installed runtime was built with the sanitizers: link their runtimes.
        flags = "-fsanitize=address,undefined"
        sanitizer_flags = [f"-DCMAKE_CXX_FLAGS={flags}", f"-DCMAKE_EXE_LINKER_FLAGS={flags}"]
    configure += sanitizer_flags
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
    if args.mesh_app:
        check_mesh_app(args, prefix, sanitizer_flags)
    print("check_host_app: ok")


def check_mesh_app(args, prefix, sanitizer_flags):
    build = os.path.join(args.work, "mesh-app")
    run(["cmake", "-S", args.mesh_app, "-B", build, "-G", args.generator, f"-DCMAKE_PREFIX_PATH={prefix}",
         f"-DCMAKE_CXX_COMPILER={args.cxx}", "-DCMAKE_BUILD_TYPE=Release"] + sanitizer_flags)
    run(["cmake", "--build", build])
    app = os.path.join(build, "mesh_app")
    # Leaks: Open MPI's allocations outlive MPI_Finalize.
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    env.pop("TESSERA_MPI_PLUGIN", None)
    alone = run([app], env=env)
    if "mesh-app: rank 0 of 1 (loopback): collectives match" not in alone:
        sys.exit("check_host_app: the mesh app alone did not report matching results")
    if "mesh-app: rank 0: MPI plugin not loaded" not in alone:
        sys.exit("check_host_app: the mesh app alone loaded MPI")
    if args.mpiexec:
        # Open MPI refuses root without these (CI runs as root).
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        both = run([args.mpiexec, "--oversubscribe", "-np", "2", app], env=env)
        installed_plugin = os.path.realpath(os.path.join(prefix, args.libdir, "libtessera_rt_mpi.so"))
        for rank in (0, 1):
            if f"mesh-app: rank {rank} of 2 (MPI): collectives match" not in both:
                sys.exit(f"check_host_app: rank {rank} of the mesh app under mpiexec did not report matching results")
            line = f"mesh-app: rank {rank}: MPI plugin "
            loaded = both.split(line, 1)[1].split("\n", 1)[0] if line in both else ""
            if os.path.realpath(loaded) != installed_plugin:
                sys.exit(f"check_host_app: rank {rank} loaded the MPI plugin '{loaded}', not the installed "
                         f"{installed_plugin}")


if __name__ == "__main__":
    main()
