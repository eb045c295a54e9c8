#!/usr/bin/env python3
"""Runs libgomp's own host testsuite (GCC 12.2) against any libgomp.so.1.

The sources come from Debian's gcc-12-source package, fetched with
`apt-get download` and unpacked at test time into a cache folder; nothing
of them enters the repository. Each test is compiled once with the system
compiler (the ABI is GCC's, whatever runtime runs the binary), then the same
binary runs once per runtime under test, with LD_LIBRARY_PATH naming a folder
that holds that runtime's libgomp.so.1. The directives of each test decide
what is run and how, the way libgomp's DejaGnu harness reads them: only run
tests, their options, extra sources, environment, expected failure and
expected output; tests that need an offload device or a target property this
machine lacks are reported as unsupported.

Usage: tests/openmp/gomp_suite.py --runtime libgomp --runtime libomp --out DIR
       (see --help). Exit 0: every run test that passes on the reference
runtime (libgomp, when it is among the runtimes) passed on every runtime;
1: some did not; 2: usage; 77: a prerequisite is missing (skip).
"""

import argparse
import concurrent.futures
import fnmatch
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

SKIP = 77
TRIPLET = "x86_64-pc-linux-gnu"
DIRS = {  # exp name -> (folders whose tests it runs, source patterns)
    "c": (["libgomp.c", "libgomp.c-c++-common"], ["*.c"]),
    "c++": (["libgomp.c++", "libgomp.c-c++-common"], ["*.C", "*.c"]),
    "fortran": (["libgomp.fortran"],
                ["*.f", "*.F", "*.f90", "*.F90", "*.f95", "*.F95", "*.f03", "*.F03",
                 "*.f08", "*.F08"]),
}
# The optimisation levels DejaGnu cycles a Fortran `dg-do run` test through.
FORTRAN_TORTURE = ["-O0", "-O1", "-O2",
                   "-O3 -fomit-frame-pointer -funroll-loops -fpeel-loops -ftracer -finline-functions",
                   "-O3 -g", "-Os"]
NO_LIBGOMP = "does not load libgomp.so.1"
# A line by which a runtime explains an abort (libgomp, libomp, ultrapool).
RUNTIME_SAYS = re.compile(r"(?m)^(libgomp: |OMP: |ultrapool|Assertion failure at )")
SIGNAMES = {s.value: s.name for s in signal.Signals}


def die_skip(msg):
    print(f"gomp_suite: {msg}", file=sys.stderr)
    print("gomp_suite: SKIPPED (exit 77): a prerequisite is missing, nothing was tested",
          file=sys.stderr)
    sys.exit(SKIP)


def cache_root():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ultrapool")


# ---------------------------------------------------------------- sources

def fetch_sources(cache):
    """Returns the libgomp/testsuite folder, fetching and unpacking it once."""
    top = os.path.join(cache, "gcc-12-source")
    suite = os.path.join(top, "gcc-12.2.0", "libgomp", "testsuite")
    stamp = os.path.join(top, ".unpacked")
    if os.path.exists(stamp) and os.path.isdir(suite):
        return suite
    os.makedirs(top, exist_ok=True)
    debs = sorted(glob.glob(os.path.join(top, "gcc-12-source_*.deb")))
    if not debs:
        if not shutil.which("apt-get"):
            die_skip("no apt-get here to fetch gcc-12-source; put gcc-12-source_*.deb in " + top)
        print(f"gomp_suite: fetching gcc-12-source into {top} (about 83 MB)", file=sys.stderr)
        r = subprocess.run(["apt-get", "download", "gcc-12-source"], cwd=top,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        debs = sorted(glob.glob(os.path.join(top, "gcc-12-source_*.deb")))
        if r.returncode != 0 or not debs:
            die_skip("`apt-get download gcc-12-source` failed (no network or no such "
                     "package in the apt sources?):\n" + r.stdout.strip())
    if not shutil.which("dpkg-deb") or not shutil.which("xz"):
        die_skip("dpkg-deb and xz are needed to unpack " + debs[-1])
    # The .deb holds the upstream tarball; take only what the harness reads:
    # the testsuite, libgomp's headers it includes, GCC's top-level include
    # folder and the DejaGnu libraries (read by people, not by this script).
    print("gomp_suite: unpacking libgomp's testsuite", file=sys.stderr)
    members = ["gcc-12.2.0/libgomp/testsuite/*", "gcc-12.2.0/libgomp/*.h",
               "gcc-12.2.0/include/*", "gcc-12.2.0/gcc/testsuite/lib/*"]
    cmd = (f"dpkg-deb --fsys-tarfile {sh_quote(debs[-1])} | "
           "tar -x --wildcards -O './usr/src/gcc-12/gcc-12.2.0*.tar.xz' | "
           "tar -xJ --wildcards " + " ".join(sh_quote(m) for m in members))
    r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=top,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0 or not os.path.isdir(suite):
        die_skip("could not unpack the testsuite from " + debs[-1] + ":\n" + r.stdout.strip())
    open(stamp, "w").close()
    return suite


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


# ------------------------------------------------------- directive parsing

def tcl_words(s, braced=False):
    """Splits a Tcl list into words: braces nest and keep their text as is,
    double quotes and bare words get backslash substitution. With braced,
    each word comes as (text, was it braced)."""
    words, i, n = [], 0, len(s)
    while True:
        while i < n and s[i].isspace():
            i += 1
        if i >= n:
            return words
        if s[i] == "{":
            depth, j = 1, i + 1
            while j < n and depth:
                if s[j] == "\\":
                    j += 2
                    continue
                depth += {"{": 1, "}": -1}.get(s[j], 0)
                j += 1
            words.append((s[i + 1:j - 1], True) if braced else s[i + 1:j - 1])
            i = j
        elif s[i] == '"':
            text, i = tcl_substituted(s, i + 1, lambda c: c == '"')
            words.append((text, False) if braced else text)
            i += 1  # the closing quote
        else:
            text, i = tcl_substituted(s, i, str.isspace)
            words.append((text, False) if braced else text)


def tcl_substituted(s, i, end):
    """The text of s from i to the first character for which end holds (or
    to the end of s), with Tcl's backslash substitution; and where it
    stopped."""
    out, n = [], len(s)
    while i < n and not end(s[i]):
        if s[i] == "\\" and i + 1 < n:
            out.append(tcl_escape(s[i + 1]))
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out), i


