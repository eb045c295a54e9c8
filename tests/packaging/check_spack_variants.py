#!/usr/bin/env python3
"""Checks that the Spack recipe (packaging/spack/package.py) and the
project's CMake options are in step.

It reads every UP_* option the CMake files declare (option(),
up_dep_option(), cmake_dependent_option() and set(... CACHE <type> ...)
other than INTERNAL ones) and every name the recipe passes to
define_from_variant() or define(), and fails, naming each problem, when

  - an option is neither mapped by the recipe nor listed in NOT_VARIANTS
    below (a new option the recipe has not caught up with);
  - the recipe maps a name that no CMake file declares (a removed or
    misspelt option);
  - an option is both mapped to a variant and listed in NOT_VARIANTS;
  - NOT_VARIANTS names an option that CMake no longer declares;
  - an option listed as "pin" is not set with define() in cmake_args (left
    to CMake, AUTO would pick up whatever the build machine has);
  - define_from_variant() names a variant the recipe does not declare, or
    a declared variant maps no option.

The recipe is read with Python's ast module, never imported: Spack's API is
not needed. Exit status: 0 in step, 1 out of step, 2 on a usage error.
"""

import argparse
import ast
import os
import re
import sys

# The UP_* options that are deliberately not variants, each with what the
# recipe does with it and why. "pin": the recipe must set it with define()
# in cmake_args; "default": the recipe leaves CMake's default, which does
# not depend on what the build machine has.
NOT_VARIANTS = {
    "UP_BUILD_TESTS": (
        "pin",
        "follows `spack install --test` (self.run_tests), Spack's own switch for tests",
    ),
    "UP_BUILD_EXPERIMENTS": (
        "pin",
        "the benchmarks: nothing of them is installed, and they need Go, oneTBB, GLib ...",
    ),
    "UP_BUILD_KERNELS": (
        "pin",
        "the benchmark kernels (zlib, OpenSSL) serve the benchmarks and their tests; "
        "not installed",
    ),
    "UP_WITH_PAPI": (
        "pin",
        "reads PAPI counters in the benchmarks and the SDE test only; no installed file "
        "uses it (the recipe turns it on with +sde, which depends on PAPI anyway)",
    ),
    "UP_WITH_LIKWID": (
        "pin",
        "likwid marker regions in the benchmarks only; no installed file uses it",
    ),
    "UP_WERROR": (
        "default",
        "a developer's switch: a warning from a newer compiler must not fail a site's install",
    ),
    "UP_SANITIZE": (
        "default",
        "sanitizer builds are for the test matrix; instrumented libraries are not for installing",
    ),
    "UP_PARKER": (
        "default",
        "forces the portable parker where a faster one exists, to test that path; "
        "auto picks the right one for the platform",
    ),
    "UP_FIBER": (
        "default",
        "forces the portable ucontext switch, to test that path; auto picks the right one",
    ),
    "UP_BUILD_FUZZ": (
        "default",
        "libFuzzer targets for development (clang only); nothing installed",
    ),
    "UP_CONSUMER_SHARED_ONLY": (
        "default",
        "an option of tests/consumer, the separate project that test_install_consumer builds",
    ),
    "UP_CONSUMER_PKGCONFIG": (
        "default",
        "an option of tests/consumer, the separate project that test_install_consumer builds",
    ),
}

# CMake commands that declare an option whose name is their first argument.
OPTION_COMMANDS = ("option", "up_dep_option", "cmake_dependent_option")

SKIP_DIRS = {".git", "__pycache__"}


def cmake_files(root):
    """Every CMakeLists.txt and *.cmake under root, build and install trees
    at the top level left out."""
    for top, dirs, files in os.walk(root):
        rel = os.path.relpath(top, root)
        keep = []
        for d in sorted(dirs):
            if d in SKIP_DIRS:
                continue
            if rel == "." and (d.startswith("build") or d.startswith("install")):
                continue
            keep.append(d)
        dirs[:] = keep
        for f in sorted(files):
            if f == "CMakeLists.txt" or f.endswith(".cmake"):
                yield os.path.join(top, f)


