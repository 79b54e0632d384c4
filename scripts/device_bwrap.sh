# Sourced by the device scripts: kernels run in the bubblewrap sandbox, and the device image has no bwrap. Unless
# CUDAMASTER_HARNESS__SANDBOX_BWRAP is set or bwrap is on PATH, .devsite/bubblewrap_*.deb (carried from
# scripts/make_device_wheels.sh) is unpacked to /tmp/bw and the variable points at it; without the .deb it says so
# (kernels will then be refused) on stderr and in $1 when given.
if [ -z "${CUDAMASTER_HARNESS__SANDBOX_BWRAP:-}" ] && ! command -v bwrap >/dev/null; then
  _bwrap_deb=$(ls .devsite/bubblewrap_*.deb 2>/dev/null | head -1)
  if [ -n "$_bwrap_deb" ]; then
    rm -rf /tmp/bw && dpkg -x "$_bwrap_deb" /tmp/bw && export CUDAMASTER_HARNESS__SANDBOX_BWRAP=/tmp/bw/usr/bin/bwrap
  else
    echo "no bubblewrap: carry .devsite/ (scripts/make_device_wheels.sh); kernels will be refused" | tee -a "${1:-/dev/null}" >&2
  fi
fi