def tcl_escape(c):
    return {"n": "\n", "r": "\r", "t": "\t"}.get(c, c)


# A directive is `{ dg-NAME args }` on one line, as DejaGnu greps for it.
DIRECTIVE = re.compile(r"\{\s+(dg-[-a-z0-9]+)((?:\s.*)?)\s\}")


def directives(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = DIRECTIVE.search(line)
            if m:
                yield m.group(1), tcl_words(m.group(2))


class Target:
    """What this machine offers, as libgomp's effective-target checks see a
    host-only x86-64 Linux build (no offload device, no offload compiler)."""

    def __init__(self):
        flags = ""
        try:
            with open("/proc/cpuinfo") as f:
                flags = f.read()
        except OSError:
            pass
        cpu = set(re.findall(r"\b\w+\b", flags.split("flags", 1)[1].split("\n", 1)[0])) \
            if "flags" in flags else set()
        true = ["size32plus", "tls", "tls_runtime", "sync_int_long", "sync_char_short",
                "lto", "shared", "fpic", "pthread", "large_long_double", "__float128",
                "lp64", "fd_truncate", "vect_simd_clones", "alias", "cas_char", "cas_int",
                "offload_device_shared_as", "fopenmp", "fgraphite"]
        false = ["offload_device", "offload_device_nonshared_as", "offload_target_nvptx",
                 "offload_target_amdgcn", "offload_device_nvptx", "offload_device_intel_mic",
                 "offload_device_any_intel_mic", "offload_target_any", "aarch64_tiny",
                 "skip-all-targets", "ia32", "ilp32", "openacc_nvidia_accel_selected",
                 "openacc_radeon_accel_selected", "openacc_host_selected", "openacc_cuda",
                 "openacc_cublas", "openacc_cudart"]
        self.et = {k: True for k in true}
        self.et.update({k: False for k in false})
        self.et["sse2_runtime"] = "sse2" in cpu
        self.et["avx_runtime"] = "avx" in cpu
        self.et["avx2_runtime"] = "avx2" in cpu
        self.et["run_expensive_tests"] = os.environ.get("GCC_TEST_RUN_EXPENSIVE", "") not in ("", "0")
        self.unknown = set()
        self.lang = "c"  # the language of the test being read

    def item(self, word):
        if word in ("c", "c++", "fortran"):
            return word == self.lang
        if word in self.et:
            return self.et[word]
        if "-" in word and ("*" in word or word.count("-") >= 2):
            return fnmatch.fnmatchcase(TRIPLET, word)
        self.unknown.add(word)
        return False

    def expr(self, text):
        """Evaluates a selector body: an expression with &&, || and !, or a
        list of alternatives (true when one is); braces group."""
        raw = tcl_words(text, braced=True)
        if not any(w in (("&&", False), ("||", False), ("!", False)) for w in raw):
            return any(self.word(w) for w in raw)
        pos = 0

        def term():
            nonlocal pos
            w = raw[pos]
            pos += 1
            return (not term()) if w == ("!", False) else self.word(w)

        val = term()
        while pos < len(raw):
            op = raw[pos][0]
            pos += 1
            rhs = term()
            val = (val and rhs) if op == "&&" else (val or rhs)
        return val

    def word(self, w):
        return self.expr(w[0]) if w[1] else self.item(w[0])

    def selector(self, sel):
        """`target X` or `xfail X`: returns (kind, true?)."""
        words = tcl_words(sel)
        if words and words[0] in ("target", "xfail"):
            return words[0], self.expr(sel.strip()[len(words[0]):])
        return "target", self.expr(sel)


def flags_match(patterns, flags):
    toks = flags.split()
    return any(p == "*" or any(fnmatch.fnmatchcase(t, p) for t in toks)
               or (" " in p and p in flags) for p in patterns)


class Test:
    def __init__(self, exp, suite, rel, torture=None):
        self.exp, self.suite, self.rel, self.torture = exp, suite, rel, torture
        self.src = os.path.join(suite, rel)
        self.id = f"{exp}/{rel}" + (f" {torture}" if torture else "")
        self.base = f"{exp}/{rel}"
        self.kind = "run"          # run | compile (not a run test) | unsupported
        self.why = ""
        self.options = None        # dg-options, replaces the default flags
        self.extra = []            # dg-additional-options
        self.sources = []          # dg-additional-sources
        self.env = {}
        self.shouldfail = False
        self.output = ""           # dg-output patterns, concatenated
        self.timeout = None
        self.factor = 1.0

    def flags(self):
        default = "-O2" if self.exp != "fortran" else ""
        opts = self.options if self.options is not None else default
        return " ".join(x for x in [self.torture or "", opts] + self.extra if x)


def read_test(test, target):
    """Applies the test's directives the way DejaGnu's dg-test does."""
    target.lang = test.exp
    dos = []
    skips = []
    for name, args in directives(test.src):
        if name == "dg-do":
            dos.append(args)
        elif name == "dg-options" and args:
            if len(args) < 2 or target.selector(args[1])[1]:
                test.options = args[0]
        elif name == "dg-additional-options" and args:
            if len(args) < 2 or target.selector(args[1])[1]:
                test.extra.append(args[0])
        elif name == "dg-additional-sources" and args:
            if len(args) < 2 or target.selector(args[1])[1]:
                test.sources += args[0].split()
        elif name == "dg-set-target-env-var" and len(args) >= 2:
            test.env[args[0]] = args[1]
        elif name == "dg-shouldfail":
            if len(args) < 2 or target.selector(args[1])[1]:
                test.shouldfail = True
        elif name == "dg-output" and args:
            if len(args) < 2 or target.selector(args[1])[1]:
                test.output += args[0]
        elif name == "dg-timeout" and args:
            test.timeout = float(args[0])
        elif name == "dg-timeout-factor" and args:
            test.factor = float(args[0])
        elif name == "dg-require-effective-target" and args:
            if (len(args) < 2 or target.selector(args[1])[1]) and not target.item(args[0]):
                skips.append(f"needs {args[0]}")
        elif name == "dg-require-alias":
            pass  # ELF aliases: always there on Linux
        elif name == "dg-skip-if" and len(args) >= 2:
            skips.append(("skip-if", args))
    # The last dg-do wins; none means run (dg-do-what-default).
    if dos:
        what = dos[-1]
        if not what or what[0] != "run":
            test.kind, test.why = "compile", f"dg-do {' '.join(what[:1])}"
            return test
        if len(what) >= 2:
            kind, ok = target.selector(what[1])
            if kind == "target" and not ok:
                test.kind, test.why = "unsupported", "dg-do run " + what[1].strip()
                return test
    flags = test.flags()
    for s in skips:
        if isinstance(s, str):
            test.kind, test.why = "unsupported", s
            return test
        args = s[1]
        include = tcl_words(args[2]) if len(args) > 2 else ["*"]
        exclude = tcl_words(args[3]) if len(args) > 3 else []
        if target.selector(args[1])[1] and flags_match(include, flags) \
                and not (exclude and flags_match(exclude, flags)):
            test.kind, test.why = "unsupported", "dg-skip-if " + args[1].strip()
            return test
    return test


def discover(suite, target, langs):
    tests = []
    for exp in langs:
        folders, pats = DIRS[exp]
        for folder in folders:
            root = os.path.join(suite, folder)
            for dirpath, dirnames, files in os.walk(root):
                dirnames.sort()
                for f in sorted(files):
                    if not any(fnmatch.fnmatchcase(f, p) for p in pats):
                        continue
                    if exp == "c++" and folder == "libgomp.c++" and not f.endswith(".C"):
                        continue
                    rel = os.path.relpath(os.path.join(dirpath, f), suite)
                    variants = [None]
                    if exp == "fortran":
                        with open(os.path.join(suite, rel), errors="replace") as fh:
                            variants = FORTRAN_TORTURE if "dg-do run" in fh.read() else ["-O"]
                    for v in variants:
                        tests.append(read_test(Test(exp, suite, rel, v), target))
    return tests


# ------------------------------------------------------------- runtimes

def prepare_runtimes(specs, work):
    """Each runtime becomes (name, folder holding libgomp.so.1)."""
    out = []
    for spec in specs:
        name, _, path = spec.partition("=") if "=" in spec else ("", "", spec)
        if path == "libgomp":
            lib = gcc_output(["gcc", "-print-file-name=libgomp.so.1"])
            if not lib or not os.path.exists(lib):
                die_skip("the system libgomp.so.1 was not found (package libgomp1)")
            out.append((name or "libgomp", link_folder(work, name or "libgomp", lib)))
        elif path == "libomp":
            libs = sorted(glob.glob("/usr/lib/llvm-*/lib/libomp.so.5"),
                          key=lambda p: int(re.search(r"llvm-(\d+)", p).group(1)))
            if not libs:
                die_skip("LLVM's libomp.so.5 was not found (package libomp-dev; scripts/setup test)")
            out.append((name or "libomp", link_folder(work, name or "libomp", libs[-1])))
        else:
            d = os.path.abspath(path)
            label = name or re.sub(r"[^A-Za-z0-9_.-]+", "_", path.strip("/")) or "dir"
            out.append((label, d))
    names = [n for n, _ in out]
    if len(set(names)) != len(names):
        sys.exit("gomp_suite: two runtimes have the same name; use NAME=DIR")
    return out


def link_folder(work, name, lib):
    d = os.path.join(work, "runtimes", name)
    os.makedirs(d, exist_ok=True)
    link = os.path.join(d, "libgomp.so.1")
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(os.path.realpath(lib), link)
    return d


def gcc_output(cmd):
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True).stdout.strip()
    except OSError:
        return ""


