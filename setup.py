"""pip install of the Python module (docs/PYTHON.md): setuptools runs CMake on this checkout and
builds only the module's target (tracegate._tracegate, python/CMakeLists.txt) for the interpreter
running pip; nothing is downloaded (build-time dependencies are Debian packages: ci/deps.sh).

    /usr/bin/python3 -m venv --system-site-packages .venv    # Debian's numpy, pandas, torch
    .venv/bin/pip install --no-build-isolation .

--no-build-isolation: pip would otherwise fetch setuptools into a fresh environment to build in.
TRACEGATE_BUILD_JOBS sets the compile jobs (default: the CPU count).
"""

import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(tracegate VERSION ([0-9.]+)", f.read()).group(1)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.path.join(os.path.abspath(self.build_temp), "cmake")
        jobs = os.environ.get("TRACEGATE_BUILD_JOBS") or str(os.cpu_count() or 2)
        subprocess.run(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DTRACEGATE_BUILD_TESTS=OFF",
                        "-DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON", f"-DPython3_EXECUTABLE={sys.executable}"],
                       check=True)
        subprocess.run(["cmake", "--build", build, "--target", "tracegate_python", "-j", jobs], check=True)
        built = os.path.join(build, "python", "tracegate")
        module = next((f for f in os.listdir(built) if f.startswith("_tracegate") and f.endswith(".so")), None)
        if module is None:
            raise RuntimeError(f"CMake built no tracegate/_tracegate*.so in {built}: are python3-dev and pybind11-dev "
                               "installed? (see the configure messages above)")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(built, module), target)


setup(
    name="tracegate",
    version=version(),
    description="Where GPU inference time goes, and a CI gate for it: the tracegate engine from Python",
    packages=["tracegate"],
    package_dir={"": "python"},
    ext_modules=[CMakeExtension("tracegate._tracegate")],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.8",
    install_requires=["numpy", "pandas"],
    zip_safe=False,
    # setuptools' own build directories under build/pip, apart from a CMake build in build/.
    options={"build": {"build_base": os.path.join("build", "pip")}},
)
