"""PEP 517 backend for the adapter: setuptools' own, run in a temporary copy of the package folder,
because setuptools writes build/ and tunebench.egg-info next to the sources it builds."""

import functools
import os
import shutil
import tempfile

from setuptools import build_meta as _setuptools

_FILES = ("pyproject.toml",)
_PACKAGES = ("tunebench",)


def _in_a_copy(hook):
    @functools.wraps(hook)
    def run(*args, **kwargs):
        # Output folders are given relative to the caller's directory; fix them before moving.
        args = [os.path.abspath(a) if isinstance(a, str) else a for a in args]
        kwargs = {k: os.path.abspath(v) if k.endswith("_directory") and isinstance(v, str) else v for k, v in kwargs.items()}
        source = os.getcwd()
        with tempfile.TemporaryDirectory(prefix="tunebench-build-") as copy:
            for name in _FILES:
                shutil.copy2(os.path.join(source, name), copy)
            for name in _PACKAGES:
                shutil.copytree(os.path.join(source, name), os.path.join(copy, name), ignore=shutil.ignore_patterns("__pycache__"))
            os.chdir(copy)
            try:
                return hook(*args, **kwargs)
            finally:
                os.chdir(source)

    return run


get_requires_for_build_wheel = _setuptools.get_requires_for_build_wheel
get_requires_for_build_sdist = _setuptools.get_requires_for_build_sdist
prepare_metadata_for_build_wheel = _in_a_copy(_setuptools.prepare_metadata_for_build_wheel)
build_wheel = _in_a_copy(_setuptools.build_wheel)
build_sdist = _in_a_copy(_setuptools.build_sdist)