def loaded_libgomp(binary, env):
    """The file the dynamic loader maps for libgomp.so.1 when the binary runs
    in this environment (LD_TRACE_LOADED_OBJECTS: nothing of it runs); ""
    when the binary does not need libgomp.so.1 at all (GCC links it as
    needed: a test that calls nothing of the runtime runs without it),
    None when the loader could not tell."""
    e = dict(env, LD_TRACE_LOADED_OBJECTS="1")
    try:
        r = subprocess.run([binary], env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"libgomp\.so\.1 => (\S+)", r.stdout)
    if m:
        return m.group(1)
    return "" if r.returncode == 0 and "libc.so" in r.stdout else None


# -------------------------------------------------------- compile and run

class Builder:
    def __init__(self, bindir, sanitize, verbose):
        self.bindir, self.sanitize, self.verbose = bindir, sanitize, verbose
        self.include = []
        self.version = gcc_output(["gcc", "--version"]).split("\n")[0]
        self.quadmath = False
        # libgomp.exp adds libgomp's build folder, whose config.h one test
        # (affinity-1.c) reads; this stand-in says what configure finds on
        # glibc Linux for it.
        self.confdir = os.path.join(os.path.dirname(bindir), "include")
        os.makedirs(self.confdir, exist_ok=True)
        with open(os.path.join(self.confdir, "config.h"), "w") as f:
            f.write("/* Written by tests/openmp/gomp_suite.py: the build-tree facts the\n"
                    "   tests read, as on glibc Linux. */\n#define HAVE_PTHREAD_AFFINITY_NP 1\n")

    def command(self, test):
        libgomp = os.path.dirname(test.suite)
        gccinc = os.path.join(os.path.dirname(libgomp), "include")
        srcdir = os.path.dirname(test.src)
        sources = [test.src] + [os.path.join(srcdir, s) for s in test.sources]
        if test.exp == "c":
            cmd = ["gcc"] + sources
        elif test.exp == "c++":
            # c++.exp runs the C and C++ files alike as C++ (`-x c++`).
            cmd = ["g++", "-x", "c++"] + sources
        else:
            cmd = ["gfortran"] + sources
        # What libgomp.exp always adds, then -foffload=disable: a host-only
        # run (Debian's gcc names offload targets it has no compiler for).
        cmd += ["-fopenmp", f"-I{gccinc}", f"-I{libgomp}", f"-I{self.confdir}",
                "-fmessage-length=0",
                "-fno-diagnostics-show-caret", "-fdiagnostics-color=never",
                "-foffload=disable"]
        cmd += test.flags().split()
        if self.sanitize:
            cmd += [f"-fsanitize={self.sanitize}", "-g"]
        if test.exp == "fortran" and self.quadmath:
            cmd += ["-lquadmath"]
        cmd += ["-lm"]
        return cmd

    def build(self, test):
        """Returns (binary or None, log). Cached by the command and sources."""
        cmd = self.command(test)
        h = hashlib.sha1()
        h.update(self.version.encode())
        h.update("\0".join(cmd).encode())
        for s in [test.src] + test.sources:
            p = s if os.path.isabs(s) else os.path.join(os.path.dirname(test.src), s)
            try:
                with open(p, "rb") as f:
                    h.update(f.read())
            except OSError:
                pass
        d = os.path.join(self.bindir, h.hexdigest()[:20])
        binary = os.path.join(d, "a.out")
        logf = os.path.join(d, "compile.log")
        if os.path.exists(binary):
            return binary, ""
        os.makedirs(d, exist_ok=True)
        # Fortran modules land in the working folder: one folder per test.
        try:
            r = subprocess.run(cmd + ["-o", "a.out"], cwd=d, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=600,
                               env=dict(os.environ, LC_ALL="C", LANG="C"))
            log, ok = r.stdout, r.returncode == 0
        except subprocess.TimeoutExpired:
            log, ok = "compile timed out after 600 s", False
        with open(logf, "w") as f:
            f.write(" ".join(cmd) + "\n" + log)
        if not ok:
            if os.path.exists(binary):
                os.unlink(binary)
            return None, " ".join(cmd) + "\n" + log
        return binary, log


