#!/usr/bin/env bash
# Installs the Debian packages tracegate needs, when any is missing. Sourced by ci/test.sh
# and ci/quickstart.sh; safe to run again (it only installs what is absent).
#   tracegate_install_deps        what building and running tracegate needs
#   tracegate_install_deps test   that, plus what the tests need (JSON Schema validator,
#                                 headless Chromium for the HTML report test, clang for the
#                                 libFuzzer and sanitizer builds, and the Python module's build
#                                 and tests: pybind11, Python headers, numpy, pandas, pytest, and
#                                 PyTorch for the torch.profiler tests; python3-torch is the
#                                 large one: 166 packages with its dependencies, 25 s to install
#                                 on the 2-core machine, against 9 s for the other five)
#   tracegate_install_deps format clang-format alone (git clang-format: ci/format_check.sh)
#   tracegate_install_deps slurm  Slurm 22.05's controller, node daemon and clients, and munge,
#                                 alone (tests/cli/job/slurm_job.sh runs a one-node cluster with them;
#                                 it starts the daemons itself with its own configuration)
tracegate_install_deps() {
  local pkgs=(cmake g++ make pkg-config nlohmann-json3-dev libcli11-dev libsqlite3-dev
              libbenchmark-dev libgtest-dev libgmock-dev libsimdjson-dev zlib1g-dev sqlite3 python3)
  if [ "${1:-}" = format ]; then
    pkgs=(clang-format git)
  fi
  if [ "${1:-}" = slurm ]; then
    pkgs=(slurmctld slurmd slurm-client munge)
  fi
  if [ "${1:-}" = test ]; then
    pkgs+=(python3-jsonschema chromium fonts-liberation clang clang-format
           python3-dev python3-pybind11 pybind11-dev python3-numpy python3-pandas python3-pytest python3-torch)
  fi
  local missing=()
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "ci: installing missing Debian packages: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
