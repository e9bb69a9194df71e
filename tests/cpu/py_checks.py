"""py_checks.py - what the cpu suite's Python tests share: a module loaded from the path meson
passes (registered under its name, as an import would), and check lines counted into the exit
status (0 when every check held)."""
import importlib.util
import sys

failures = 0


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Dynamo, pickle and friends look a function's module up by name
    spec.loader.exec_module(module)
    return module


def check(cond, what):
    global failures
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    failures += 0 if cond else 1


def finish():
    print("%d failure(s)" % failures)
    sys.exit(1 if failures else 0)