def classify(rc, out, timed_out):
    if timed_out:
        return "timeout"
    if re.search(r"version `[^']+' not found|symbol lookup error|undefined symbol|"
                 r"cannot open shared object file", out):
        return "load"
    if rc < 0:
        sig = SIGNAMES.get(-rc, str(-rc))
        if sig == "SIGABRT":
            # The runtime said why it stopped (an unsupported feature, its
            # own assertion), or the test's own check aborted.
            return "abort:runtime" if RUNTIME_SAYS.search(out) else "abort"
        return "crash:" + sig
    if rc == 66 and "ThreadSanitizer" in out:
        return "tsan"
    return f"exit:{rc}"


def run_one(test, binary, rname, folder, args, logdir):
    # The runtime's settings come from the test alone, never from the caller.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMP_", "GOMP_", "KMP_", "LIBOMP_", "UP_"))}
    env.update(LC_ALL="C", LANG="C")
    ld = env.get("LD_LIBRARY_PATH")
    env["LD_LIBRARY_PATH"] = folder + (":" + ld if ld else "")
    env.update(test.env)
    want = os.path.realpath(os.path.join(folder, "libgomp.so.1"))
    got = loaded_libgomp(binary, env)
    if got is None or (got and os.path.realpath(got) != want):
        return ("FAIL", "wrong-library", 0.0,
                f"libgomp.so.1 resolves to {got}, not {want}")
    limit = (test.timeout or args.timeout) * test.factor * args.timeout_factor
    work = tempfile.mkdtemp(prefix="run-", dir=logdir)
    t0 = time.monotonic()
    timed_out = False
    p = subprocess.Popen([binary], cwd=work, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        raw, _ = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(p.pid, signal.SIGKILL)
        raw, _ = p.communicate()
    secs = time.monotonic() - t0
    shutil.rmtree(work, ignore_errors=True)
    out = raw[:1 << 20].decode("utf-8", errors="replace")
    rc = p.returncode
    failed_run = timed_out or rc != 0
    if timed_out:
        verdict, cat = "FAIL", "timeout"
    elif test.shouldfail:
        cat = classify(rc, out, False)
        verdict, cat = ("PASS", "") if failed_run and cat != "load" else \
            ("FAIL", cat if failed_run else "should-fail-but-passed")
    elif failed_run:
        verdict, cat = "FAIL", classify(rc, out, False)
    else:
        verdict, cat = "PASS", ""
    if verdict == "PASS" and test.output and not output_matches(test.output, out):
        verdict, cat = "FAIL", "wrong-output"
    detail = "" if got else NO_LIBGOMP
    if verdict == "FAIL":
        detail = failure_detail(out, rc)
        if cat == "wrong-output":
            detail = "output does not match " + repr(test.output)[:150]
        name = re.sub(r"[^A-Za-z0-9_.+-]+", "_", test.id)
        with open(os.path.join(logdir, name + ".log"), "w") as f:
            f.write(f"test: {test.id}\nruntime: {rname} ({folder})\nbinary: {binary}\n"
                    f"env: {test.env}\nexit: {rc} timed_out={timed_out} secs={secs:.2f}\n"
                    f"category: {cat}\n--- output ---\n{out}")
    return verdict, cat, secs, detail


def failure_detail(out, rc):
    """One line that says why: the missing version, the runtime's message,
    else the last line of output."""
    m = re.search(r"version `[^']+' not found|undefined symbol: \S+", out)
    if m:
        return m.group(0)
    lines = [l.strip() for l in out.splitlines() if l.strip()]
    for l in lines:
        if re.search(r"error|assert|abort|fatal|ThreadSanitizer", l, re.I):
            return l[:200]
    return lines[-1][:200] if lines else f"no output, exit status {rc}"


def output_matches(pattern, out):
    try:
        return re.search(pattern, out, re.S) is not None
    except re.error:
        return pattern in out


# ----------------------------------------------------------------- report

def write_report(outdir, tests, runtimes, results, compile_fail, args, wall):
    """Writes results.tsv (one row per test and runtime) and run.json, then
    the summary from them."""
    with open(os.path.join(outdir, "results.tsv"), "w") as f:
        f.write("test\truntime\tresult\tcategory\tseconds\tdetail\n")
        for t in tests:
            for rname, _ in runtimes:
                if t.kind != "run":
                    res, cat, secs, det = ("UNSUPPORTED" if t.kind == "unsupported"
                                           else "NOT-RUN"), "", 0.0, t.why
                elif t.id in compile_fail:
                    res, cat, secs, det = "COMPILE-FAIL", "compile", 0.0, compile_fail[t.id]
                else:
                    res, cat, secs, det = results.get((t.id, rname), ("MISSING", "", 0, ""))
                det = det.replace("\t", " ").replace("\n", " ")
                f.write(f"{t.id}\t{rname}\t{res}\t{cat}\t{secs:.2f}\t{det}\n")
    meta = {"runtimes": [[n, d, os.path.realpath(os.path.join(d, "libgomp.so.1"))]
                         for n, d in runtimes],
            "sanitize": args.sanitize or "none", "timeout": args.timeout,
            "timeout_factor": args.timeout_factor, "jobs": args.jobs,
            "wall_seconds": round(wall), "subset": args.subset or "",
            "compiler": gcc_output(["gcc", "--version"]).split("\n")[0]}
    with open(os.path.join(outdir, "run.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return summarize(outdir)


def part_of(test_id):
    """The folder a test comes from, with the language it was compiled as."""
    exp, folder = test_id.split("/", 2)[:2]
    return f"{folder} ({exp})" if folder == "libgomp.c-c++-common" else folder


def summarize(outdir):
    """summary.md from results.tsv and run.json; returns (failures on a
    runtime that libgomp passes, the summary's lines)."""
    with open(os.path.join(outdir, "run.json")) as f:
        meta = json.load(f)
    rows = {}
    order = []
    with open(os.path.join(outdir, "results.tsv")) as f:
        next(f)
        for line in f:
            tid, rname, res, cat, secs, det = line.rstrip("\n").split("\t")
            if tid not in rows:
                order.append(tid)
                rows[tid] = {}
            rows[tid][rname] = (res, cat, float(secs), det)
    names = [r[0] for r in meta["runtimes"]]
    host = [t for t in order if next(iter(rows[t].values()))[0] != "NOT-RUN"]
    ref = "libgomp" if "libgomp" in names else None

    def res(t, r):
        return rows[t].get(r, ("MISSING", "", 0.0, ""))

    ref_fail = {t for t in host if ref and res(t, ref)[0] == "FAIL"}
    unsup = [t for t in host if res(t, names[0])[0] == "UNSUPPORTED"]
    cfail = [t for t in host if res(t, names[0])[0] == "COMPILE-FAIL"]
    nolib = [t for t in host if any(res(t, r)[3] == NO_LIBGOMP for r in names)]
    fortran_files = {t.split(" ")[0] for t in host if t.startswith("fortran/")}
    md = [f"# libgomp's testsuite (GCC 12.2): {len(names)} runtime(s)", "",
          f"{len(host)} host run tests selected ({len(fortran_files)} Fortran files at their "
          f"optimisation levels count once per level); {len(order) - len(host)} compile-only "
          f"tests not counted. Compiler: {meta['compiler']}; sanitizer: {meta['sanitize']}; "
          f"timeout {meta['timeout']:g} s x {meta['timeout_factor']:g}; -j {meta['jobs']}; "
          f"wall time {meta['wall_seconds']} s"
          + (f"; subset {meta['subset']}" if meta["subset"] else "") + ".", "",
          f"{len(nolib)} of the run tests do not load libgomp.so.1 (GCC links it as needed "
          "and they call nothing of it): they pass or fail alike on every runtime.", "",
          "| runtime | libgomp.so.1 | host tests | unsupported | compile-fail | run | passed |"
          " failed | of which libgomp fails too |",
          "|---|---|---|---|---|---|---|---|---|"]
    unexpected = 0
    for rname, folder, real in meta["runtimes"]:
        run = [t for t in host if res(t, rname)[0] in ("PASS", "FAIL")]
        failed = [t for t in run if res(t, rname)[0] == "FAIL"]
        also = sum(1 for t in failed if t in ref_fail)
        if ref is None or rname != ref:
            unexpected += len(failed) - also
        md.append(f"| {rname} | `{real}` | {len(host)} | {len(unsup)} | {len(cfail)} | "
                  f"{len(run)} | {len(run) - len(failed)} | {len(failed)} | "
                  f"{also if ref and rname != ref else '-'} |")
    parts = []
    for t in host:
        if part_of(t) not in parts:
            parts.append(part_of(t))
    md += ["", "Passed / run, by part:", "",
           "| part | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for p in parts:
        cells = []
        for r in names:
            run = [t for t in host if part_of(t) == p and res(t, r)[0] in ("PASS", "FAIL")]
            cells.append(f"{sum(1 for t in run if res(t, r)[0] == 'PASS')} / {len(run)}")
        md.append(f"| {p} | " + " | ".join(cells) + " |")
    for rname in names:
        failed = [t for t in host if res(t, rname)[0] == "FAIL"]
        cats = {}
        for t in failed:
            c = res(t, rname)[1]
            c = c.split(":")[0] if c.startswith("exit:") else c
            cats[c] = cats.get(c, 0) + 1
        md += ["", f"## {rname}: {len(failed)} failures", "",
               "By cause: " + (", ".join(f"{k} {v}" for k, v in sorted(cats.items())) or "none")
               + " (load: refused to load or a symbol missing; abort: SIGABRT, the test's own "
               "check of a result; abort:runtime: the runtime stopped with a message (an "
               "unsupported feature, its own assertion); crash: another signal; exit: a non-zero "
               "status; wrong-output: dg-output not matched; timeout; tsan: a "
               "ThreadSanitizer report).", ""]
        if failed:
            md += ["| test | cause | libgomp fails too | what it said |", "|---|---|---|---|"]
            for t in failed:
                _, cat, _, det = res(t, rname)
                md.append(f"| `{t}` | {cat} | {'yes' if t in ref_fail else ''} | "
                          f"{det.replace('|', '/')[:120]} |")
    if cfail:
        md += ["", "## Compile failures (system compiler)", ""]
        md += [f"- `{t}`: {res(t, names[0])[3][:150]}" for t in cfail]
    if unsup:
        md += ["", f"## Unsupported here: {len(unsup)}", ""]
        md += [f"- `{t}`: {res(t, names[0])[3]}" for t in unsup]
    with open(os.path.join(outdir, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    return unexpected + len(cfail), md


# ------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runtime", action="append", default=[], metavar="SPEC",
                    help="libgomp (the system's), libomp (LLVM's as libgomp.so.1), or a "
                         "folder holding libgomp.so.1; NAME=SPEC names it; repeatable "
                         "(default: libgomp)")
    ap.add_argument("--subset", metavar="FILE",
                    help="run only the tests listed (one id a line, # comments; an id without "
                         "the Fortran optimisation level takes every level)")
    ap.add_argument("--only", metavar="GLOB", action="append", default=[],
                    help="run only test ids matching GLOB (repeatable)")
    ap.add_argument("--lang", action="append", choices=sorted(DIRS), default=[],
                    help="only this part of the suite (repeatable; default all)")
    ap.add_argument("--list", action="store_true",
                    help="list the selected tests with their kind and flags, run nothing")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per run (default 60)")
    ap.add_argument("--timeout-factor", type=float, default=1.0,
                    help="multiplies every timeout, the tests' own included")
    ap.add_argument("--sanitize", choices=["thread", "address"],
                    help="compile with -fsanitize=...; thread: the C tests only")
    ap.add_argument("--out", metavar="DIR", default="build/gomp-suite",
                    help="results folder (results.tsv, summary.md, logs/)")
    ap.add_argument("--cache", metavar="DIR", default=None,
                    help="cache folder (default ${XDG_CACHE_HOME:-~/.cache}/ultrapool)")
    ap.add_argument("--summarize", metavar="DIR",
                    help="write DIR/summary.md again from DIR/results.tsv and run.json")
    ap.add_argument("--self-test", action="store_true", help="check the directive parser")
    ap.add_argument("--check-args", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if args.summarize:
        unexpected, md = summarize(args.summarize)
        print("\n".join(md[:12]))
        return 1 if unexpected else 0
    if args.jobs < 1 or args.timeout <= 0 or args.timeout_factor <= 0:
        ap.error("-j, --timeout and --timeout-factor must be positive")
    if args.subset and not os.path.isfile(args.subset):
        ap.error(f"no subset file {args.subset}")
    for spec in args.runtime:
        path = spec.split("=", 1)[-1]
        if path not in ("libgomp", "libomp") and \
                not os.path.exists(os.path.join(path, "libgomp.so.1")):
            ap.error(f"--runtime {spec}: not libgomp, libomp or a folder holding libgomp.so.1")
    if args.check_args:
        return 0

    for tool in ("gcc", "g++", "gfortran"):
        if not shutil.which(tool):
            die_skip(f"{tool} is missing (scripts/setup test installs it)")
    cache = os.path.abspath(args.cache or cache_root())
    suite = fetch_sources(cache)
    target = Target()
    langs = args.lang or (["c"] if args.sanitize == "thread" else sorted(DIRS))
    tests = discover(suite, target, langs)
    if args.subset:
        try:
            with open(args.subset) as f:
                wanted = [l.split("#", 1)[0].strip() for l in f]
        except OSError as e:
            sys.exit(f"gomp_suite: {e}")
        wanted = {w for w in wanted if w}
        # A name is checked against every part, so that --lang (or the
        # thread sanitizer's C only) can narrow a subset that lists others.
        every = tests if set(langs) == set(DIRS) else discover(suite, target, sorted(DIRS))
        known = {t.id for t in every} | {t.base for t in every}
        missing = sorted(w for w in wanted if w not in known)
        if missing:
            sys.exit("gomp_suite: the subset names unknown tests: " + ", ".join(missing))
        tests = [t for t in tests if t.id in wanted or t.base in wanted]
    if args.only:
        tests = [t for t in tests if any(fnmatch.fnmatchcase(t.id, g) for g in args.only)]
    if args.list:
        for t in tests:
            print(f"{t.id}\t{t.kind}\t{t.why or t.flags()}"
                  + (f"\tenv {t.env}" if t.env else ""))
        host = [t for t in tests if t.kind != "compile"]
        print(f"# {len(tests)} tests: {len(host)} host run tests "
              f"({sum(1 for t in host if t.kind == 'unsupported')} unsupported here), "
              f"{len(tests) - len(host)} compile-only", file=sys.stderr)
        return 0
    if not tests:
        print("gomp_suite: no test selected (see --list)", file=sys.stderr)
        return 2
    if target.unknown:
        print("gomp_suite: unknown target names, taken as false: "
              + ", ".join(sorted(target.unknown)), file=sys.stderr)

    outdir = os.path.abspath(args.out)
    os.makedirs(outdir, exist_ok=True)
    runtimes = prepare_runtimes(args.runtime or ["libgomp"], outdir)
    for rname, _ in runtimes:
        ld = os.path.join(outdir, "logs", rname)
        shutil.rmtree(ld, ignore_errors=True)
        os.makedirs(ld)
    builder = Builder(os.path.join(cache, "gomp-suite-bin", args.sanitize or "plain"),
                      args.sanitize, False)
    builder.quadmath = subprocess.run(
        ["gfortran", "-x", "f95", "-", "-o", os.devnull, "-lquadmath"],
        input="end\n", text=True, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL).returncode == 0

    todo = [t for t in tests if t.kind == "run"]
    results, compile_fail = {}, {}
    lock = threading.Lock()
    done = [0]
    t0 = time.monotonic()
    print(f"gomp_suite: {len(todo)} tests to run on {', '.join(n for n, _ in runtimes)} "
          f"(-j {args.jobs}); results in {outdir}", file=sys.stderr)

    def job(t):
        binary, log = builder.build(t)
        local = {}
        if binary:
            for rname, folder in runtimes:
                local[(t.id, rname)] = run_one(t, binary, rname, folder, args,
                                               os.path.join(outdir, "logs", rname))
        with lock:
            if not binary:
                compile_fail[t.id] = log.strip().splitlines()[-1][:200] if log.strip() else "?"
                with open(os.path.join(outdir, "logs", "compile-" +
                                       re.sub(r"[^A-Za-z0-9_.+-]+", "_", t.id) + ".log"),
                          "w") as f:
                    f.write(log)
            results.update(local)
            done[0] += 1
            bad = [f"{r}:{v[1]}" for (_, r), v in local.items() if v[0] != "PASS"]
            if bad or not binary or done[0] % 50 == 0:
                print(f"[{done[0]}/{len(todo)} {time.monotonic() - t0:.0f}s] {t.id}: "
                      + ("COMPILE-FAIL" if not binary else " ".join(bad) or "ok"),
                      file=sys.stderr, flush=True)

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        for fut in [ex.submit(job, t) for t in todo]:
            fut.result()
    unexpected, md = write_report(outdir, tests, runtimes, results, compile_fail, args,
                                  time.monotonic() - t0)
    print("\n".join(md[:9 + len(runtimes)]))
    print(f"gomp_suite: wrote {outdir}/results.tsv and summary.md")
    return 1 if unexpected else 0


def self_test():
    """Checks the directive reader on made-up lines (no testsuite needed)."""
    ok = True

    def check(what, got, want):
        nonlocal ok
        if got != want:
            ok = False
            print(f"self-test: {what}: got {got!r}, want {want!r}")

    check("quoted", tcl_words(r'"a\[b\]\n" {x {y}} z'), ["a[b]\n", "x {y}", "z"])
    m = DIRECTIVE.search('/* { dg-additional-options "-mavx" { target avx_runtime } } */')
    check("directive", (m.group(1), tcl_words(m.group(2))),
          ("dg-additional-options", ["-mavx", " target avx_runtime "]))
    t = Target()
    t.et.update(a=True, b=False)
    check("list", t.expr("b a"), True)
    check("and-not", t.expr("a && { ! b }"), True)
    check("nested", t.expr("{ b a } && b"), False)
    check("triplet", t.expr("*-*-linux*"), True)
    check("selector", t.selector(" target { a && b } "), ("target", False))
    check("flags", flags_match(["-O0", "-O2"], "-O3 -g"), False)
    check("flags2", flags_match(["*"], ""), True)
    # A made-up test file read as the harness reads a real one.
    with tempfile.TemporaryDirectory() as d:
        def read(exp, text, torture=None):
            with open(os.path.join(d, "t.c"), "w") as f:
                f.write(text)
            return read_test(Test(exp, d, "t.c", torture), t)
        r = read("c", '/* { dg-set-target-env-var OMP_X "a b" } */\n'
                      '/* { dg-additional-options "-DZ" } */\n/* { dg-shouldfail "" } */\n'
                      '/* { dg-output "x\\[\\n" } */\n')
        check("run by default", (r.kind, r.flags(), r.env, r.shouldfail, r.output),
              ("run", "-O2 -DZ", {"OMP_X": "a b"}, True, "x[\n"))
        r = read("c", '/* { dg-do run } */\n/* { dg-options "-O0" } */\n'
                      '/* { dg-additional-options "-DY" { target b } } */\n')
        check("options replace -O2", r.flags(), "-O0")
        check("compile only", read("c", "// { dg-do compile }\n").kind, "compile")
        check("target of dg-do", read("c", "// { dg-do run { target b } }\n").kind,
              "unsupported")
        check("require", read("c", "// { dg-require-effective-target b }\n").kind,
              "unsupported")
        skip = '! { dg-skip-if "" { a } { "*" } { "-O2" } }\n'
        check("skip-if at -O0", read("fortran", skip, "-O0").kind, "unsupported")
        check("skip-if at -O2", read("fortran", skip, "-O2").kind, "run")
        check("c selector", read("c++", "// { dg-do run { target c } }\n").kind,
              "unsupported")
    check("abort", classify(-6, "", False), "abort")
    check("runtime abort", classify(-6, "x\nOMP: Error #1: no", False), "abort:runtime")
    check("test's assert", classify(-6, "a.out: t.c:3: f: Assertion `0' failed.", False),
          "abort")
    check("segv", classify(-11, "", False), "crash:SIGSEGV")
    check("load", classify(127, "a.out: x.so: version `GOMP_5.1' not found", False), "load")
    check("exit", classify(3, "", False), "exit:3")
    check("output", output_matches("a(\n|\r)+b", "xa\n\nb"), True)
    print("self-test: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
