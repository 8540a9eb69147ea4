# cffi cannot declare its extension in pyproject.toml yet (python-cffi/cffi#55); this is
# the only thing setup.py is for. Everything else lives in pyproject.toml.
from setuptools import setup

setup(cffi_modules=["kernels/build_core.py:ffibuilder"])