def strip_comments(text):
    """CMake text with its # comments blanked (not inside quoted arguments),
    lengths and line breaks kept so that offsets still give line numbers."""
    out = []
    in_quote = False
    in_comment = False
    prev = ""
    for ch in text:
        if in_comment:
            if ch == "\n":
                in_comment = False
                out.append(ch)
            else:
                out.append(" ")
        elif ch == '"' and prev != "\\":
            in_quote = not in_quote
            out.append(ch)
        elif ch == "#" and not in_quote:
            in_comment = True
            out.append(" ")
        else:
            out.append(ch)
        prev = ch
    return "".join(out)


COMMAND_RE = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
ARG_RE = re.compile(r'"(?:[^"\\]|\\.)*"|[^\s()]+')


def command_args(text, start):
    """The arguments of the command whose '(' is at text[start - 1], up to
    its matching ')'."""
    depth = 1
    i = start
    while i < len(text) and depth:
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
        elif text[i] == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j
        i += 1
    return [a.strip('"') for a in ARG_RE.findall(text[start : i - 1])]


def cmake_options(root):
    """{name: [where, ...]} of every UP_* option or non-internal cache
    variable the CMake files declare."""
    found = {}
    for path in cmake_files(root):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = strip_comments(f.read())
        for m in COMMAND_RE.finditer(text):
            cmd = m.group(1).lower()
            if cmd not in OPTION_COMMANDS and cmd != "set":
                continue
            args = command_args(text, m.end())
            if not args or not args[0].startswith("UP_"):
                continue
            if cmd == "set":
                if "CACHE" not in args:
                    continue
                k = args.index("CACHE")
                if k + 1 >= len(args) or args[k + 1].upper() == "INTERNAL":
                    continue
            line = text.count("\n", 0, m.start()) + 1
            where = "%s:%d" % (os.path.relpath(path, root), line)
            found.setdefault(args[0], []).append(where)
    return found


