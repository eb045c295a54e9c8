# Spack recipe for ultrapool. It lives in ultrapool's own repository and is
# kept in step with the project's CMake options by
# tests/packaging/check_spack_variants.py (ctest test_spack_variants): every
# option that selects a feature or an optional dependency is a variant below,
# mapped in cmake_args with define_from_variant; the options that are not
# variants are listed, with the reason, in that script.
#
# spack_repo/ultrapool/ beside this file is a Spack package repository
# (package API v2, Spack 1.0 and later) whose packages/ultrapool/package.py
# is this file: `spack repo add <ultrapool>/packaging/spack/spack_repo/ultrapool`.
# See docs/packaging.md.

from spack.package import *

try:  # Spack 1.0 and later: the build systems live in the builtin repository
    from spack_repo.builtin.build_systems.cmake import CMakePackage
except ImportError:  # older Spack exports them from spack.package (above)
    pass


class Ultrapool(CMakePackage):
    """A task runtime for C programs on HPC machines: a sharded, adaptive
    worker pool on pthreads and C11 atomics, task groups, weighted
    semaphores and channels, an OpenMP-style API written as plain C calls,
    GCC's OpenMP ABI (libgomp.so.1) on the pool, and an MPI mode."""

    # The project has no public address yet: neither README.md nor
    # CITATION.cff names one. The three addresses below are placeholders in
    # the reserved .invalid domain, to be filled in at the first release
    # (with the tag's commit, or a tarball's sha256, for 0.1.0).
    homepage = "https://ultrapool.invalid/"
    git = "https://ultrapool.invalid/ultrapool.git"
    url = "https://ultrapool.invalid/ultrapool-0.1.0.tar.gz"

    license("MIT")

    version("develop", branch="main")
    version("0.1.0", tag="v0.1.0")

    # Features and optional dependencies: one variant per CMake option.
    # ON asks CMake to require the dependency (UP_WITH_<X>=ON fails the
    # configure when it is missing), OFF leaves it out; neither lets CMake
    # pick up whatever the build machine happens to have.
    variant("hwloc", default=True, description="Shard plan and thread binding from hwloc")
    variant("sde", default=False, description="Pool counters as PAPI Software Defined Events")
    variant("openmp", default=True, description="parallel.h backend on the OpenMP runtime")
    variant("mpi", default=False, description="MPI mode: <ultrapool/mpi.h> and libultrapool_mpi")
    variant("debug", default=False, description="Internal assertions on the runtime's invariants")
    variant(
        "debug_level",
        default="2",
        values=("1", "2", "3"),
        when="+debug",
        description="Assertion level: 1 cheap, 2 lock-free invariants, 3 expensive walks",
    )

    depends_on("c", type="build")
    depends_on("cmake@3.16:", type="build")

    depends_on("hwloc@2.4:", when="+hwloc")
    # CMake finds hwloc through pkg-config only (cmake/Deps.cmake).
    depends_on("pkgconfig", type="build", when="+hwloc")
    # libsde and <sde_lib.h> are PAPI 7's stand-alone SDE library.
    depends_on("papi@7: +sde", when="+sde")
    depends_on("mpi", when="+mpi")
    # GCC brings libgomp and Spack's llvm its libomp; Apple's clang has no
    # OpenMP runtime of its own.
    depends_on("llvm-openmp", when="+openmp %apple-clang")

    # libgomp.so.1 and the thread binding are Linux-only; the rest is
    # portable POSIX, but only Linux is tested.
    conflicts("platform=windows", msg="ultrapool needs POSIX threads")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("UP_WITH_HWLOC", "hwloc"),
            self.define_from_variant("UP_WITH_SDE", "sde"),
            self.define_from_variant("UP_WITH_OPENMP", "openmp"),
            self.define_from_variant("UP_WITH_MPI", "mpi"),
            self.define_from_variant("UP_DEBUG", "debug"),
            self.define_from_variant("UP_DEBUG_LEVEL", "debug_level"),
            # Not variants (see tests/packaging/check_spack_variants.py):
            # the tests follow `spack install --test`; the benchmarks and
            # the libraries only they use are never built here, and are
            # pinned OFF so that CMake does not go looking for them.
            self.define("UP_BUILD_TESTS", self.run_tests),
            self.define("UP_BUILD_EXPERIMENTS", False),
            self.define("UP_BUILD_KERNELS", False),
            self.define("UP_WITH_LIKWID", False),
            # PAPI itself only serves the benchmarks and the SDE test, which
            # reads the counters back through it: on with +sde, which
            # depends on PAPI anyway.
            self.define("UP_WITH_PAPI", spec.satisfies("+sde")),
        ]
        if spec.satisfies("+mpi"):
            args.append(self.define("MPI_C_COMPILER", spec["mpi"].mpicc))
        return args

    def setup_run_environment(self, env):
        # The same variable as the module file that the install ships
        # (share/modulefiles/ultrapool/<version>.lua).
        env.set("ULTRAPOOL_ROOT", self.prefix)

    def test_topo_version(self):
        """ultrapool-topo reports the installed library's version"""
        topo = Executable(self.prefix.bin.join("ultrapool-topo"))
        out = topo("--version", output=str, error=str)
        assert out.startswith("ultrapool-topo "), out
