# Sourced by the tools/device_run*.sh scripts on the GPU machine: the carried libraries on the
# loader path (OpenBLAS unpacked first, see device_build.sh), NVLink multicast off, results in $OUT.
OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT"
if [ -f .carry/dev/lib/libopenblas.so.0.xz ] && [ ! -f .carry/dev/lib/libopenblas.so.0 ]; then
  xz -dk .carry/dev/lib/libopenblas.so.0.xz
fi
export LD_LIBRARY_PATH="$PWD/.carry/dev/lib:${LD_LIBRARY_PATH:-}" ZT_SOURCE_DIR="$PWD" PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
bin="$PWD/.carry/dev/bin"
commit="${ZT_COMMIT:-unknown}"