def string_arg(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def recipe_names(path):
    """What the recipe declares and maps: (variants, mapped, pinned), where
    variants is {variant: line}, mapped {option: (variant, line)} from
    define_from_variant() and pinned {option: line} from define()."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    variants, mapped, pinned = {}, {}, {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        first = string_arg(node.args[0])
        if first is None:
            continue
        if name == "variant" and isinstance(func, ast.Name):
            variants[first] = node.lineno
        elif name == "define_from_variant" and first.startswith("UP_"):
            # define_from_variant(NAME) alone means the variant name.lower().
            variant = string_arg(node.args[1]) if len(node.args) > 1 else first.lower()
            mapped[first] = (variant, node.lineno)
        elif name == "define" and first.startswith("UP_"):
            pinned[first] = node.lineno
    return variants, mapped, pinned


# Options of tests/consumer, a project of its own: the package build never
# sees them.
NOT_PROJECT_OPTIONS = {"UP_CONSUMER_PKGCONFIG", "UP_CONSUMER_SHARED_ONLY"}


def check_debian_rules(root, rules_path):
    """Every project option named in debian/rules with -D<NAME>=, so that no
    AUTO option follows what the build machine happens to have, and no
    name there that CMake does not declare. Returns the exit status."""
    declared = cmake_options(root)
    with open(rules_path, encoding="utf-8") as f:
        named = set(re.findall(r"-D(UP_[A-Z0-9_]+)=", f.read()))
    problems = [
        "%s (declared at %s) is not set in %s" % (opt, ", ".join(declared[opt]), rules_path)
        for opt in sorted(set(declared) - named - NOT_PROJECT_OPTIONS)
    ]
    problems += [
        "%s sets %s, which no CMake file declares" % (rules_path, opt)
        for opt in sorted(named - set(declared))
    ]
    if problems:
        print("FAIL: debian/rules and the CMake options are out of step:")
        for p in problems:
            print("  - " + p)
        return 1
    print("ok: debian/rules sets all %d project options" % len(set(declared) - NOT_PROJECT_OPTIONS))
    return 0


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(
        description="Check that packaging/spack/package.py maps every CMake option it should."
    )
    ap.add_argument(
        "--source-dir",
        default=os.path.dirname(os.path.dirname(here)),
        help="the project's source tree (default: two folders above this script)",
    )
    ap.add_argument(
        "--recipe", help="the Spack recipe (default: <source-dir>/packaging/spack/package.py)"
    )
    ap.add_argument(
        "--debian-rules",
        metavar="PATH",
        help="check instead that this debian/rules names every option with -D<NAME>=",
    )
    ap.add_argument("-v", "--verbose", action="store_true", help="list every option and its fate")
    args = ap.parse_args(argv)

    root = os.path.abspath(args.source_dir)
    if args.debian_rules:
        if not os.path.isfile(args.debian_rules):
            ap.error("no rules file at %s" % args.debian_rules)
        return check_debian_rules(root, args.debian_rules)
    recipe = args.recipe or os.path.join(root, "packaging", "spack", "package.py")
    if not os.path.isfile(os.path.join(root, "CMakeLists.txt")):
        ap.error("no CMakeLists.txt in %s" % root)
    if not os.path.isfile(recipe):
        ap.error("no recipe at %s" % recipe)
    rel_recipe = os.path.relpath(recipe, root)

    declared = cmake_options(root)
    variants, mapped, pinned = recipe_names(recipe)
    problems = []

    for opt in sorted(declared):
        if opt not in mapped and opt not in NOT_VARIANTS:
            problems.append(
                "%s (declared at %s) has no variant: map it in %s with "
                "define_from_variant, or list it in NOT_VARIANTS with the reason"
                % (opt, ", ".join(declared[opt]), rel_recipe)
            )
    for opt in sorted(mapped):
        variant, line = mapped[opt]
        if opt not in declared:
            problems.append(
                "%s:%d maps %s, which no CMake file declares" % (rel_recipe, line, opt)
            )
        if opt in NOT_VARIANTS:
            problems.append(
                "%s:%d maps %s to a variant, but NOT_VARIANTS says it is not one"
                % (rel_recipe, line, opt)
            )
        if variant not in variants:
            problems.append(
                "%s:%d maps %s to variant '%s', which the recipe does not declare"
                % (rel_recipe, line, opt, variant)
            )
    used = {v for v, _ in mapped.values()}
    for variant in sorted(variants):
        if variant not in used:
            problems.append(
                "%s:%d declares variant '%s', which maps no CMake option"
                % (rel_recipe, variants[variant], variant)
            )
    for opt in sorted(pinned):
        if opt not in declared:
            problems.append(
                "%s:%d sets %s, which no CMake file declares" % (rel_recipe, pinned[opt], opt)
            )
    for opt in sorted(NOT_VARIANTS):
        how, _ = NOT_VARIANTS[opt]
        if opt not in declared:
            problems.append(
                "NOT_VARIANTS lists %s, which no CMake file declares any more" % opt
            )
        elif how == "pin" and opt not in pinned and opt not in mapped:
            problems.append(
                "%s must be set with define() in %s: left to CMake it would follow "
                "what the build machine has" % (opt, rel_recipe)
            )

    if args.verbose or problems:
        for opt in sorted(declared):
            if opt in mapped:
                fate = "variant '%s'" % mapped[opt][0]
            elif opt in NOT_VARIANTS:
                how, why = NOT_VARIANTS[opt]
                fate = "not a variant (%s): %s" % (
                    "pinned" if opt in pinned else "CMake's default",
                    why,
                )
            else:
                fate = "MISSING"
            print("  %-24s %s" % (opt, fate))
    if problems:
        print("FAIL: %s and the CMake options are out of step:" % rel_recipe)
        for p in problems:
            print("  - " + p)
        return 1
    print(
        "ok: %d CMake options: %d mapped to variants, %d deliberately not variants"
        % (len(declared), len(mapped), len(declared) - len(mapped))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
